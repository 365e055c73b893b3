"""Ground costs side by side: time per Sinkhorn iteration of each of birkhoff's costs against its
squared Euclidean kernel, and of the p = 1 cost against POT (float32, log domain) and GeomLoss
(online, KeOps on the CPU, when pykeops is installed), in one process run.

Every method runs the same fixed number of iterations at one epsilon (no annealing, no early
stop). Time per iteration is (T(k) - T(1)) / (k - 1), so set-up (POT's cost matrix, KeOps'
compilation) is not counted. One independent check follows: the relative L1 error of the
column marginal, computed in float64 from each method's own potentials. Prints the machine's
load average with each row (the project machines are shared).

    python bench/python/bench_costs.py [--n 10000] [--dims 3 64] [--iterations 20]
"""

from __future__ import annotations

import argparse
import importlib
import os
import time

import numpy as np

import birkhoff

COSTS = [
    ("sqeuclidean", {}),
    ("euclidean (p = 1)", {"cost": "euclidean"}),
    ("euclidean (p = 1.5)", {"cost": "euclidean", "p": 1.5}),
    ("cosine", {"cost": "cosine"}),
]


def per_iteration(run, iters):
    """(T(iters) - T(1)) / (iters - 1), each the best of two runs, and the last result."""
    times = {}
    out = None
    for k in (1, iters):
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            out = run(k)
            best = min(best, time.perf_counter() - t0)
        times[k] = best
    return (times[iters] - times[1]) / (iters - 1), out


def cost_matrix(x, y, kw):
    """The float64 cost matrix of a cost's keywords, written independently of birkhoff."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    if kw.get("cost") == "cosine":
        xn = x / np.linalg.norm(x, axis=1, keepdims=True)
        yn = y / np.linalg.norm(y, axis=1, keepdims=True)
        return 1.0 - xn @ yn.T
    sq = (x**2).sum(1)[:, None] + (y**2).sum(1)[None, :] - 2.0 * x @ y.T
    sq = np.maximum(sq, 0.0)
    if kw.get("cost") == "euclidean":
        return sq ** (0.5 * kw.get("p", 1))
    return sq


def column_error(f, g, a, b, C, eps):
    """Relative L1 error of the plan's column marginal, from potentials (f, g), in float64."""
    logp = (f[:, None] + g[None, :] - C) / eps + np.log(a)[:, None] + np.log(b)[None, :]
    return float(np.abs(np.exp(logp).sum(0) - b).sum() / b.sum())


def ours(x, y, a, b, eps, kw):
    blur = eps ** (1.0 / kw.get("p", 1 if kw.get("cost") == "euclidean" else 2))

    def run(k):
        return birkhoff.sinkhorn(x, y, a, b, blur=blur, iterations=k, warn=False, **kw)

    return run


def pot_run(x, y, a, b, eps, C):
    import ot

    M = C.astype(np.float32)

    def run(k):
        _, log = ot.sinkhorn(
            a, b, M, eps, method="sinkhorn_log", numItermax=k, stopThr=0.0, log=True
        )
        return log

    return run


def geomloss_run(x, y, a, b, eps):
    import geomloss
    import torch

    schedule = importlib.import_module("geomloss._legacy.sinkhorn_divergence")
    original = schedule.epsilon_schedule
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    at, bt = torch.from_numpy(a), torch.from_numpy(b)

    def run(k):
        schedule.epsilon_schedule = lambda p, d, bl, s: [eps] * k
        try:
            loss = geomloss.SamplesLoss(
                "sinkhorn", p=1, blur=eps, debias=False, potentials=True, backend="online"
            )
            f, g = loss(at, xt, bt, yt)
        finally:
            schedule.epsilon_schedule = original
        return f.numpy().reshape(-1), g.numpy().reshape(-1)  # GeomLoss returns (1, n)

    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--dims", type=int, nargs="+", default=[3, 64])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--peers", nargs="+", default=["pot", "geomloss"])
    args = p.parse_args()
    n, iters = args.n, args.iterations
    print(f"n = m = {n}, {iters} iterations, float32, threads {os.environ.get('OMP_NUM_THREADS')}")
    print("| d | method | ms / iteration | ratio | column marginal error | load |")
    print("| --- | --- | --- | --- | --- | --- |")
    for d in args.dims:
        rng = np.random.default_rng(0)
        x = rng.uniform(0, 1, (n, d)).astype(np.float32)
        y = (rng.uniform(0, 1, (n, d)) + 0.2).astype(np.float32)
        a = np.full(n, 1.0 / n, np.float32)
        b = np.full(n, 1.0 / n, np.float32)
        base = None
        for name, kw in COSTS:
            C = cost_matrix(x, y, kw)
            eps = 0.05 * float(np.median(C[:200, :200]))
            t, r = per_iteration(ours(x, y, a, b, eps, kw), iters)
            err = column_error(r.f.astype(np.float64), r.g.astype(np.float64), a, b, C, eps)
            ratio = "1 (reference)" if base is None else f"{t / base:.2f} vs sqeuclidean"
            base = t if base is None else base
            print(
                f"| {d} | birkhoff {name} | {1e3 * t:.1f} | {ratio} | {err:.2e} | "
                f"{os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            if kw.get("cost") != "euclidean" or "p" in kw:
                continue
            ours_t = t
            for peer in args.peers:
                try:
                    if peer == "pot":
                        tp, log = per_iteration(pot_run(x, y, a, b, eps, C), iters)
                        f = eps * (np.asarray(log["log_u"], np.float64) - np.log(a))
                        g = eps * (np.asarray(log["log_v"], np.float64) - np.log(b))
                        label = "POT sinkhorn_log float32 (p = 1)"
                    else:
                        tp, (f, g) = per_iteration(geomloss_run(x, y, a, b, eps), iters)
                        label = "GeomLoss online, KeOps CPU (p = 1)"
                    err = column_error(f.astype(np.float64), g.astype(np.float64), a, b, C, eps)
                    print(
                        f"| {d} | {label} | {1e3 * tp:.1f} | {tp / ours_t:.1f}x birkhoff | "
                        f"{err:.2e} | {os.getloadavg()[0]:.1f} |",
                        flush=True,
                    )
                except Exception as e:  # noqa: BLE001 (a peer that fails is reported, not fatal)
                    print(f"| {d} | {peer} | failed: {type(e).__name__}: {str(e)[:80]} | | | |")


if __name__ == "__main__":
    main()
