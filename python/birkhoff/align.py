"""Attributed graph alignment with QPAlign.

Source: [huang2026qpalign] (D. Huang, C. Tian, P. Yang, "Attributed Network Alignment:
Statistical Limits and Efficient Algorithm", ICML 2026, arXiv 2604.04365) and the authors' code
(FerdTian/QPAlign); docs/align.md says what comes from where.

Direction everywhere: node ``i`` of G1 is matched to node ``perm[i]`` of G2.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np

from . import _birkhoff
from ._arrays import (
    _as_array,
    as_bool,
    as_features,
    as_float,
    as_ids,
    as_int,
    as_reals,
    progress_callback,
)

__all__ = ["Alignment", "align", "score", "PRESETS"]

#: The hyper-parameters of the authors' scripts, one set per kind of pair (from the engine's
#: table, include/birkhoff/graph/align/presets.hpp).
PRESETS = _birkhoff.align_presets()


@dataclass
class Alignment:
    """The result of :func:`align`.

    Attributes:
        perm (ndarray (n1,) int64): node i of G1 -> node perm[i] of G2; -1 when node i was
            matched to a padding node (only when n1 > n2).
        topk (ndarray (n1, k) int64): the k nodes of G2 with the largest soft score, best first.
        topk_scores (ndarray (n1, k) float64): their soft scores.
        soft (ndarray (n1, n2) float64 or None): the relaxed doubly-stochastic matrix, when
            ``return_soft=True``.
        objective (ndarray (iterations + 1,) float64): F(Pi_t) per iteration (not monotone).
        iterations (int): projected-gradient iterations run.
        converged (bool): a stopping rule fired before ``max_iter`` ran out; ``stopped_by``
            says which: "tol" (the objective's relative change fell below ``tol``, the
            authors' rule) or "patience" (the rounded matching was unchanged for ``patience``
            iterations); "max_iter" when neither did, "seeded" when every node is a seed. It
            says nothing about the matching's quality: ``metrics`` does.
        stopped_by (str): see ``converged``.
        nan_restarts (int): steps retried with a halved step after a non-finite value.
        lambda_edge, lambda_feature (float): the weights used.
        likelihood (float): profile log-likelihood of ``perm`` under the planted Gaussian model
            (docs/align.md, "Presets"); larger is more likely, comparable between runs on the
            same pair.
        method (str): "dense" or "multilevel" (then ``objective`` .. ``preset`` describe the
            QPAlign run on the coarse graphs, and ``topk`` holds ``perm[i]`` first, then the
            refinement's other candidates by linearised gain, -1 / NaN past the last).
        coarse_nodes (int): multilevel: super-nodes per coarse graph (0 for dense).
        refine_objective (ndarray (rounds + 1,) float64): multilevel: QPAlign's objective at
            the fine matching read from the coarse alignment, then after each kept refinement
            round (non-increasing); empty for dense.
        preset (str): the preset whose run was kept ("none" for a single run of the given
            settings).
        candidates (dict): preset name -> likelihood of that preset's run.
        options (dict): the settings of the run kept, by their described names.
        metrics (dict or None): with ``truth``: pairs, overlap, overlap_unseeded, exact, hits1,
            hits5, hits10, mrr.
        graph1, graph2 (dict): what was made of each input: nodes, self_loops_used (diagonal
            entries of A), duplicates_merged (repeated, or undirected reversed, edges),
            one_way_pairs and two_way_pairs (node pairs the edge list gives in one orientation
            only / in both; 0 when directed or dense), directed. An undirected edge list with
            both kinds issues a RuntimeWarning naming ``directed``.
    """

    perm: np.ndarray
    topk: np.ndarray
    topk_scores: np.ndarray
    soft: np.ndarray | None
    objective: np.ndarray
    iterations: int
    converged: bool
    stopped_by: str
    nan_restarts: int
    lambda_edge: float
    lambda_feature: float
    likelihood: float
    preset: str
    method: str = "dense"
    coarse_nodes: int = 0
    refine_objective: np.ndarray | None = field(default=None, repr=False)
    candidates: dict = field(default_factory=dict, repr=False)
    options: dict = field(default_factory=dict, repr=False)
    metrics: dict | None = field(default=None)
    graph1: dict | None = field(default=None, repr=False)
    graph2: dict | None = field(default=None, repr=False)

    @property
    def overlap(self) -> float | None:
        """Fraction of truth pairs matched correctly (None without ``truth``)."""
        return None if self.metrics is None else self.metrics["overlap"]

    def __repr__(self) -> str:
        n1, k = self.topk.shape if self.topk.ndim == 2 else (len(self.perm), 0)
        text = (
            f"Alignment(n1={n1}, top_k={k}, iterations={self.iterations}, "
            f"stopped_by={self.stopped_by!r}, preset={self.preset!r}"
        )
        if self.metrics is not None:
            text += f", overlap={self.metrics['overlap']:.4g}, hits1={self.metrics['hits1']:.4g}"
        return text + ")"


def _num_nodes(num_nodes, x, adjacency, edge_index, suffix):
    if num_nodes is not None:
        return as_int(num_nodes, f"num_nodes{suffix}", 0, 2**62)
    if x is not None:
        return int(x.shape[0])
    if adjacency is not None:
        return int(adjacency.shape[0])
    if edge_index is not None and edge_index.size > 0:
        return int(edge_index.max()) + 1
    raise ValueError(f"num_nodes{suffix}: cannot be inferred; pass num_nodes{suffix}")


def align(
    edge_index1=None,
    edge_index2=None,
    x1=None,
    x2=None,
    seeds=None,
    *,
    truth=None,
    edge_weight1=None,
    edge_weight2=None,
    adjacency1=None,
    adjacency2=None,
    num_nodes1: int | None = None,
    num_nodes2: int | None = None,
    directed: bool = False,
    preset: str = "auto",
    lambda_edge: float | None = None,
    lambda_feature: float | None = None,
    gamma: float | None = None,
    mle_weights: tuple[float, float] | None = None,
    max_iter: int | None = None,
    sinkhorn_sweeps: int | None = None,
    sinkhorn_tol: float = 1e-9,
    sinkhorn_anderson: int = 20,
    step: float | None = None,
    barzilai_borwein: bool = True,
    bb_negative_curvature: str = "maximum",
    tol: float = 1e-7,
    patience: int = 5,
    init: str | None = None,
    seed: int = 0,
    top_k: int = 10,
    return_soft: bool = False,
    method: str = "auto",
    coarse_nodes: int | None = None,
    coarse_top_k: int | None = None,
    fine_candidates: int | None = None,
    propagated: int | None = None,
    refine_rounds: int | None = None,
    dense_max_nodes: int | None = None,
    num_threads: int = 0,
    progress=None,
) -> Alignment:
    """Aligns two attributed graphs with QPAlign.

    Minimises, over doubly-stochastic Pi (n x n, padded to n = max(n1, n2)),
    ``lambda_edge ||A Pi - Pi B||_F^2 + lambda_feature sum D_ij Pi_ij^2 + gamma (sum Pi -
    ||Pi||_F^2)`` with D_ij = ||x1_i - x2_j||^2, by projected gradient with Barzilai-Borwein
    steps and Sinkhorn balancing, then rounds Pi by an exact linear assignment. Directed graphs
    keep A^T and B^T in the gradient. Memory about 6 n^2 float64. Array arguments may be lists:
    ids become int64, features float32, edge weights and adjacency float64.

    Args:
        edge_index1: (2, E1) integer edge list of G1, [source; target] (undirected unless
            ``directed``: each edge may be listed once or in both orientations).
            Or a ``torch_geometric.data.Data`` holding G1 (x, edge_index, edge_weight,
            num_nodes; then leave x1, edge_weight1, num_nodes1 unset), as edge_index2 for G2.
        edge_index2: (2, E2) integer edge list of G2, same layout.
        x1: (n1, d) float32 node features of G1, or None (then x2 is None too).
        x2: (n2, d) float32 node features of G2, or None.
        seeds: (k, 2) integer known pairs [node of G1, node of G2], fixed during the run.
        truth: (t, 2) integer true pairs for the metrics; each node at most once per side
            (ValueError otherwise, as for seeds).
        edge_weight1: (E1,) edge weights of G1 (default 1).
        edge_weight2: (E2,) edge weights of G2 (default 1).
        adjacency1: (n1, n1) dense adjacency of G1 instead of an edge list.
        adjacency2: (n2, n2) dense adjacency of G2 instead of an edge list.
        num_nodes1: node count of G1 (default: rows of x1, else the largest id + 1).
        num_nodes2: node count of G2 (default: rows of x2, else the largest id + 1).
        directed: read edges as directed u -> v.
        preset: "auto" (default): the presets of the authors' settings (``PRESETS``:
            "gaussian", "douban", "acmdblp") run in turn until one converges (a stopping rule
            fired), and the matching of largest profile likelihood under the planted model is
            kept (``likelihood``, ``candidates``; docs/align.md, "Presets"). A preset's name:
            that preset's run only. "none": one run of the given settings, None meaning the
            "gaussian" value. A preset only fills in the arguments of ``PRESETS[preset]`` that
            the caller left at None; an argument passed explicitly holds in every run
            (``preset="douban", max_iter=50`` runs 50 iterations).
        lambda_edge: weight of the edge term (default None: from ``preset``, else 0.1, the
            authors' synthetic setting).
        lambda_feature: weight of the feature term (default None: from ``preset``, else 0.9).
        gamma: weight of the concave term (default None: from ``preset``, else 0.1).
        mle_weights: (rho, r) to use the MLE-consistent weights instead (our choice; see
            docs/align.md).
        max_iter: iteration cap of the projected gradient (default None: from ``preset``, else
            400).
        sinkhorn_sweeps: maximum balancing sweeps per projection (default None: from
            ``preset``, else 80).
        sinkhorn_tol: stop a balancing once every row and column sum is within this of 1 (0 =
            always run ``sinkhorn_sweeps``, as the reference).
        step: the first (and, without Barzilai-Borwein, every) step (default None: from
            ``preset``, else 1e-4).
        barzilai_borwein: Barzilai-Borwein long steps, clipped to [1e-5, 0.5].
        tol: stop once the objective's relative change |f_t - f_{t-1}| / (1 + |f_{t-1}|) is
            below this.
        sinkhorn_anderson: Anderson acceleration window of the balancing (0 = plain
            Sinkhorn-Knopp as the reference; same stopping rule, our addition).
        bb_negative_curvature: the Barzilai-Borwein step when <S, Y> < 0: "maximum" takes the
            maximum step 0.5 (the reference code's quirk, default), "previous" keeps the
            previous step (a safeguard; our addition).
        patience: also stop once the row-wise argmax of Pi has been the same bijection for
            this many iterations (default 5; 0 = off, the reference's rule only; our addition:
            the BB steps cycle, and without it the last of the 400 iterates at n = 1000 can be
            a bad one, see docs/align.md).
        init: "similarity", "random" (uses ``seed``) or "barycenter" (default None: from
            ``preset``, else "similarity").
        seed: random seed of ``init="random"``.
        top_k: candidates per node of G1 in ``topk``.
        return_soft: also return the (n1, n2) soft matrix (dense only).
        method: "dense" (QPAlign on the whole pair), "multilevel" (coarsen both graphs with
            NOPE*, align the coarse graphs, refine the fine matching by sparse assignments that
            never raise the objective; docs/align.md, "Multilevel alignment"; needs features
            and undirected graphs) or "auto" (default: multilevel when
            max(n1, n2) > ``dense_max_nodes`` and the pair allows it, else dense).
        coarse_nodes: multilevel: super-nodes of each coarse graph (default 500).
        coarse_top_k: multilevel: coarse partners of a super-node whose members are the
            candidates of its nodes (default 3).
        fine_candidates: multilevel: candidates per node among those members, the nearest in
            features (default 16).
        propagated: multilevel: candidates per node and round from the partners of its
            neighbours, the largest edge gains (default 32).
        refine_rounds: multilevel: maximum refinement rounds (default 30).
        dense_max_nodes: auto: the largest max(n1, n2) aligned densely (default 5000; QPAlign's
            memory is about 6 n^2 float64).
        num_threads: OpenMP threads (0 = OpenMP's default: OMP_NUM_THREADS, else all cores).
        progress: None, True (a bar) or a callable(stage, done, total).

    Returns:
        Alignment.

    Raises:
        ValueError: ids out of range, wrong shapes, NaN/inf weights or features, features in
            only one graph or with different d, seeds out of range or repeated, bad option
            values (e.g. sinkhorn_anderson < 0, an unknown bb_negative_curvature or init).
        TypeError: wrong dtypes (features must be float32, ids integer).
        KeyboardInterrupt: Ctrl-C during the run.
    """
    from . import _pyg_inputs as pyg

    graphs = []
    for k, (ei, x, w, n) in enumerate(
        [(edge_index1, x1, edge_weight1, num_nodes1), (edge_index2, x2, edge_weight2, num_nodes2)]
    ):
        if pyg.is_data(ei):
            if x is not None or w is not None or n is not None:
                raise TypeError(
                    f"x{k + 1}: given with a Data as edge_index{k + 1}, which holds its own x, "
                    "edge_weight and num_nodes"
                )
            x, ei, w, n = pyg.unpack(ei, f"edge_index{k + 1}")
        graphs.append((ei, x, w, n))
    (edge_index1, x1, edge_weight1, num_nodes1), (edge_index2, x2, edge_weight2, num_nodes2) = (
        graphs
    )
    if not isinstance(preset, str) or preset not in {"auto", "none", *PRESETS}:
        raise ValueError(
            f"preset: must be 'auto', 'none' or one of {sorted(PRESETS)}, got {preset!r}"
        )
    given = dict(
        lambda_edge=lambda_edge,
        lambda_feature=lambda_feature,
        gamma=gamma,
        max_iter=max_iter,
        sinkhorn_sweeps=sinkhorn_sweeps,
        step=step,
        init=init,
    )
    e1 = as_ids(edge_index1, "edge_index1", 2, "(2, E)")
    e2 = as_ids(edge_index2, "edge_index2", 2, "(2, E)")
    f1 = as_features(x1, "x1", "QPAlign's features")
    f2 = as_features(x2, "x2", "QPAlign's features")
    a1, a2 = as_reals(adjacency1, "adjacency1", 2), as_reals(adjacency2, "adjacency2", 2)
    w1, w2 = as_reals(edge_weight1, "edge_weight1", 1), as_reals(edge_weight2, "edge_weight2", 1)
    n1 = _num_nodes(num_nodes1, f1, a1, e1, "1")
    n2 = _num_nodes(num_nodes2, f2, a2, e2, "2")
    if mle_weights is None:
        rho, r = -1.0, -1.0
    else:
        if not isinstance(mle_weights, (tuple, list)) or len(mle_weights) != 2:
            raise TypeError(f"mle_weights: expected a pair (rho, r), got {mle_weights!r}")
        if lambda_edge is not None or lambda_feature is not None:
            raise TypeError(
                "mle_weights: replaces lambda_edge and lambda_feature; give one or the other"
            )
        rho, r = (as_float(v, "mle_weights") for v in mle_weights)
    # Options by their described names (birkhoff/graph/align/describe.hpp), as the CLI's; the
    # preset fields only when given, so that the engine's presets fill in the others.
    reals = {"lambda_edge", "lambda_feature", "gamma", "step"}
    options = {}
    for k, v in given.items():
        if v is None:
            continue
        if k == "init":
            if not isinstance(v, str):
                raise TypeError(f"init: expected a string, got {v!r}")
            options[k] = v
        else:
            options[k] = as_float(v, k) if k in reals else as_int(v, k)
    options.update(
        mle_rho=rho,
        mle_r=r,
        sinkhorn_tol=as_float(sinkhorn_tol, "sinkhorn_tol"),
        sinkhorn_anderson=as_int(sinkhorn_anderson, "sinkhorn_anderson"),
        barzilai_borwein=as_bool(barzilai_borwein, "barzilai_borwein"),
        bb_negative_curvature=bb_negative_curvature,
        tol=as_float(tol, "tol"),
        patience=as_int(patience, "patience"),
        seed=as_int(seed, "seed", 0, 2**64 - 1),
        top_k=as_int(top_k, "top_k"),
        return_soft=as_bool(return_soft, "return_soft"),
        num_threads=as_int(num_threads, "num_threads"),
    )
    if not isinstance(method, str):
        raise TypeError(f"method: expected a string, got {method!r}")
    multilevel = dict(method=method)
    for k, v in dict(
        coarse_nodes=coarse_nodes,
        coarse_top_k=coarse_top_k,
        fine_candidates=fine_candidates,
        propagated=propagated,
        refine_rounds=refine_rounds,
        dense_max_nodes=dense_max_nodes,
    ).items():
        if v is not None:
            multilevel[k] = as_int(v, k)
    d = _birkhoff.align_qpalign(
        n1,
        n2,
        e1,
        e2,
        w1,
        w2,
        a1,
        a2,
        f1,
        f2,
        as_bool(directed, "directed"),
        as_ids(seeds, "seeds", 2, "(k, 2)"),
        as_ids(truth, "truth", 2, "(t, 2)"),
        options,
        multilevel,
        preset,
        progress_callback(progress),
    )
    hint = d.pop("hint")
    result = Alignment(**{f.name: d.get(f.name) for f in fields(Alignment)})
    for name, g in (("edge_index1", result.graph1), ("edge_index2", result.graph2)):
        if g["one_way_pairs"] and g["two_way_pairs"]:
            warnings.warn(
                f"align: {name} is not symmetric: {g['one_way_pairs']} node pairs are listed in "
                f"one orientation only and {g['two_way_pairs']} in both; every edge was read as "
                "undirected (pass directed=True to read each column (u, v) as A[u, v] only)",
                RuntimeWarning,
                stacklevel=2,
            )
    if hint:
        warnings.warn(hint, RuntimeWarning, stacklevel=2)
    if result.nan_restarts:
        warnings.warn(
            f"qpalign: {result.nan_restarts} steps were retried with a halved step "
            "after a non-finite value",
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def score(perm, soft_or_topk, truth, seeds=None) -> dict:
    """Scores an alignment against a ground truth (the metrics of :func:`align`).

    Array arguments may be lists: ids become int64, soft scores float64.

    Args:
        perm: (n1,) integer matching, node i of G1 -> node perm[i] of G2 (or -1).
        soft_or_topk: (n1, n2) float scores (ranks by score, ties rank first) or (n1, k)
            integer candidate lists, best first (ranks by position; hits@m for m > k are NaN
            and a partner outside the list adds 0 to the MRR).
        truth: (t, 2) integer true pairs [node of G1, node of G2], each node at most once per
            side.
        seeds: (k, 2) integer known pairs, for ``overlap_unseeded``.

    Returns:
        dict with pairs, overlap, overlap_unseeded, exact, hits1, hits5, hits10, mrr.

    Raises:
        ValueError: wrong shapes, ids out of range, a node repeated on one side of truth/seeds.
        TypeError: ids that are not integers, or non-numeric scores (naming the argument).
    """
    p = as_ids(perm, "perm", 1, "(n1,)")
    kind = _as_array(soft_or_topk, "soft_or_topk", list_dtype=None).dtype.kind
    if kind == "f":
        arr = as_reals(soft_or_topk, "soft_or_topk", 2)
    elif kind in "iu":
        arr = as_ids(soft_or_topk, "soft_or_topk", 2, "(n1, k)")
    else:
        raise TypeError(f"soft_or_topk: dtype is neither float nor integer (kind {kind!r})")
    return _birkhoff.align_score(
        p, arr, as_ids(truth, "truth", 2, "(t, 2)"), as_ids(seeds, "seeds", 2, "(k, 2)")
    )
