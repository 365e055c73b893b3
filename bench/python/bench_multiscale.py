"""Converged solves side by side: birkhoff's dense and multiscale backends (the default
converge schedule, marginal error <= 1e-3) and POT's log-domain Sinkhorn run to the same
marginal error, on uniform clouds in the unit cube shifted by 0.2.

Run:  python bench/python/bench_multiscale.py [--sizes 5000 20000] [--blur 0.02] [--no-pot]

Prints per case: iterations, kept fraction (multiscale), seconds, the loss's relative
difference to the dense backend, the ratio dense / multiscale, and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import birkhoff


def cloud(n, d, shift, seed):
    return np.random.default_rng(seed).random((n, d)) + shift


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def pot_converged(x, y, epsilon, tol, max_iter):
    """POT's log-domain Sinkhorn on the dense cost matrix, to the same marginal error or
    max_iter iterations; returns its cost, iterations and the marginal error it reached."""
    import ot

    a = np.full(len(x), 1 / len(x))
    b = np.full(len(y), 1 / len(y))
    cost = ot.dist(x, y)
    plan, log = ot.sinkhorn(
        a, b, cost, epsilon, method="sinkhorn_log", numItermax=max_iter, stopThr=tol, log=True
    )
    error = max(np.abs(plan.sum(1) - a).sum(), np.abs(plan.sum(0) - b).sum())
    return float((plan * cost).sum()), int(log["niter"]), float(error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--blur", type=float, default=0.02)
    parser.add_argument("--no-pot", action="store_true", help="skip POT (dense n x m memory)")
    parser.add_argument("--pot-max-iter", type=int, default=1000)
    parser.add_argument("--results", help="JSON output (default bench/results/multiscale.json)")
    args = parser.parse_args()
    from _results import Results

    results = Results(
        "multiscale",
        f"Converged Sinkhorn at blur {args.blur}, d = {args.d}: multiscale vs dense vs POT",
        x="n",
        x_label="points per cloud n = m",
        times={"multiscale": "multiscale_s", "dense": "dense_s", "POT": "pot_s"},
    )
    print(f"load average at start: {os.getloadavg()}")
    header = "| n = m | method | iterations | kept | seconds | cost rel. diff | dense / this |"
    print(header)
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in args.sizes:
        x, y = cloud(n, args.d, 0.0, 1), cloud(n, args.d, 0.2, 2)
        solve = birkhoff.sinkhorn
        dense, t_dense = timed(solve, x, y, blur=args.blur, backend="dense", warn=False)
        multi, t_multi = timed(solve, x, y, blur=args.blur, backend="multiscale", warn=False)
        ref = dense.transport_cost
        for name, r, t in [("dense", dense, t_dense), ("multiscale", multi, t_multi)]:
            kept = f"{r.kept_fraction:.3f}" if r.backend == "multiscale" else "1"
            diff = abs(r.transport_cost - ref) / abs(ref)
            print(
                f"| {n} | birkhoff {name} | {r.iterations} | {kept} | {t:.2f} | {diff:.1e} "
                f"| {t_dense / t:.2f} |",
                flush=True,
            )
        row = {"n": n, "multiscale_s": t_multi, "dense_s": t_dense, "pot_s": None}
        row["kept_fraction"] = multi.kept_fraction
        row["cost_rel_diff"] = abs(multi.transport_cost - ref) / abs(ref)
        if not args.no_pot and n <= 10000:
            (cost, iters, error), t = timed(
                pot_converged, x, y, args.blur**2, 1e-3, args.pot_max_iter
            )
            print(
                f"| {n} | POT sinkhorn_log (marginal error {error:.1e}) | {iters} | 1 | {t:.2f} "
                f"| {abs(cost - ref) / ref:.1e} | {t_dense / t:.2f} |",
                flush=True,
            )
            row["pot_s"] = t
        results.add(**row)
    print(f"load average at end: {os.getloadavg()}")
    results.save(args.results)


if __name__ == "__main__":
    main()
