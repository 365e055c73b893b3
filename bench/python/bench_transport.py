"""Side-by-side benchmark of birkhoff's streamed Sinkhorn against POT (and GeomLoss when torch
is installed), at a fixed epsilon and a fixed number of iterations, plus birkhoff's memory
scaling and the fused kernel's efficiency against a measured FMA peak.

Run:  python bench/python/bench_transport.py [--quick] [--large] [--kernel-bench PATH]

Each measurement runs in a child process of this one run, so that peak RSS is measured per
method; the table prints time per iteration, peak RSS above the idle interpreter, and the
ratio of the peer to birkhoff (float32).
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

EPS = 0.1  # fixed epsilon (cost units), as in FlashSinkhorn's bench_forward.py
SEED = 0


def make_data(n, d, dtype):
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(n, d)).astype(dtype)
    y = rng.normal(size=(n, d)).astype(dtype)
    a = rng.uniform(size=n) + 0.1
    b = rng.uniform(size=n) + 0.1
    return x, y, (a / a.sum()).astype(dtype), (b / b.sum()).astype(dtype)


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
    x, y, a, b = make_data(n, d, dtype)
    base = rss_mb()
    if method.startswith("birkhoff"):
        import birkhoff

        t0 = time.perf_counter()
        r = birkhoff.sinkhorn(
            x, y, a, b, blur=EPS**0.5, iterations=iters, update="alternating", warn=False
        )
        seconds = time.perf_counter() - t0
        # Alternating: `iters` iterations, then two passes for the plan's statistics.
        per_iter = seconds / (iters + 1)
        value = float(r.loss)
    elif method.startswith("pot"):
        import ot

        t0 = time.perf_counter()
        M = ot.dist(x, y)
        P, log = ot.sinkhorn(
            a, b, M, EPS, method="sinkhorn_log", numItermax=iters, stopThr=0.0, log=True, warn=False
        )
        seconds = time.perf_counter() - t0
        per_iter = seconds / iters
        f = EPS * (log["log_u"] - np.log(a))
        g = EPS * (log["log_v"] - np.log(b))
        value = float(a @ f + b @ g)
    elif method.startswith("geomloss"):
        import torch
        from geomloss._legacy.sinkhorn_divergence import log_weights, sinkhorn_loop
        from geomloss._legacy.sinkhorn_samples import softmin_tensorized
        from geomloss._legacy.utils import squared_distances

        torch.set_num_threads(2)
        xt, yt = torch.from_numpy(x)[None], torch.from_numpy(y)[None]
        at, bt = torch.from_numpy(a)[None], torch.from_numpy(b)[None]
        t0 = time.perf_counter()
        # GeomLoss's own loop at a fixed epsilon (as FlashSinkhorn's bench_forward.py does),
        # full squared distance, no extrapolation: `iters` symmetric sweeps + the initial one.
        C_xy, C_yx = squared_distances(xt, yt), squared_distances(yt, xt)
        _, _, g_ab, f_ba = sinkhorn_loop(
            softmin_tensorized,
            log_weights(at),
            log_weights(bt),
            None,
            None,
            C_xy,
            C_yx,
            [EPS] * iters,
            None,
            debias=False,
            last_extrapolation=False,
        )
        value = float((at * f_ba).sum() + (bt * g_ab).sum())
        seconds = time.perf_counter() - t0
        per_iter = seconds / (iters + 1)
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


def available(module):
    """Whether `module` can be imported, without importing it here (the driver stays small)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def side_by_side(sizes, dims, iters, timeout, results_path=None):
    from _results import Results

    methods = ["birkhoff-f32", "birkhoff-f64", "pot-f64", "pot-f32"]
    if available("geomloss") and available("torch"):
        methods.append("geomloss-tensorized")
    results = Results(
        "transport",
        f"Sinkhorn at fixed epsilon {EPS}, seconds per iteration, n = m: birkhoff vs POT, GeomLoss",
        x="n",
        x_label="points per cloud n = m",
        times={m: f"{m}_s" for m in methods},
        group=["d"],
    )
    print(f"\n## Fixed epsilon = {EPS}, {iters} iterations, n = m, random weights\n")
    print(
        "| n | d | method | ms / iteration | peak RSS MB | ratio to birkhoff-f32 (time) | value |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = []
    for n in sizes:
        for d in dims:
            ref = None
            row = {"n": n, "d": d}
            for method in methods:
                r = measure(method, n, d, iters, timeout)
                if "error" in r:
                    print(f"| {n} | {d} | {method} | — | — | {r['error']} | |")
                    row[f"{method}_s"] = None
                    continue
                row[f"{method}_s"] = r["per_iter"]
                row[f"{method}_rss_mb"] = round(r["peak_rss_mb"], 1)
                if method == "birkhoff-f32":
                    ref = r["per_iter"]
                ratio = f"{r['per_iter'] / ref:.1f}x" if ref else "—"
                print(
                    f"| {n} | {d} | {method} | {1e3 * r['per_iter']:.2f} | "
                    f"{r['peak_rss_mb']:.1f} | {ratio} | {r['value']:.6g} |",
                    flush=True,
                )
                rows.append(r)
            results.add(**row)
    results.save(results_path)
    return rows


def memory_scaling(sizes, timeout):
    print("\n## Memory scaling, birkhoff float32, d = 3, one alternating iteration\n")
    print("| n = m | seconds | peak RSS MB (above interpreter) | total peak RSS MB |")
    print("|---|---|---|---|")
    for n in sizes:
        r = measure("birkhoff-f32", n, 3, 1, timeout)
        if "error" in r:
            print(f"| {n} | {r['error']} | | |")
        else:
            print(
                f"| {n} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | {r['total_rss_mb']:.0f} |",
                flush=True,
            )


def kernel_efficiency(binary):
    if not binary or not os.path.exists(binary):
        print("\n(kernel efficiency: build bench_kernels with the release-tests preset)")
        return
    p = subprocess.run(
        [binary, "--benchmark_format=json", "--benchmark_min_time=0.5"],
        capture_output=True,
        text=True,
        check=True,
    )
    runs = json.loads(p.stdout)["benchmarks"]
    peak = {
        r["name"].split("/")[1]: r["GFLOP/s"] for r in runs if r["name"].startswith("BM_FmaPeak")
    }
    print("\n## Fused LSE kernel vs FP32 FMA peak (measured in the same run)\n")
    print("| n = m | d | threads | kernel GFLOP/s | Gexp/s | FMA peak GFLOP/s | efficiency |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        if not r["name"].startswith("BM_RowLse"):
            continue
        _, n, d, t = r["name"].split("/")[:4]
        eff = r["GFLOP/s"] / peak[t]
        print(
            f"| {n} | {d} | {t} | {r['GFLOP/s']:.1f} | {r['Gexp/s']:.2f} | {peak[t]:.1f} | "
            f"{100 * eff:.0f} % |"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=4, metavar=("METHOD", "N", "D", "ITERS"))
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--large", action="store_true", help="memory scaling up to n = 1e6")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--kernel-bench", default="build/release/bench/cpp/bench_kernels")
    ap.add_argument("--results", help="JSON output (default bench/results/transport.json)")
    args = ap.parse_args()
    if args.child:
        method, n, d, iters = args.child
        child(method, int(n), int(d), int(iters))
        return
    sizes = [1000, 4000] if args.quick else [1000, 4000, 10000]
    side_by_side(sizes, [3, 64], args.iters, args.timeout, args.results)
    memory_scaling([10_000, 100_000] + ([1_000_000] if args.large else []), args.timeout * 4)
    kernel_efficiency(args.kernel_bench)


if __name__ == "__main__":
    main()
