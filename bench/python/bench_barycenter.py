"""Free-support barycenters against POT's free_support_sinkhorn_barycenter, side by side.

K clouds of n points in [0, 1]^d (each shifted and scaled), the same initial support and the
same number of fixed-point iterations (tol 0) at the same epsilon; POT's inner Sinkhorn runs to
its default stopThr, birkhoff's to its default marginal_tol. The two supports are compared (the
largest coordinate difference is printed) with the machine's load average.

    python3 bench/python/bench_barycenter.py [--sizes 1000 2000] [--clouds 10] [--iters 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _results import Results

import birkhoff


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000])
    parser.add_argument("--clouds", type=int, default=10)
    parser.add_argument("--dim", type=int, default=2)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--blur", type=float, default=0.1)
    parser.add_argument("--results", help="JSON output (default bench/results/barycenter.json)")
    args = parser.parse_args()
    import ot

    results = Results(
        "barycenter",
        f"Free-support barycenter of {args.clouds} clouds, d = {args.dim}, {args.iters} "
        "iterations: birkhoff vs POT",
        x="n",
        x_label="points per cloud",
        times={"birkhoff": "birkhoff_s", "POT": "pot_s"},
        versions={"POT": ot.__version__},
    )

    eps = args.blur**2
    print(f"POT {ot.__version__}, {args.clouds} clouds, d = {args.dim}, epsilon {eps:g}")
    print("| n per cloud | birkhoff s | POT s | POT / birkhoff | max diff | load |")
    print("|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        clouds = [
            rng.uniform(size=(n, args.dim)) * rng.uniform(0.5, 1.5) + rng.uniform(-1, 1)
            for _ in range(args.clouds)
        ]
        x0 = rng.uniform(size=(n, args.dim))
        t = time.perf_counter()
        r = birkhoff.barycenter(clouds, init=x0, blur=args.blur, max_iter=args.iters, tol=0)
        ours = time.perf_counter() - t
        t = time.perf_counter()
        ref = ot.bregman.free_support_sinkhorn_barycenter(
            clouds, [ot.unif(n)] * args.clouds, x0, eps, numItermax=args.iters, stopThr=0
        )
        theirs = time.perf_counter() - t
        print(
            f"| {n} | {ours:.2f} | {theirs:.2f} | {theirs / ours:.1f} | "
            f"{np.abs(r.points - ref).max():.1e} | {os.getloadavg()[0]:.1f} |"
        )
        results.add(
            n=n, birkhoff_s=ours, pot_s=theirs, max_diff=float(np.abs(r.points - ref).max())
        )
    results.save(args.results)


if __name__ == "__main__":
    main()
