"""Fused GW as an alignment baseline on Douban: birkhoff and POT beside QPAlign, side by side.

Douban offline -> online restricted to the 1118 anchored users (docs/align.md), node features
the users' locations, inner costs the adjacency matrices. birkhoff's and POT's entropic fused GW
run the same outer iterations from the product plan at each (epsilon, alpha), each inner solve
capped at the same iterations; QPAlign runs with the authors' Douban settings. Every plan is
checked by one function: its FGW objective and marginal error recomputed densely in NumPy, and
the overlap of its row-wise argmax with the ground truth. Prints times, ratios and the load.

    python3 bench/python/bench_align_fgw.py [--data DIR] [--grid 1e-3:0.5 3e-4:0.5] [--iters 30]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import numpy as np
from _results import Results

import birkhoff

DATA = pathlib.Path(os.environ.get("BIRKHOFF_SHARED_DATA", "../shared/data"))


def adjacency(edge_index, n):
    a = np.zeros((n, n))
    a[edge_index[0], edge_index[1]] = a[edge_index[1], edge_index[0]] = 1
    return a


def check(plan, c1, c2, m, alpha, truth):
    """(FGW objective, relative marginal error, overlap) of a plan, computed densely."""
    p, q = plan.sum(1), plan.sum(0)
    const = (c1**2 @ p)[:, None] + (c2**2 @ q)[None, :]
    gw = float(np.sum((const - 2 * c1 @ plan @ c2.T) * plan))
    fgw = alpha * gw + (1 - alpha) * float(np.sum(m * plan))
    a = np.full(len(p), 1 / len(p))
    b = np.full(len(q), 1 / len(q))
    error = max(np.abs(p - a).sum(), np.abs(q - b).sum())
    overlap = float(np.mean(plan.argmax(1)[truth[:, 0]] == truth[:, 1]))
    return fgw, error, overlap


def timed(run):
    t = time.perf_counter()
    value = run()
    return time.perf_counter() - t, value


def main():
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA / "douban")
    parser.add_argument("--grid", nargs="+", default=["1e-3:0.5", "3e-4:0.5"],
                        help="epsilon:alpha pairs")  # fmt: skip
    parser.add_argument("--iters", type=int, default=30, help="outer iterations")
    parser.add_argument("--inner", type=int, default=1000, help="inner iterations at the most")
    parser.add_argument("--results", help="JSON output (default bench/results/align_fgw.json)")
    args = parser.parse_args()
    import ot

    pair = birkhoff.datasets.douban(args.data)
    e1, e2, x1, x2, truth = (pair[k] for k in ("edge_index1", "edge_index2", "x1", "x2", "truth"))
    n = x1.shape[0]
    c1, c2 = adjacency(e1, n), adjacency(e2, x2.shape[0])
    m = ot.dist(x1.astype(np.float64), x2.astype(np.float64))
    results = Results(
        "align_fgw",
        f"Douban: entropic FGW ({args.iters} outer iterations), birkhoff vs POT",
        x="epsilon",
        times={"birkhoff": "birkhoff_s", "POT": "pot_s"},
        group=["alpha"],
        versions={"POT": ot.__version__},
    )
    seconds, al = timed(
        lambda: birkhoff.align(e1, e2, x1, x2, truth=truth, preset="douban", num_threads=0)
    )
    print(f"QPAlign (preset douban): overlap {al.overlap:.3f}, {seconds:.1f} s")
    results.data["qpalign"] = {"overlap": al.overlap, "seconds": round(seconds, 2)}
    print(
        f"{'epsilon':>8} {'alpha':>5} | {'ours s':>7} {'POT s':>7} {'POT/ours':>8} | "
        f"{'overlap':>7} {'POT ov':>6} | {'rel. FGW diff':>13} {'marg ours':>9} {'marg POT':>9}"
        f" | load"
    )
    for item in args.grid:
        eps, alpha = map(float, item.split(":"))
        ours_s, ours = timed(
            lambda eps=eps, alpha=alpha: birkhoff.graph_gromov_wasserstein(
                e1, e2, x1, x2, alpha=alpha, epsilon=eps, max_iter=args.iters, tol=0,
                inner_max_iter=args.inner,
            )
        )  # fmt: skip
        pot_s, pot = timed(
            lambda eps=eps, alpha=alpha: ot.gromov.entropic_fused_gromov_wasserstein(
                m, c1, c2, epsilon=eps, alpha=alpha, max_iter=args.iters, tol=0,
                numItermax=args.inner, stopThr=1e-9,
            )
        )  # fmt: skip
        f_ours, err_ours, ov_ours = check(ours.plan, c1, c2, m, alpha, truth)
        if np.all(np.isfinite(pot)):
            f_pot, err_pot, ov_pot = check(pot, c1, c2, m, alpha, truth)
        else:
            f_pot, err_pot, ov_pot = float("nan"), float("nan"), float("nan")
        load = os.getloadavg()[0]
        print(
            f"{eps:>8.0e} {alpha:>5.2f} | {ours_s:>7.1f} {pot_s:>7.1f} {pot_s / ours_s:>8.2f} | "
            f"{ov_ours:>7.3f} {ov_pot:>6.3f} | {(f_pot - f_ours) / f_ours:>13.2e} "
            f"{err_ours:>9.1e} {err_pot:>9.1e} | {load:.2f}"
        )
        results.add(
            epsilon=eps,
            alpha=alpha,
            birkhoff_s=round(ours_s, 2),
            pot_s=round(pot_s, 2),
            overlap=ov_ours,
            pot_overlap=ov_pot,
            fgw=f_ours,
            pot_fgw=f_pot,
            marginal_error=err_ours,
            pot_marginal_error=err_pot,
        )
    results.save(args.results)


if __name__ == "__main__":
    main()
