"""Dense against multiscale on converged solves where most or all pairs are kept.

The evidence behind ``backend="auto"``: from 10^8 pairs up in dimension 8 or less it picks
multiscale without a rule on the expected kept fraction. Each case solves one problem (x uniform
in the unit cube, y uniform in [0.3, 1.5]^d) on both backends to the same marginal tolerance and
prints both times, iterations, the kept fraction, the loss difference and the machine's load.

    python3 bench/python/bench_backend_choice.py [--marginal-tol 1e-5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _results import Results

import birkhoff

# (n, m, d, blur): kept fractions from about 0.5 to 1 at 10^8 pairs and more.
CASES = [
    (10_000, 10_000, 2, 0.1),
    (10_000, 10_000, 2, 0.2),
    (10_000, 10_000, 2, 0.3),
    (10_000, 10_000, 3, 0.1),
    (10_000, 10_000, 3, 0.3),
    (10_000, 10_000, 5, 0.15),
    (10_000, 10_000, 5, 1.0),
    (10_000, 10_000, 8, 0.3),
    (10_000, 10_000, 8, 1.0),
    (20_000, 20_000, 2, 2.0),
    (100_000, 1_000, 3, 0.5),
    (1_000_000, 100, 3, 0.3),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marginal-tol", type=float, default=1e-5)
    parser.add_argument("--quick", action="store_true", help="the first three cases only")
    parser.add_argument("--results", help="JSON output (default bench/results/backend_choice.json)")
    args = parser.parse_args()
    results = Results(
        "backend_choice",
        f"Converged solves (marginal_tol {args.marginal_tol:g}) where most pairs are kept: "
        "multiscale vs dense",
        x="blur",
        group=["n", "m", "d"],
        times={"multiscale": "multiscale_s", "dense": "dense_s"},
    )
    print(
        "| n | m | d | blur | dense s | iters | multiscale s | iters | kept | dense / ms | "
        "loss diff | load |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for n, m, d, blur in CASES[:3] if args.quick else CASES:
        x = rng.uniform(size=(n, d))
        y = rng.uniform(size=(m, d)) * 1.2 + 0.3
        runs = {}
        for backend in ("dense", "multiscale"):
            t = time.perf_counter()
            s = birkhoff.sinkhorn(x, y, blur=blur, backend=backend, marginal_tol=args.marginal_tol)
            runs[backend] = (time.perf_counter() - t, s)
            assert s.converged, (n, m, d, blur, backend, s.marginal_error)
        (td, sd), (tm, sm) = runs["dense"], runs["multiscale"]
        print(
            f"| {n} | {m} | {d} | {blur:g} | {td:.2f} | {sd.iterations} | {tm:.2f} | "
            f"{sm.iterations} | {sm.kept_fraction:.2f} | {td / tm:.2f} | "
            f"{abs(sd.loss - sm.loss):.1e} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )
        results.add(
            n=n,
            m=m,
            d=d,
            blur=blur,
            dense_s=td,
            multiscale_s=tm,
            dense_iterations=sd.iterations,
            multiscale_iterations=sm.iterations,
            kept_fraction=sm.kept_fraction,
            loss_diff=abs(sd.loss - sm.loss),
        )
    results.save(args.results)


if __name__ == "__main__":
    main()
