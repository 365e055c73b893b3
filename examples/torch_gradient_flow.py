"""Wasserstein gradient flow of a 2-D cloud towards a target shape (GeomLoss's classic demo)
=========================================================================================

Each step moves every point along minus the gradient of the Sinkhorn divergence S(x, y),
scaled by the number of points (x_i <- x_i - lr * N * dS/dx_i), the explicit Euler scheme of
the flow. Writes docs/figures/torch_gradient_flow.png (snapshots) and prints the time per step
of birkhoff.torch and, when installed, GeomLoss (online backend) on the same flow. Then it runs
the same flow on the converged OT_eps loss twice, each step solved from scratch and each step
warm-started from the previous step's potentials (``init=(f, g)``), and prints the Sinkhorn
iterations that the warm start saves.

Run it with::

    python examples/torch_gradient_flow.py [--n 10000] [--steps 40] [--geomloss]
"""

import argparse
import os
import time

import numpy as np
import torch

import birkhoff.torch as bt


def target_shape(n, gen):
    """A ring with a bar through it (the letter theta), n points."""
    t = torch.rand(n, generator=gen) * 2 * np.pi
    ring = torch.stack([0.35 * torch.cos(t), 0.45 * torch.sin(t)], 1)
    bar = torch.stack([torch.rand(n, generator=gen) * 0.7 - 0.35, torch.zeros(n)], 1)
    pick = torch.rand(n, generator=gen) < 0.25
    pts = torch.where(pick[:, None], bar, ring)
    return pts + 0.015 * torch.randn(n, 2, generator=gen) + 0.5


def flow(loss, x0, y, steps, lr, snapshots):
    x = x0.clone().requires_grad_()
    shots, times = {}, []
    for k in range(steps + 1):
        if k in snapshots:
            shots[k] = x.detach().clone()
        if k == steps:
            break
        t0 = time.perf_counter()
        (g,) = torch.autograd.grad(loss(x, y), x)
        times.append(time.perf_counter() - t0)
        with torch.no_grad():
            x -= lr * len(x) * g
    return shots, times


def ot_flow(x0, y, steps, lr, blur, warm):
    """The flow on OT_eps (converge schedule); returns the Sinkhorn iterations per step."""
    x = x0.clone().requires_grad_()
    potentials, iterations = None, []
    for _ in range(steps):
        r = bt.sinkhorn(x, y, blur=blur, init=potentials if warm else None)
        iterations.append(r.iterations)
        (g,) = torch.autograd.grad(r.loss, x)
        potentials = (r.f.detach(), r.g.detach())
        with torch.no_grad():
            x -= lr * len(x) * g
    return iterations


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--blur", type=float, default=0.02)
    p.add_argument("--geomloss", action="store_true", help="also time GeomLoss on the same flow")
    p.add_argument("--output", default="docs/figures/torch_gradient_flow.png")
    args = p.parse_args()
    if args.geomloss:
        try:
            import geomloss  # noqa: F401
            import pykeops  # noqa: F401  (GeomLoss's online backend)
        except ImportError as e:
            p.error(f"--geomloss needs GeomLoss and pykeops (its online backend): {e}")
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(args.n, 2, generator=gen) * 0.12 + torch.tensor([0.25, 0.75])
    y = target_shape(args.n, gen)
    snapshots = sorted({0, min(2, args.steps), min(5, args.steps), min(10, args.steps), args.steps})
    loss = bt.SamplesLoss("sinkhorn", p=2, blur=args.blur, scaling=0.5)
    shots, times = flow(loss, x0, y, args.steps, args.lr, snapshots)
    load = os.getloadavg()[0]
    print(
        f"birkhoff.torch: n = m = {args.n}, {args.steps} steps, "
        f"{np.mean(times) * 1e3:.0f} ms/step (median {np.median(times) * 1e3:.0f}), "
        f"load {load:.1f}"
    )
    if args.geomloss:
        import geomloss

        theirs = geomloss.SamplesLoss(
            "sinkhorn", p=2, blur=args.blur, scaling=0.5, backend="online"
        )
        steps = min(args.steps, 5)
        _, gtimes = flow(theirs, x0, y, steps, args.lr, [])
        print(
            f"GeomLoss online (KeOps CPU): {np.mean(gtimes[1:]) * 1e3:.0f} ms/step over "
            f"{steps - 1} steps after the first (compile) "
            f"-> birkhoff {np.mean(gtimes[1:]) / np.median(times):.1f}x faster, "
            f"load {os.getloadavg()[0]:.1f}"
        )
    steps = min(args.steps, 10)
    t0 = time.perf_counter()
    cold = ot_flow(x0, y, steps, args.lr, args.blur, warm=False)
    t1 = time.perf_counter()
    warm = ot_flow(x0, y, steps, args.lr, args.blur, warm=True)
    t2 = time.perf_counter()
    print(
        f"OT_eps flow, {steps} steps: {sum(cold)} Sinkhorn iterations from scratch "
        f"({t1 - t0:.1f} s), {sum(warm)} warm-started from the previous step ({t2 - t1:.1f} s): "
        f"{1 - sum(warm) / sum(cold):.0%} fewer; per step {cold} vs {warm}"
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(snapshots), figsize=(2.2 * len(snapshots), 2.4))
    for ax, k in zip(axes, snapshots):
        ax.scatter(y[:, 0], y[:, 1], s=0.3, c="#bbbbbb", lw=0)
        ax.scatter(shots[k][:, 0], shots[k][:, 1], s=0.3, c="#c0392b", lw=0)
        ax.set_title(f"step {k}", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.suptitle(f"Sinkhorn gradient flow, {args.n} points, blur {args.blur}", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
