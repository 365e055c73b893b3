"""Sliced Wasserstein against POT's sliced_wasserstein_distance, side by side in one run.

Both get the same directions (POT's (d, L) layout) and the same weights; the answers are
checked against each other (relative difference printed) and the machine's load average is
printed with each row (the project machines are shared).

    python3 bench/python/bench_sliced.py [--sizes 10000 100000 1000000] [--dims 3 64]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _results import Results

import birkhoff


def best_of(run, repeats):
    times, value = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - t)
    return min(times), value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--dims", type=int, nargs="+", default=[3, 64])
    parser.add_argument("--projections", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results", help="JSON output (default bench/results/sliced.json)")
    args = parser.parse_args()
    import ot

    results = Results(
        "sliced",
        f"Sliced Wasserstein, {args.projections} directions, float64: birkhoff vs POT",
        x="n",
        x_label="points per cloud n",
        times={"birkhoff": "birkhoff_s", "POT": "pot_s"},
        group=["d"],
        versions={"POT": ot.__version__},
    )

    print(f"POT {ot.__version__}, birkhoff {birkhoff.__version__}, L = {args.projections}")
    print(f"{'n':>8} {'d':>3} {'ours s':>8} {'POT s':>8} {'ratio':>6} {'rel diff':>9} {'load':>5}")
    rng = np.random.default_rng(0)
    for d in args.dims:
        for n in args.sizes:
            if n * d > 64_000_000:
                continue
            x = rng.normal(size=(n, d))
            y = rng.normal(size=(n, d)) * 0.8 + 0.5
            directions = ot.sliced.get_random_projections(d, args.projections, seed=0)
            ours, loss = best_of(
                lambda x=x, y=y, p=directions: (
                    birkhoff.sliced_wasserstein(x, y, projections=p).loss
                ),
                args.repeats,
            )
            theirs, ref = best_of(
                lambda x=x, y=y, p=directions: ot.sliced_wasserstein_distance(x, y, projections=p),
                args.repeats,
            )
            print(
                f"{n:>8} {d:>3} {ours:>8.3f} {theirs:>8.3f} {theirs / ours:>6.1f} "
                f"{abs(loss - ref) / ref:>9.1e} {os.getloadavg()[0]:>5.2f}"
            )
            results.add(n=n, d=d, birkhoff_s=ours, pot_s=theirs, rel_diff=abs(loss - ref) / ref)
    results.save(args.results)


if __name__ == "__main__":
    main()
