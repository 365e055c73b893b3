"""Debiased barycenters on a fixed support against POT's barycenter_debiased, side by side.

K Gaussian bumps as histograms on an s x s grid of [0, 1]^2 (n = s^2 support points), the same
epsilon and the same number of iterations (tolerance 0) for both; POT runs its default method
(the scaling iteration with the dense n x n kernel). One independent check for both answers:
birkhoff's converged debiased divergences from each answer to the K histograms, weighted (the
barycenter objective), printed side by side with the machine's load average.

    python3 bench/python/bench_fixed_barycenter.py [--grids 20 30 40] [--iters 300]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _results import Results

import birkhoff


def _objective(grid, q, hist, lam, blur):
    q = np.maximum(q, 0) / q.sum()
    return sum(
        w * birkhoff.sinkhorn_divergence(grid, grid, a=q, b=h, blur=blur, marginal_tol=1e-9).loss
        for w, h in zip(lam, hist)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grids", type=int, nargs="+", default=[20, 30, 40])
    parser.add_argument("--measures", type=int, default=3)
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--blur", type=float, default=0.06)
    parser.add_argument("--results", help="JSON output (default bench/results/NAME.json)")
    args = parser.parse_args()
    import ot

    results = Results(
        "fixed_barycenter",
        f"Debiased barycenter of {args.measures} histograms on an s x s grid, {args.iters} "
        "iterations: birkhoff vs POT",
        x="n",
        x_label="support points",
        times={"birkhoff": "birkhoff_s", "POT": "pot_s"},
        versions={"POT": ot.__version__},
    )
    reg = args.blur**2
    rng = np.random.default_rng(0)
    lam = rng.uniform(0.5, 1, args.measures)
    lam /= lam.sum()
    print(f"POT {ot.__version__}, {args.measures} measures, epsilon {reg:g}, {args.iters} it")
    print("| n | birkhoff s | POT s | POT / birkhoff | objective birkhoff | objective POT | load |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for s in args.grids:
        t = np.linspace(0, 1, s)
        grid = np.stack(np.meshgrid(t, t), -1).reshape(-1, 2)
        centres = rng.uniform(0.2, 0.8, (args.measures, 2))
        hist = np.exp(-((grid[None] - centres[:, None]) ** 2).sum(-1) / 0.01) + 1e-4
        hist /= hist.sum(1, keepdims=True)
        start = time.perf_counter()
        r = birkhoff.fixed_support_barycenter(
            grid, cloud_weights=hist, weights=lam, blur=args.blur, max_iter=args.iters, tol=0
        )
        ours = time.perf_counter() - start
        start = time.perf_counter()
        ref = ot.bregman.barycenter_debiased(
            hist.T, ot.dist(grid, grid), reg, weights=lam, numItermax=args.iters, stopThr=0,
            warn=False,
        )  # fmt: skip
        theirs = time.perf_counter() - start
        mine, peer = (_objective(grid, q, hist, lam, args.blur) for q in (r.weights, ref))
        print(
            f"| {s * s} | {ours:.2f} | {theirs:.2f} | {theirs / ours:.1f} | {mine:.6g} | "
            f"{peer:.6g} | {os.getloadavg()[0]:.1f} |"
        )
        results.add(n=s * s, birkhoff_s=ours, pot_s=theirs, objective=mine, pot_objective=peer)
    results.save(args.results)


if __name__ == "__main__":
    main()
