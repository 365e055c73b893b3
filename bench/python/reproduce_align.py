"""Reproductions of QPAlign (shared/design/align.md §6) and baselines, with birkhoff.

    python bench/python/reproduce_align.py phase   [--n 100 --d 16 --repeats 3 --grid full]
    python bench/python/reproduce_align.py douban  [--seeds 123 445 ...] [--full]
    python bench/python/reproduce_align.py baselines [--n 100 ...]

phase: heat-map PNG of mean overlap over the 22 x 22 (rho, r) grid of the authors' scripts with
the conjectured thresholds of §3.2 drawn on it (docs/figures/align_phase.png) and a CSV.
douban: restricted pair with the run_douban.sh settings, then (--full) the unequal-size pair
with and without the 223 prior pairs as seeds.
baselines: scipy FAQ, Hungarian on features, POT fused Gromov-Wasserstein and QPAlign on the
same planted instances (and Douban restricted when the data is present).
Run niced on a shared machine; every line printed is also a JSON record.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import sys
import time

import numpy as np

import birkhoff
from birkhoff import datasets

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
GRID = [round(0.05 * k, 2) for k in range(19)] + [0.95, 0.97, 0.99]


def emit(**record):
    print(json.dumps(record), flush=True)
    return record


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def phase(args):
    grid = GRID if args.grid == "full" else [0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99]
    k = len(grid)
    overlap = np.zeros((k, k))
    exact = np.zeros((k, k))
    rows = []
    t0 = time.perf_counter()
    for a, rho in enumerate(grid):
        for b, r in enumerate(grid):
            for rep in range(args.repeats):
                seed = 2025 + 10007 * rep + 7919 * (a * k + b)
                inst = datasets.correlated_wigner(args.n, args.d, rho, r, seed=seed)
                t = time.perf_counter()
                res = birkhoff.align(
                    x1=inst.x1,
                    x2=inst.x2,
                    adjacency1=inst.a,
                    adjacency2=inst.b,
                    truth=inst.truth,
                    preset="gaussian",
                    num_threads=1,
                )
                ov = res.metrics["overlap"]
                overlap[a, b] += ov / args.repeats
                exact[a, b] += res.metrics["exact"] / args.repeats
                rows.append(
                    (
                        rho,
                        r,
                        rep,
                        ov,
                        int(res.metrics["exact"]),
                        res.iterations,
                        time.perf_counter() - t,
                    )
                )
        emit(
            stage="phase",
            rho=rho,
            overlaps=[round(v, 3) for v in overlap[a]],
            elapsed_s=round(time.perf_counter() - t0, 1),
        )
    out = ROOT / "docs" / "figures"
    out.mkdir(parents=True, exist_ok=True)
    csv = out / "align_phase.csv"
    with open(csv, "w") as f:
        f.write("rho,r,rep,overlap,exact,iters,seconds,exact_margin,partial_margin\n")
        for rho, r, rep, ov, ex, it, s in rows:
            f.write(
                f"{rho},{r},{rep},{ov:.4f},{ex},{it},{s:.4f},"
                f"{datasets.exact_margin(args.n, args.d, rho, r):.3f},"
                f"{datasets.partial_margin(args.n, args.d, rho, r):.3f}\n"
            )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        png = out / "align_phase.png"
        _heatmap_png(png, overlap, grid, args.n, args.d)
        emit(
            stage="phase", note="matplotlib missing: plain heat-map PNG", png=str(png), csv=str(csv)
        )
        return
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    im = ax.imshow(overlap.T, origin="lower", cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(k), [f"{g:g}" for g in grid], rotation=90, fontsize=6)
    ax.set_yticks(range(k), [f"{g:g}" for g in grid], fontsize=6)
    ax.set_xlabel("edge correlation rho")
    ax.set_ylabel("feature correlation r")
    fine = np.linspace(0, 0.999, 400)
    for fn, style, label in [
        (datasets.exact_margin, "w-", "exact (conj. §3.2)"),
        (datasets.partial_margin, "w--", "almost exact (conj. §3.2)"),
    ]:
        xs, ys = [], []
        for rho in fine:
            rs = [r for r in fine if fn(args.n, args.d, rho, r) >= 0]
            if rs:
                xs.append(np.interp(rho, grid, range(k)))
                ys.append(np.interp(rs[0], grid, range(k)))
        ax.plot(xs, ys, style, lw=1.2, label=label)
    ax.legend(loc="lower left", fontsize=7)
    ax.set_title(f"QPAlign mean overlap, n={args.n}, d={args.d}, {args.repeats} repeats")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(out / "align_phase.png", dpi=130)
    emit(stage="phase", png=str(out / "align_phase.png"), csv=str(csv))


def _heatmap_png(path, overlap, grid, n, d, cell=24):
    """A dependency-free heat-map: x = rho, y = r (upwards), viridis-like ramp, the conjectured
    exact (white) and almost-exact (grey) thresholds of §3.2 as dots."""
    import struct
    import zlib

    k = len(grid)
    h = w = k * cell
    ramp = np.array([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]])
    img = np.zeros((h, w, 3), dtype=np.uint8)
    for a in range(k):
        for b in range(k):
            t = np.clip(overlap[a, b], 0, 1) * (len(ramp) - 1)
            lo = int(np.floor(t))
            hi = min(lo + 1, len(ramp) - 1)
            colour = ramp[lo] + (ramp[hi] - ramp[lo]) * (t - lo)
            img[h - (b + 1) * cell : h - b * cell, a * cell : (a + 1) * cell] = colour
    for fn, colour in [(datasets.exact_margin, 255), (datasets.partial_margin, 160)]:
        for px in range(w):
            rho = np.interp(px / cell - 0.5, range(k), grid)
            for py in range(h):
                r = np.interp((h - py) / cell - 0.5, range(k), grid)
                if r >= 0.999:
                    continue
                m = fn(n, d, rho, r)
                r2 = np.interp((h - py - 1) / cell - 0.5, range(k), grid)
                if m >= 0 > fn(n, d, rho, min(r2, 0.998)):
                    img[max(py - 1, 0) : py + 1, px] = colour
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(tag, data):
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    with open(path, "wb") as f:
        f.write(
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def douban(args):
    root = SHARED / "douban"
    if not root.is_dir():
        sys.exit(f"douban data not found at {root}")
    d = datasets.douban(root, restricted=True)
    for seed in args.seeds:
        t = time.perf_counter()
        res = birkhoff.align(
            d["edge_index1"],
            d["edge_index2"],
            d["x1"],
            d["x2"],
            truth=d["truth"],
            preset="douban",
            seed=seed,
            max_iter=args.iters,
        )
        s = time.perf_counter() - t
        emit(
            stage="douban_restricted",
            seed=seed,
            iterations=res.iterations,
            seconds=round(s, 1),
            s_per_iter=round(s / max(res.iterations, 1), 4),
            peak_rss_mb=round(peak_rss_mb()),
            **{k: round(v, 4) if isinstance(v, float) else v for k, v in res.metrics.items()},
        )
    if not args.full:
        return
    f = datasets.douban(root, restricted=False)
    for use_seeds in (False, True):
        t = time.perf_counter()
        res = birkhoff.align(
            f["edge_index1"],
            f["edge_index2"],
            f["x1"],
            f["x2"],
            seeds=f["seeds"] if use_seeds else None,
            truth=f["truth"],
            num_nodes2=3906,
            preset="douban",
            seed=args.seeds[0],
            max_iter=args.iters,
        )
        s = time.perf_counter() - t
        emit(
            stage="douban_full",
            seeds=223 if use_seeds else 0,
            iterations=res.iterations,
            seconds=round(s, 1),
            s_per_iter=round(s / max(res.iterations, 1), 4),
            peak_rss_mb=round(peak_rss_mb()),
            **{k: round(v, 4) if isinstance(v, float) else v for k, v in res.metrics.items()},
        )


def _baselines_on(name, a, b, x1, x2, truth, qp_kwargs):
    from scipy.optimize import linear_sum_assignment, quadratic_assignment

    n = truth.shape[0]

    def score(perm):
        return float(np.mean(perm[truth[:, 0]] == truth[:, 1]))

    t = time.perf_counter()
    # QPAlign takes the graphs as edge lists when given (the sparse products), else dense.
    graphs = dict(adjacency1=a, adjacency2=b) if "edge_index1" not in qp_kwargs else {}
    res = birkhoff.align(x1=x1, x2=x2, **graphs, truth=truth, **qp_kwargs)
    emit(
        stage="baseline",
        instance=name,
        method="birkhoff QPAlign",
        overlap=res.overlap,
        seconds=round(time.perf_counter() - t, 2),
    )
    t = time.perf_counter()
    # Features alone: the feature MLE (align.md §6.4).
    dist = ((x1.astype(np.float64)[:, None, :] - x2.astype(np.float64)[None]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(dist)
    perm = np.empty(n, dtype=np.int64)
    perm[rows] = cols
    emit(
        stage="baseline",
        instance=name,
        method="Hungarian on features",
        overlap=score(perm),
        seconds=round(time.perf_counter() - t, 2),
    )
    t = time.perf_counter()
    # FAQ maximises trace(A P B^T P^T) over P with P B P^T ~ A, i.e. col_ind maps A -> B.
    qap = quadratic_assignment(a, b, method="faq", options=dict(maximize=True))
    emit(
        stage="baseline",
        instance=name,
        method="scipy FAQ (edges)",
        overlap=score(np.asarray(qap.col_ind)),
        seconds=round(time.perf_counter() - t, 2),
    )
    try:
        import ot
    except ImportError:
        emit(stage="baseline", instance=name, method="POT FGW", note="POT missing")
        return
    t = time.perf_counter()
    p = np.full(n, 1.0 / n)
    plan = ot.gromov.fused_gromov_wasserstein(
        dist / dist.max(), a, b, p, p, loss_fun="square_loss", alpha=0.5
    )
    rows, cols = linear_sum_assignment(-plan)
    perm[rows] = cols
    emit(
        stage="baseline",
        instance=name,
        method="POT fused GW (alpha 0.5)",
        overlap=score(perm),
        seconds=round(time.perf_counter() - t, 2),
    )


def baselines(args):
    for rho, r in [(0.9, 0.9), (0.9, 0.3), (0.5, 0.5), (0.3, 0.8)]:
        inst = datasets.correlated_wigner(args.n, args.d, rho, r, seed=17)
        _baselines_on(
            f"wigner n={args.n} d={args.d} rho={rho} r={r}",
            inst.a,
            inst.b,
            inst.x1,
            inst.x2,
            inst.truth,
            dict(preset="gaussian"),
        )
    root = SHARED / "douban"
    if root.is_dir() and args.douban:
        d = datasets.douban(root, restricted=True)
        n = 1118
        a = np.zeros((n, n))
        a[d["edge_index1"][0], d["edge_index1"][1]] = 1
        a = np.maximum(a, a.T)
        b = np.zeros((n, n))
        b[d["edge_index2"][0], d["edge_index2"][1]] = 1
        b = np.maximum(b, b.T)
        _baselines_on(
            "douban restricted",
            a,
            b,
            d["x1"],
            d["x2"],
            d["truth"],
            dict(
                preset="douban",
                seed=123,
                edge_index1=d["edge_index1"],
                edge_index2=d["edge_index2"],
            ),
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["phase", "douban", "baselines"])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--grid", choices=["full", "coarse"], default="full")
    ap.add_argument("--seeds", type=int, nargs="+", default=[123, 445, 980, 1301, 2692])
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--full", action="store_true", help="douban: also the 3906 x 1118 pair")
    ap.add_argument("--douban", action="store_true", help="baselines: also on Douban")
    args = ap.parse_args()
    {"phase": phase, "douban": douban, "baselines": baselines}[args.what](args)


if __name__ == "__main__":
    main()
