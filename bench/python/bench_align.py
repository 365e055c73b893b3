"""QPAlign speed and memory: seconds per iteration and peak RSS (benchmark, not a test).

    python bench/python/bench_align.py [--sizes 1000 3000 10000] [--dims 16 1024] [--iters 5]

Each (n, d) runs in its own process (so that peak RSS is the run's own) on a featured
correlated Gaussian Wigner instance (dense graphs: the edge term is 4 GEMMs per iteration) with
a fixed number of iterations, plus the n = 1000, rho = 0.9 target run to convergence.
Prints one JSON record per run.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
import birkhoff
from birkhoff import datasets
n, d, iters = (int(v) for v in sys.argv[1:4])
rho, r, threads = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
t = time.perf_counter()
inst = datasets.correlated_wigner(n, d, rho, r, seed=1)
gen = time.perf_counter() - t
t = time.perf_counter()
res = birkhoff.align(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b,
                     truth=inst.truth, preset="gaussian", max_iter=iters,
                     tol=0 if iters < 400 else 1e-7, num_threads=threads)
s = time.perf_counter() - t
rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3)
print(json.dumps(dict(n=n, d=d, rho=rho, r=r, iterations=res.iterations, seconds=round(s, 3),
      s_per_iter=round(s / max(res.iterations, 1), 4), generate_s=round(gen, 2),
      overlap=res.overlap, peak_rss_mb=rss_mb)))
"""


def run(n, d, iters, rho, r, threads):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(d), str(iters), str(rho), str(r), str(threads)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        print(json.dumps(dict(n=n, d=d, error=out.stderr.strip().splitlines()[-1:])), flush=True)
        return
    print(out.stdout.strip(), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--dims", type=int, nargs="+", default=[16, 1024])
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    run(1000, 16, 400, 0.9, 0.9, args.threads)  # target: overlap 1.0 in under 5 s
    for n in args.sizes:
        for d in args.dims:
            run(n, d, args.iters, 0.9, 0.9, args.threads)
    print(
        json.dumps(
            dict(
                total_s=round(time.perf_counter() - t, 1),
                parent_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
            )
        )
    )


if __name__ == "__main__":
    main()
