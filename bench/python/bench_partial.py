"""Side-by-side benchmark of birkhoff's streamed partial OT against POT's dense
``ot.partial.entropic_partial_wasserstein``, at a fixed epsilon, mass and iteration count.

Run:  python bench/python/bench_partial.py [--sizes 1000 4000] [--dims 3 64] [--iters 10]
                                           [--large]

With ``--converged SIZES`` it also runs converged partial OT (the default marginal_tol 1e-3) on
uniform points of the unit cube against the cube shifted by 0.2, mass 0.5: birkhoff's
multiscale and dense backends and POT's ``entropic_partial_wasserstein`` (stopThr 1e-9)
side by side where each fits, with one independent check of every plan: its total mass and
<P, C> from 2000 sampled rows summed over every column in float64 numpy, scaled to the whole.

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


def sampled_plan(x, y, row_sums, rows):
    """Total mass and <P, C> of a plan given by the sums over all columns of sampled rows,
    scaled by n / len(rows) (an estimate of the whole plan's, the same for every method)."""
    mass, cost = row_sums(rows)
    scale = len(x) / len(rows)
    return scale * mass, scale * cost


def converged_child(method, n, blur):
    """One converged partial OT solve: seconds and the sampled check, as one JSON line."""
    rng = np.random.default_rng(SEED)
    x, y = rng.random((n, 3)), rng.random((n, 3)) + 0.2
    eps = blur**2
    rows = np.random.default_rng(1).choice(n, size=min(n, 2000), replace=False)
    out = {"method": method, "n": n}
    if method.startswith("birkhoff"):
        import birkhoff

        backend = method.split("-")[1]
        t0 = time.perf_counter()
        r = birkhoff.partial_sinkhorn(x, y, mass=MASS, blur=blur, backend=backend)
        out["seconds"] = time.perf_counter() - t0
        out.update(iterations=r.iterations, kept_fraction=r.kept_fraction, converged=r.converged)
        f, g = np.asarray(r.f, np.float64), np.asarray(r.g, np.float64)

        def row_sums(idx):
            mass = cost = 0.0
            for chunk in np.array_split(idx, max(1, len(idx) // 20)):
                c = ((x[chunk, None, :] - y[None, :, :]) ** 2).sum(-1)
                p = np.exp((f[chunk, None] + g[None, :] - c) / eps) / (n * n)
                mass, cost = mass + p.sum(), cost + (p * c).sum()
            return mass, cost
    else:
        import ot

        a = np.full(n, 1.0 / n)
        t0 = time.perf_counter()
        M = ot.dist(x, y)
        P = ot.partial.entropic_partial_wasserstein(
            a, a, M, eps, m=MASS, numItermax=10000, stopThr=1e-9
        )
        out["seconds"] = time.perf_counter() - t0

        def row_sums(idx):
            return P[idx].sum(), (P[idx] * M[idx]).sum()

    out["peak_rss_mb"] = rss_mb()
    out["mass"], out["cost"] = sampled_plan(x, y, row_sums, rows)
    print(json.dumps(out))


def converged(sizes, blur, timeout, dense_max, pot_max, results_path=None):
    from _results import Results

    methods = ["birkhoff-multiscale", "birkhoff-dense", "pot"]
    results = Results(
        "partial_converged",
        f"Converged partial OT at blur {blur}, mass {MASS}, d = 3, n = m",
        x="n",
        x_label="points per cloud n = m",
        times={m: f"{m}_s" for m in methods},
    )
    print(f"\n## Converged partial OT, blur = {blur}, mass = {MASS}, d = 3, n = m\n")
    print(
        "| n | method | seconds | iterations | kept | mass (check) | <P, C> (check) | "
        "this / multiscale | peak RSS MB | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        row = {"n": n}
        ref = None
        for method in methods:
            if (method == "birkhoff-dense" and n > dense_max) or (method == "pot" and n > pot_max):
                continue
            load = os.getloadavg()[0]
            r = run_child(["--converged-child", method, str(n), str(blur)], method, timeout)
            if "error" in r:
                print(f"| {n} | {method} | {r['error']} | | | | | | | {load:.1f} |")
                continue
            ref = ref or r["seconds"]
            row[f"{method}_s"] = r["seconds"]
            row[f"{method}_cost"] = r["cost"]
            print(
                f"| {n} | {method} | {r['seconds']:.2f} | {r.get('iterations', '')} | "
                f"{r.get('kept_fraction', 1.0):.3g} | {r['mass']:.5f} | {r['cost']:.6g} | "
                f"{r['seconds'] / ref:.1f}x | {r['peak_rss_mb']:.0f} | {load:.1f} |",
                flush=True,
            )
        results.add(**row)
    results.save(results_path)


def measure(method, n, d, iters, timeout):
    return run_child(["--child", method, str(n), str(d), str(iters)], method, timeout)


def run_child(args, method, timeout):
    """This script run as a child process with `args`: its last JSON line, or the error."""
    cmd = [sys.executable, __file__, *args]
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
    ap.add_argument("--converged", type=int, nargs="*", help="converged runs at these n")
    ap.add_argument("--converged-child", nargs=3, metavar=("METHOD", "N", "BLUR"))
    ap.add_argument("--blur", type=float, default=0.05, help="--converged: the blur")
    ap.add_argument("--dense-max", type=int, default=20000, help="--converged: dense up to n")
    ap.add_argument("--pot-max", type=int, default=10000, help="--converged: POT up to n")
    ap.add_argument(
        "--methods", nargs="+", default=["birkhoff-f32", "birkhoff-f64", "pot-f64", "pot-f32"]
    )
    args = ap.parse_args()
    if args.child:
        method, n, d, iters = args.child
        child(method, int(n), int(d), int(iters))
        return
    if args.converged_child:
        method, n, blur = args.converged_child
        converged_child(method, int(n), float(blur))
        return
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()}")
    if args.converged:
        path = args.results or None
        converged(args.converged, args.blur, args.timeout, args.dense_max, args.pot_max, path)
        return
    side_by_side(args.sizes, args.dims, args.iters, args.timeout, args.methods, args.results)
    if args.large:
        r = measure("birkhoff-f32", 1_000_000, 3, 1, args.timeout * 4)
        print(f"\nbirkhoff-f32 n = m = 1e6, d = 3, one iteration: {r}")


if __name__ == "__main__":
    main()
