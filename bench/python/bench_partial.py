"""Side-by-side benchmark of birkhoff's streamed partial OT against POT's dense
``ot.partial.entropic_partial_wasserstein``, at a fixed epsilon, mass and iteration count.

Run:  python bench/python/bench_partial.py [--sizes 1000 4000] [--dims 3 64] [--iters 10]
                                           [--large]

Each measurement runs in a child process of this one run, so that peak RSS is measured per
method; the table prints time per iteration, peak RSS above the idle interpreter, the ratio of
POT to birkhoff (float32) and the machine's load average when the row was measured. ``--large``
adds birkhoff alone at n = m = 1e6, d = 3 (a single iteration).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

EPS = 0.1  # fixed epsilon (cost units)
MASS = 0.5  # transported mass (weights are normalised to 1)
SEED = 0


def make_data(n, d, dtype):
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(n, d)).astype(dtype)
    y = (rng.normal(size=(n, d)) + 0.5).astype(dtype)
    return x, y


def rss_mb():
    """Peak RSS of this process in MB: VmHWM, which (unlike ru_maxrss) starts afresh at exec."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def child(method, n, d, iters):
    """Runs one measurement and prints one JSON line."""
    dtype = np.float64 if method.endswith("f64") else np.float32
    x, y = make_data(n, d, dtype)
    # The libraries are imported before the baseline (POT imports its backends, torch among
    # them), so peak RSS counts the solve's own memory.
    if method.startswith("birkhoff"):
        import birkhoff
    else:
        import ot
    base = rss_mb()
    if method.startswith("birkhoff"):
        t0 = time.perf_counter()
        r = birkhoff.partial_sinkhorn(x, y, mass=MASS, blur=EPS**0.5, iterations=iters, warn=False)
        seconds = time.perf_counter() - t0
        # `iters` iterations (three streamed passes' worth: rows, columns; the mass step is
        # free), then two passes for the plan's statistics.
        per_iter = seconds / (iters + 1)
        value = float(r.transport_cost)
    elif method.startswith("pot"):
        a = np.full(n, 1.0 / n, dtype=dtype)
        b = np.full(n, 1.0 / n, dtype=dtype)
        t0 = time.perf_counter()
        M = ot.dist(x, y)
        P = ot.partial.entropic_partial_wasserstein(
            a, b, M, EPS, m=MASS, numItermax=iters, stopThr=0.0
        )
        seconds = time.perf_counter() - t0
        per_iter = seconds / iters
        value = float(np.sum(P * M))
    else:
        raise SystemExit(f"unknown method {method}")
    print(
        json.dumps(
            {
                "method": method,
                "n": n,
                "d": d,
                "seconds": seconds,
                "per_iter": per_iter,
                "peak_rss_mb": rss_mb() - base,
                "total_rss_mb": rss_mb(),
                "value": value,
            }
        )
    )


def measure(method, n, d, iters, timeout):
    cmd = [sys.executable, __file__, "--child", method, str(n), str(d), str(iters)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "error": f"timeout {timeout}s"}
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"method": method, "error": tail[:80]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def side_by_side(sizes, dims, iters, timeout, methods, results_path=None):
    from _results import Results

    results = Results(
        "partial",
        f"Partial OT at epsilon {EPS}, mass {MASS}, seconds per iteration, n = m",
        x="n",
        x_label="points per cloud n = m",
        times={m: f"{m}_s" for m in methods},
        group=["d"],
    )
    print(f"\n## Partial OT, epsilon = {EPS}, mass = {MASS}, {iters} iterations, n = m\n")
    print("| n | d | method | ms / iteration | peak RSS MB | time / birkhoff-f32 | <P, C> | load |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for d in dims:
            ref = None
            row = {"n": n, "d": d}
            for method in methods:
                load = os.getloadavg()[0]
                r = measure(method, n, d, iters, timeout)
                if "error" in r:
                    print(f"| {n} | {d} | {method} | — | — | {r['error']} | | {load:.1f} |")
                    row[f"{method}_s"] = None
                    continue
                row[f"{method}_s"] = r["per_iter"]
                if method == "birkhoff-f32":
                    ref = r["per_iter"]
                ratio = f"{r['per_iter'] / ref:.1f}x" if ref else "—"
                print(
                    f"| {n} | {d} | {method} | {1e3 * r['per_iter']:.2f} | "
                    f"{r['peak_rss_mb']:.1f} | {ratio} | {r['value']:.6g} | {load:.1f} |",
                    flush=True,
                )
            results.add(**row)
    results.save(results_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=4, metavar=("METHOD", "N", "D", "ITERS"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 10000])
    ap.add_argument("--dims", type=int, nargs="+", default=[3, 64])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--results", help="JSON output (default bench/results/partial.json)")
    ap.add_argument("--large", action="store_true", help="birkhoff alone at n = 1e6, d = 3")
    ap.add_argument(
        "--methods", nargs="+", default=["birkhoff-f32", "birkhoff-f64", "pot-f64", "pot-f32"]
    )
    args = ap.parse_args()
    if args.child:
        method, n, d, iters = args.child
        child(method, int(n), int(d), int(iters))
        return
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()}")
    side_by_side(args.sizes, args.dims, args.iters, args.timeout, args.methods, args.results)
    if args.large:
        r = measure("birkhoff-f32", 1_000_000, 3, 1, args.timeout * 4)
        print(f"\nbirkhoff-f32 n = m = 1e6, d = 3, one iteration: {r}")


if __name__ == "__main__":
    main()
