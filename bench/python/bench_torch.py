"""Forward + backward (loss and gradient with respect to x), side by side in one process.

birkhoff.torch vs GeomLoss ``online`` (KeOps on CPU) and ``tensorized`` (where the n x m
matrices fit), and OTT-JAX (``jax.jit(jax.grad(...))`` on the CPU, online point cloud), with
the same epsilon and a fixed number of iterations (no annealing, no early stop); then the
Hessian-vector product against one gradient. Prints a table with ratios and the machine's
load average (the project machines are shared).

    python bench/python/bench_torch.py [--sizes 10000 100000] [--dims 3 64] [--iterations 10]
"""

import argparse
import importlib
import os
import time

import torch

import birkhoff.torch as bt


def timed(fn, repeats):
    fn()  # warm-up (compilation for KeOps / JAX)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def ours(x, y, eps, iters):
    loss = bt.SamplesLoss(blur=eps**0.5, debias=False, iterations=iters)

    def run():
        xr = x.clone().requires_grad_()
        torch.autograd.grad(loss(xr, y), xr)

    return run


def ours_hvp(x, y, eps, iters):
    loss = bt.SamplesLoss(blur=eps**0.5, debias=False, iterations=iters, hvp_max_iter=30)
    v = torch.randn_like(x)

    def run():
        xr = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(loss(xr, y), xr, create_graph=True)
        torch.autograd.grad((g * v).sum(), xr)

    return run


def geomloss_run(x, y, eps, iters, backend):
    import geomloss

    # A fixed epsilon list of `iters` entries: GeomLoss's loop then does iters + 1 sweeps and
    # the extrapolation, as birkhoff's fixed-epsilon symmetric schedule.
    loss = geomloss.SamplesLoss(
        "sinkhorn", p=2, blur=eps**0.5, debias=False, backend=backend, scaling=0.5
    )
    # The module, not the function that geomloss's package namespace exports under its name.
    sinkhorn_divergence = importlib.import_module("geomloss.sinkhorn_divergence")

    original = sinkhorn_divergence.epsilon_schedule
    sinkhorn_divergence.epsilon_schedule = lambda p, d, b, s: [eps] * iters

    def run():
        xr = x.clone().requires_grad_()
        torch.autograd.grad(loss(xr, y), xr)

    run.restore = lambda: setattr(sinkhorn_divergence, "epsilon_schedule", original)
    return run


def ott_run(x, y, eps, iters):
    import jax
    import jax.numpy as jnp
    from ott.geometry import pointcloud
    from ott.problems.linear import linear_problem
    from ott.solvers.linear import sinkhorn

    jax.config.update("jax_enable_x64", False)
    yj = jnp.asarray(y.numpy())
    solver = sinkhorn.Sinkhorn(
        min_iterations=iters, max_iterations=iters, threshold=-1.0, inner_iterations=1
    )

    def value(xj):
        geom = pointcloud.PointCloud(xj, yj, epsilon=2 * eps, batch_size=1024)
        return solver(linear_problem.LinearProblem(geom)).reg_ot_cost

    grad = jax.jit(jax.grad(value))
    xj = jnp.asarray(x.numpy())

    def run():
        grad(xj).block_until_ready()

    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    p.add_argument("--dims", type=int, nargs="+", default=[3, 64])
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--peers", nargs="+", default=["online", "tensorized", "ott"])
    p.add_argument("--tensorized-max", type=int, default=20000)
    args = p.parse_args()
    print(
        f"threads: torch {torch.get_num_threads()}, OMP_NUM_THREADS "
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
    print("| n = m | d | method | forward+backward (s) | ratio to birkhoff | load |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in args.sizes:
        for d in args.dims:
            g = torch.Generator().manual_seed(0)
            x = torch.randn(n, d, generator=g)
            y = torch.randn(n, d, generator=g)
            base = timed(ours(x, y, args.eps, args.iterations), args.repeats)
            print(
                f"| {n} | {d} | birkhoff.torch | {base:.3f} | 1.0 | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            hv = timed(ours_hvp(x, y, args.eps, args.iterations), 1)
            print(
                f"| {n} | {d} | birkhoff.torch gradient + HVP (CG <= 30) | {hv:.3f} | "
                f"{hv / base:.2f} (HVP/gradient cost) | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            for peer in args.peers:
                if peer == "tensorized" and n > args.tensorized_max:
                    print(
                        f"| {n} | {d} | GeomLoss tensorized | skipped (n x m float32 "
                        f"matrices: {n * n * 4 / 2**30:.0f} GiB each) | | |"
                    )
                    continue
                try:
                    if peer == "ott":
                        run = ott_run(x, y, args.eps, args.iterations)
                        name = "OTT-JAX online (jit, grad)"
                    else:
                        run = geomloss_run(x, y, args.eps, args.iterations, peer)
                        name = f"GeomLoss {peer}" + (" (KeOps CPU)" if peer == "online" else "")
                    t = timed(run, 1)
                    if hasattr(run, "restore"):
                        run.restore()
                    print(
                        f"| {n} | {d} | {name} | {t:.3f} | {t / base:.1f} | "
                        f"{os.getloadavg()[0]:.1f} |",
                        flush=True,
                    )
                except Exception as e:  # noqa: BLE001 (a peer that fails is reported, not fatal)
                    print(
                        f"| {n} | {d} | {peer} | failed: {type(e).__name__}: "
                        f"{str(e).splitlines()[0][:80]} | | |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
