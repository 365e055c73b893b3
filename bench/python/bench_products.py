"""Coarsening at ogbn-products' scale: NOPE* (and NOPE) to ratio 0.1 on a generated graph of
that shape (birkhoff.datasets.products_like: 2,449,029 nodes, 61,859,140 edges, 100 features,
47 communities, power-law degrees), seconds and peak RSS of a fresh process that loads the
.npy files as a user would (bench_coarsen.py --one). Target: NOPE* under 2 minutes and 8 GB on
the 2-core machine. The NOPE authors report about 39,000 s and 38 GB on ogbn-products.

    python3 bench/python/bench_products.py [--scales 0.01 0.1 1] [--methods nope_star nope]
        [--ratio 0.1] [--timeout 1800]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from _results import Results

from birkhoff.datasets import products_like

HERE = pathlib.Path(__file__).resolve().parent


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("--scales", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    p.add_argument("--methods", nargs="+", default=["nope_star", "nope"])
    p.add_argument("--ratio", type=float, default=0.1)
    p.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    p.add_argument("--results", help="JSON output (default bench/results/products.json)")
    args = p.parse_args()
    results = Results(
        "products",
        f"Coarsening to ratio {args.ratio} on graphs of ogbn-products' shape (average degree "
        "50.5, D = 100): seconds",
        x="n",
        x_label="nodes N (scale x 2,449,029)",
        times={m: f"{m}_s" for m in args.methods},
    )
    print("| scale | N | E | method | generate s | seconds | peak RSS MB | input MB | K |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            t = time.perf_counter()
            g = products_like(scale=scale)
            generate_s = time.perf_counter() - t
            folder = pathlib.Path(tmp) / f"products_{scale}"
            folder.mkdir()
            np.save(folder / "features.npy", g["x"])
            np.save(folder / "edge_index.npy", g["edge_index"])
            n, e = g["x"].shape[0], g["edge_index"].shape[1]
            del g
            row = {"scale": scale, "n": n, "edges": e, "generate_s": round(generate_s, 1)}
            for method in args.methods:
                cmd = [sys.executable, str(HERE / "bench_coarsen.py"), "--one", str(folder)]
                try:
                    out = subprocess.run(
                        [*cmd, method, str(args.ratio)],
                        capture_output=True,
                        text=True,
                        check=True,
                        timeout=args.timeout,
                    )
                except subprocess.TimeoutExpired:
                    print(f"| {scale} | {n} | {e} | {method} | {generate_s:.1f} | "
                          f"> {args.timeout:.0f} (stopped) | | | |", flush=True)  # fmt: skip
                    row[f"{method}_s"] = None
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                row[f"{method}_s"] = r["seconds"]
                row[f"{method}_rss_mb"] = r["peak_rss_mb"]
                row[f"{method}_super_nodes"] = r["super_nodes"]
                print(
                    f"| {scale} | {n} | {e} | {method} | {generate_s:.1f} | {r['seconds']} | "
                    f"{r['peak_rss_mb']} | {r['input_mb']} | {r['super_nodes']} |",
                    flush=True,
                )
            results.add(**row)
    results.save(args.results)


if __name__ == "__main__":
    main()
