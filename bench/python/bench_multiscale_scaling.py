"""How the default converged solve scales with n: uniform clouds in the unit cube against the
cube shifted by 0.2, d = 3, |x - y|^2 cost, float32 points (as the CLI reads them), backend
auto (multiscale at these sizes). Each size runs in a process of its own, so that its peak
resident memory is its own.

Run:  python bench/python/bench_multiscale_scaling.py [--sizes 100000 200000 400000 1000000]
          [--blur 0.01] [--spacing]

--spacing scales the blur with the point spacing, blur(n) = blur (n_max / n)^(1/d), instead of
keeping it fixed. Prints per size: seconds, iterations, kept and ideal fractions, the marginal
error checked independently in float64 numpy from the returned potentials (bench/python/
_checks.py, 200 sampled rows and columns), peak memory and the load; then the exponent of a
least-squares fit of log time against log n.
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


def one(n, d, blur, seed):
    """Runs one size in this process and prints its row as JSON."""
    from _checks import marginal_error

    import birkhoff

    rng = np.random.default_rng(seed)
    x = rng.random((n, d)).astype(np.float32)
    y = (rng.random((n, d)) + 0.2).astype(np.float32)
    start = time.perf_counter()
    r = birkhoff.sinkhorn(x, y, blur=blur, warn=False)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    error = marginal_error(x, y, r.f, r.g, blur**2, cost_scale=1.0, samples=200)
    row = {
        "n": n,
        "blur": blur,
        "seconds": seconds,
        "iterations": r.iterations,
        "backend": r.backend,
        "working_dtype": r.report["working_dtype"],
        "kept_fraction": r.kept_fraction,
        "ideal_fraction": r.report["ideal_fraction"],
        "levels": [(lv["name"], lv["iterations"]) for lv in r.report["levels"]],
        "converged": bool(r.converged),
        "marginal_error": error,
        "peak_mb": peak_mb,
        "load": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(row))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100000, 200000, 400000, 1000000])
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--blur", type=float, default=0.01, help="the blur at the largest size")
    parser.add_argument("--spacing", action="store_true", help="blur proportional to spacing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--results", help="JSON output (default bench/results/NAME.json)")
    args = parser.parse_args()
    if args.one is not None:
        one(args.one, args.d, args.blur, args.seed)
        return
    from _results import Results

    mode = "blur proportional to the spacing" if args.spacing else f"blur {args.blur}"
    results = Results(
        "multiscale_scaling_spacing" if args.spacing else "multiscale_scaling",
        f"Converged multiscale Sinkhorn against n, d = {args.d}, {mode} (float32 points)",
        x="n",
        x_label="points per cloud n = m",
        times={"birkhoff": "seconds"},
    )
    print(f"load average at start: {os.getloadavg()}")
    print("| n = m | blur | seconds | iterations | kept | ideal | marginal error | peak MB | load")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    n_max = max(args.sizes)
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for n in args.sizes:
        blur = args.blur * (n_max / n) ** (1 / args.d) if args.spacing else args.blur
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(n), "--d", str(args.d), "--blur", str(blur)],
            check=True,
            capture_output=True,
            text=True,
            cwd=here,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        # The table keeps scalar columns; the levels and the working dtype are printed below.
        keep = {k: v for k, v in row.items() if k not in ("load", "levels", "working_dtype")}
        keep["coarse_iterations"] = [it for name, it in row["levels"] if "coarse" in name]
        results.add(**keep)
        print(
            f"| {n} | {blur:.4g} | {row['seconds']:.1f} | {row['iterations']} "
            f"| {row['kept_fraction']:.3%} | {row['ideal_fraction']:.3%} "
            f"| {row['marginal_error']:.1e} | {row['peak_mb']:.0f} | {row['load']} |",
            flush=True,
        )
        print(f"  levels {row['levels']}; working dtype {row['working_dtype']}", flush=True)
    if len(rows) > 1:
        slope = np.polyfit(np.log([r["n"] for r in rows]), np.log([r["seconds"] for r in rows]), 1)
        print(f"fitted exponent of time against n: {slope[0]:.2f} ({mode})")
        results.data["exponent"] = float(slope[0])
    print(f"load average at end: {os.getloadavg()}")
    results.save(args.results)


if __name__ == "__main__":
    main()
