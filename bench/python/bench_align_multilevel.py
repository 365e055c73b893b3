"""Multilevel QPAlign on planted power-law pairs, beside dense QPAlign where it fits.

Pairs from ``birkhoff.datasets.correlated_power_law`` (edge sampling s = 0.8, average degree
10, 16 features of correlation 0.6). Each run is a fresh process, so that its peak RSS is its
own; dense and multilevel run the same presets (auto) and are scored by one function
(``birkhoff.align_score`` of each perm against the planted truth). Prints overlap, time, peak
RSS, the ratio of times and the load.

    python3 bench/python/bench_align_multilevel.py [--sizes 2000 10000 100000] [--dense-max 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from _results import Results


def run_one(n: int, method: str, seed: int) -> dict:
    import birkhoff
    from birkhoff import datasets

    inst = datasets.correlated_power_law(n, d=16, avg_degree=10, s=0.8, r=0.6, seed=seed)
    start = time.perf_counter()
    r = birkhoff.align(
        inst["edge_index1"],
        inst["edge_index2"],
        x1=inst["x1"],
        x2=inst["x2"],
        num_nodes1=n,
        num_nodes2=n,
        method=method,
        top_k=1,
    )
    seconds = time.perf_counter() - start
    overlap = birkhoff.align_score(r.perm, r.topk, inst["truth"])["overlap"]
    return dict(
        n=n,
        method=r.method,
        seconds=round(seconds, 2),
        overlap=round(overlap, 4),
        preset=r.preset,
        peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        refine_rounds=max(len(r.refine_objective) - 1, 0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 100000])
    parser.add_argument("--dense-max", type=int, default=2000, help="largest n run densely")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--results", default=None)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(int(args.one[0]), args.one[1], args.seed)))
        return
    results = Results(
        "align_multilevel",
        "Multilevel vs dense QPAlign, planted power-law pairs",
        x="n",
        times={"multilevel": "seconds_multilevel", "dense": "seconds_dense"},
        x_label="nodes per graph",
    )
    print(f"{'n':>7} {'method':>10} {'overlap':>8} {'seconds':>8} {'RSS MB':>8} {'load':>5}")
    for n in args.sizes:
        row = dict(n=n)
        for method in ["multilevel", "dense"] if n <= args.dense_max else ["multilevel"]:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(n), method, "--seed", str(args.seed)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            load = round(os.getloadavg()[0], 2)
            print(
                f"{n:>7} {method:>10} {r['overlap']:>8.4f} {r['seconds']:>8.1f} "
                f"{r['peak_rss_mb']:>8.1f} {load:>5}",
                flush=True,
            )
            for k in ("seconds", "overlap", "peak_rss_mb", "preset", "refine_rounds"):
                row[f"{k}_{method}"] = r[k]
        if "seconds_dense" in row:
            ratio = row["seconds_dense"] / row["seconds_multilevel"]
            gap = row["overlap_multilevel"] - row["overlap_dense"]
            print(f"        dense / multilevel time {ratio:.2f}x, overlap difference {gap:+.4f}")
        results.add(**row)
    results.save(args.results)


if __name__ == "__main__":
    main()
