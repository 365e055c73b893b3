"""Training a small generator with the Sinkhorn divergence as the loss
===================================================================

An MLP maps 2-D Gaussian noise to the plane; it is trained so that its samples match
scikit-learn's make_moons, with birkhoff.torch.SamplesLoss (debiased Sinkhorn divergence) as
the loss and Adam. Writes docs/figures/torch_generator.png (loss curve and samples).

Run it with::

    python examples/torch_generator.py [--iterations 300] [--batch 1000]
"""

import argparse
import os
import time

import numpy as np
import torch
from sklearn.datasets import make_moons

import birkhoff.torch as bt


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--blur", type=float, default=0.05)
    p.add_argument("--output", default="docs/figures/torch_generator.png")
    args = p.parse_args()
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(2, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 2),
    )
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    loss_fn = bt.SamplesLoss("sinkhorn", p=2, blur=args.blur, scaling=0.7)
    rng = np.random.default_rng(0)
    curve = []
    t0 = time.perf_counter()
    for it in range(args.iterations):
        data, _ = make_moons(args.batch, noise=0.05, random_state=int(rng.integers(1 << 31)))
        y = torch.from_numpy(data).float()
        x = net(torch.randn(args.batch, 2))
        loss = loss_fn(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(loss.item())
        if it % 50 == 0:
            print(f"iteration {it:4d}  loss {curve[-1]:.5f}")
    elapsed = time.perf_counter() - t0
    print(
        f"{args.iterations} iterations in {elapsed:.1f} s ({elapsed / args.iterations * 1e3:.0f} "
        f"ms each, batch {args.batch}), final loss {np.mean(curve[-20:]):.5f}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with torch.no_grad():
        samples = net(torch.randn(2000, 2)).numpy()
    data, _ = make_moons(2000, noise=0.05, random_state=1)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
    a1.semilogy(curve, lw=0.8)
    a1.set_xlabel("iteration")
    a1.set_ylabel("Sinkhorn divergence")
    a1.set_title("training loss", fontsize=9)
    a2.scatter(data[:, 0], data[:, 1], s=1, c="#bbbbbb", lw=0, label="make_moons")
    a2.scatter(samples[:, 0], samples[:, 1], s=1, c="#c0392b", lw=0, label="generator")
    a2.legend(markerscale=8, fontsize=8, loc="lower left")
    a2.set_title("samples after training", fontsize=9)
    a2.set_aspect("equal")
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
