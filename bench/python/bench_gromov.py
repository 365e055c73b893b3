"""Entropic Gromov-Wasserstein against POT's entropic_gromov_wasserstein, side by side.

Both run the same number of outer iterations (tol 0) from the product plan at the same epsilon,
their inner Sinkhorn solves converged (POT: stopThr 1e-9; birkhoff: its default marginal_tol),
birkhoff twice: inner solves in float64 and in float32 (dtype="float32", finished in float64
where float32 cannot reach the tolerance). Each answer is checked against POT's: the relative
difference of the GW objectives is printed,
with the machine's load average (the project machines are shared). POT stores n x n, m x m and
n x m dense matrices; birkhoff O((n + m) d).

    python3 bench/python/bench_gromov.py [--sizes 1000 2000 5000] [--dims 3 8] [--iters 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _results import Results

import birkhoff


def timed(run):
    t = time.perf_counter()
    value = run()
    return time.perf_counter() - t, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000])
    parser.add_argument("--dims", type=int, nargs="+", default=[3, 8])
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=0.05)
    parser.add_argument("--ours-only", type=int, nargs="*", default=[],
                        help="sizes run without POT (beyond its memory)")  # fmt: skip
    parser.add_argument("--results", help="JSON output (default bench/results/gromov.json)")
    args = parser.parse_args()
    import ot

    results = Results(
        "gromov",
        f"Entropic GW, epsilon {args.epsilon}, {args.iters} outer iterations: birkhoff vs POT",
        x="n",
        x_label="points per cloud n = m",
        times={
            "birkhoff": "birkhoff_s",
            "birkhoff, float32 inner solves": "birkhoff_f32_s",
            "POT": "pot_s",
        },
        group=["d"],
        versions={"POT": ot.__version__},
    )

    print(f"POT {ot.__version__}, epsilon {args.epsilon}, {args.iters} outer iterations")
    print(
        "| n = m | d | birkhoff s | float32 inner s | POT s | POT / birkhoff | POT / float32 "
        "| rel. diff of GW | float32 rel. diff | load |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for d in args.dims:
        for n in sorted(set(args.sizes) | set(args.ours_only)):
            x = rng.uniform(size=(n, d))
            y = rng.uniform(size=(n, d)) * np.linspace(0.5, 1.5, d)

            def ours(dtype, x=x, y=y):
                return timed(
                    lambda: birkhoff.gromov_wasserstein(
                        x, y, epsilon=args.epsilon, max_iter=args.iters, tol=0, dtype=dtype
                    )
                )

            (wide, r), (narrow, r32) = ours("float64"), ours("float32")
            if n in args.ours_only:
                print(
                    f"| {n} | {d} | {wide:.2f} | {narrow:.2f} | - | - | - | - | - | "
                    f"{os.getloadavg()[0]:.1f} |"
                )
                results.add(n=n, d=d, birkhoff_s=wide, birkhoff_f32_s=narrow, pot_s=None)
                continue

            def pot(x=x, y=y):
                c1, c2 = ot.dist(x, x), ot.dist(y, y)
                return ot.gromov.entropic_gromov_wasserstein(
                    c1, c2, epsilon=args.epsilon, max_iter=args.iters, tol=0, log=True
                )[1]["gw_dist"]

            theirs, ref = timed(pot)
            diff, diff32 = abs(r.loss - ref) / abs(ref), abs(r32.loss - ref) / abs(ref)
            print(
                f"| {n} | {d} | {wide:.2f} | {narrow:.2f} | {theirs:.2f} | {theirs / wide:.1f} | "
                f"{theirs / narrow:.1f} | {diff:.1e} | {diff32:.1e} | {os.getloadavg()[0]:.1f} |"
            )
            results.add(
                n=n,
                d=d,
                birkhoff_s=wide,
                birkhoff_f32_s=narrow,
                pot_s=theirs,
                rel_diff=diff,
                rel_diff_f32=diff32,
            )
    results.save(args.results)


if __name__ == "__main__":
    main()
