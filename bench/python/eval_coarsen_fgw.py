"""Fused Gromov-Wasserstein between a graph and its NOPE / NOPE* coarse graph: a quality column.

The coarse graph is read as a measure network in the sense of [chen2023]: super-node k has
weight |k| / N, its feature is the mean of its members' features, and the inner cost between
super-nodes k and l is the mean adjacency between their members,

    C_c[k, l] = sum_{i in k, j in l} A_ij / (|k| |l|)      (k = l: the block's own density).

The membership plan T0 (node i sends 1/N to its super-node) is a feasible plan, so

    FGW(T0) = alpha GW(T0) + (1 - alpha) F(T0),  GW(T0) = (1/N^2) sum_ij (A_ij - C_c[k(i), k(j)])^2,
    F(T0) = (1/N) sum_i |x_i - xbar_k(i)|^2

bounds the (unregularised) fused GW distance from above: GW(T0) is the adjacency's spread
within the blocks of the partition, F(T0) the features' spread within the super-nodes. Both are
computed here in closed form from the sparse adjacency. birkhoff's entropic fused GW
(``birkhoff.graph_gromov_wasserstein``, square loss) is then solved from T0 at one epsilon for
every row, and its value and the fraction of nodes whose plan row peaks at their own super-node
are reported beside it. The baseline is a random partition with the same super-node sizes as
NOPE*'s (same weights, no structure).

Features: the paper's preparation (columns centred, rows of unit L2 norm), as in
eval_coarsen_quality.py, so squared feature distances lie in [0, 4].

Usage: python bench/python/eval_coarsen_fgw.py [--datasets cora citeseer]
           [--ratios 0.5 0.3 0.1] [--epsilon 0.03] [--alpha 0.5]
Needs ../shared/data/<name>/{features,edge_index}.npy; writes bench/results/coarsen_fgw.json.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import numpy as np
import scipy.sparse as sp
from _results import Results

import birkhoff

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


def prepare(x: np.ndarray) -> np.ndarray:
    """Centre the columns, then L2-normalise the rows (floor 1e-10); (N, D) float32."""
    x = x.astype(np.float64)
    x = x - x.mean(axis=0, keepdims=True)
    return (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-10)).astype(np.float32)


def adjacency(edge_index: np.ndarray, n: int) -> sp.csr_matrix:
    """Symmetric 0/1 adjacency without self-loops, (n, n) float64 CSR."""
    a = sp.csr_matrix((np.ones(edge_index.shape[1]), (edge_index[0], edge_index[1])), shape=(n, n))
    a = ((a + a.T) > 0).astype(np.float64)
    a.setdiag(0)
    a.eliminate_zeros()
    return a.tocsr()


def measure_network(adj: sp.csr_matrix, x: np.ndarray, assignment: np.ndarray, k: int):
    """The coarse graph as (weights (k,), mean adjacency C_c (k, k) dense, mean features (k, D))."""
    n = adj.shape[0]
    p = sp.csr_matrix((np.ones(n), (np.arange(n), assignment)), shape=(n, k))
    sizes = np.asarray(p.sum(axis=0)).ravel()
    c = (p.T @ adj @ p).toarray() / np.outer(sizes, sizes)
    xc = (p.T @ x.astype(np.float64)) / sizes[:, None]
    return sizes / n, c, xc


def membership_fgw(adj, x, assignment, sizes_weight, c, xc, alpha):
    """(FGW(T0), GW(T0), F(T0)) at the membership plan, in closed form (adjacency sparse)."""
    n = adj.shape[0]
    coo = adj.tocoo()
    # sum_ij (A_ij - C[k_i, k_j])^2 = sum A^2 - 2 sum A_ij C[k_i, k_j] + sum_kl |k||l| C_kl^2
    cross = np.sum(coo.data * c[assignment[coo.row], assignment[coo.col]])
    sizes = sizes_weight * n
    gw = (np.sum(coo.data**2) - 2 * cross + np.sum(np.outer(sizes, sizes) * c**2)) / n**2
    feat = float(np.sum((x.astype(np.float64) - xc[assignment]) ** 2) / n)
    return alpha * gw + (1 - alpha) * feat, float(gw), feat


def dense_fgw(adj, x, plan, c, xc, alpha):
    """FGW(T) from the dense formula <A^2 a, a> + <C^2 b, b> - 2 <A T C, T> (an independent
    check of ``membership_fgw``; O(N^2) memory)."""
    a_dense = adj.toarray()
    a, b = plan.sum(axis=1), plan.sum(axis=0)
    gw = a @ (a_dense**2) @ a + b @ (c**2) @ b - 2 * np.sum((a_dense @ plan @ c.T) * plan)
    x = x.astype(np.float64)
    sq = np.sum(x**2, axis=1)[:, None] + np.sum(xc**2, axis=1)[None] - 2 * x @ xc.T
    return alpha * gw + (1 - alpha) * float(np.sum(plan * sq))


def random_partition(sizes: np.ndarray, n: int, rng) -> np.ndarray:
    """Assignment of a random partition of n nodes into blocks of the given sizes."""
    return np.repeat(np.arange(len(sizes)), sizes)[rng.permutation(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    parser.add_argument("--ratios", type=float, nargs="+", default=[0.5, 0.3, 0.1])
    parser.add_argument("--epsilon", type=float, default=0.03)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--max-iter", type=int, default=20)
    parser.add_argument("--results", help="JSON output (default bench/results/coarsen_fgw.json)")
    args = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"needs the shared data folder {SHARED}")

    results = Results(
        "coarsen_fgw",
        f"Fused GW between a graph and its coarse graph (alpha {args.alpha}, "
        f"epsilon {args.epsilon})",
        x="ratio",
        x_label="coarsening ratio (nodes kept)",
        times={"birkhoff FGW": "fgw_s"},
        group=("dataset", "method"),
    )
    print(f"alpha {args.alpha}, epsilon {args.epsilon}, features centred and row-normalised")
    print(
        "| dataset | ratio | method | super-nodes | FGW(T0) | GW(T0) | F(T0) | entropic FGW "
        "| own super-node | FGW s | converged | load |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    rng = np.random.default_rng(0)
    for name in args.datasets:
        d = SHARED / name
        x = prepare(np.load(d / "features.npy"))
        edge_index = np.load(d / "edge_index.npy").astype(np.int64)
        n = x.shape[0]
        adj = adjacency(edge_index, n)
        runs = {
            m: birkhoff.coarsen(x, edge_index, ratio=min(args.ratios), method=m)
            for m in ("nope", "nope_star")
        }
        for ratio in sorted(args.ratios, reverse=True):
            cuts = {m: r.cut(ratio=ratio) for m, r in runs.items()}
            cuts["random"] = random_partition(cuts["nope_star"].sizes, n, rng)
            for method, cut in cuts.items():
                assignment = cut if method == "random" else cut.assignment
                k = int(assignment.max()) + 1
                b, c, xc = measure_network(adj, x, assignment, k)
                fgw0, gw0, f0 = membership_fgw(adj, x, assignment, b, c, xc, args.alpha)
                t0 = sp.csr_matrix(
                    (np.full(n, 1.0 / n), (np.arange(n), assignment)), shape=(n, k)
                ).toarray()
                if n <= 5000:
                    check = dense_fgw(adj, x, t0, c, xc, args.alpha)
                    assert abs(check - fgw0) <= 1e-9 * max(1.0, abs(check)), (check, fgw0)
                t = time.perf_counter()
                r = birkhoff.graph_gromov_wasserstein(
                    edge_index,
                    None,
                    x,
                    xc.astype(np.float32),
                    None,
                    b,
                    adjacency2=c,
                    num_nodes1=n,
                    alpha=args.alpha,
                    epsilon=args.epsilon,
                    max_iter=args.max_iter,
                    tol=1e-4,
                    marginal_tol=1e-5,
                    init=t0,
                )
                secs = time.perf_counter() - t
                own = float(np.mean(r.matching == assignment))
                load = os.getloadavg()[0]
                print(
                    f"| {name} | {ratio:g} | {method} | {k} | {fgw0:.4f} | {gw0:.3e} | {f0:.4f} "
                    f"| {r.loss:.4f} | {own:.3f} | {secs:.1f} | {r.converged} | {load:.1f} |",
                    flush=True,
                )
                results.add(
                    dataset=name,
                    ratio=ratio,
                    method=method,
                    super_nodes=k,
                    fgw_t0=fgw0,
                    gw_t0=gw0,
                    feature_t0=f0,
                    fgw=r.loss,
                    gw=r.gw_loss,
                    feature=r.feature_loss,
                    own_super_node=own,
                    fgw_s=secs,
                    converged=bool(r.converged),
                    marginal_error=r.marginal_error,
                    iterations=r.iterations,
                    inner_iterations=r.inner_iterations,
                )
    results.save(args.results)


if __name__ == "__main__":
    main()
