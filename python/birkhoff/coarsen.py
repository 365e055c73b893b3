"""Attributed-graph coarsening with NOPE and NOPE* (non-selfish greedy merging).

Source: [bai2026nope] (Bai, Lu et al., "Rethinking Efficient Graph Coarsening via a
Non-Selfishness Principle", ICML 2026, arXiv 2605.13021) and the authors' code (model/merge.py,
model/merge_relax.py), whose merge order this implementation reproduces: NOPE* exactly, NOPE up
to float32 near-ties.

``ratio`` is always the fraction of nodes KEPT: the result has round(N * ratio) super-nodes
(half to even, as Python's round), unless the graph runs out of edges first.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _birkhoff
from ._arrays import _as_array, as_bool, as_features, as_ids, progress_callback
from ._described import DescribedResult

__all__ = ["Coarsening", "coarsen"]


class Coarsening(DescribedResult):
    """The result of :func:`coarsen`: the merge tree and the coarse graph.

    Node ids: originals are 0..N-1; merge k creates id N + k. Super-nodes are listed in
    ascending id order (``roots``) and "super-node index" means a position in that list.

    Attributes:
        merges (ndarray (k, 3) int64): rows [N + k, u, v], u < v, in merge order.
        keys (ndarray (k,) float64): the key popped for each merge.
        roots (ndarray (K,) int64): live ids at the end, ascending.
        assignment (ndarray (N,) int64): super-node index of every original node.
        sizes (ndarray (K,) int64): original nodes per super-node.
        members_indptr (ndarray (K + 1,)), members (ndarray (N,)): members of each super-node.
        features (ndarray (K, D) float32): mean original feature of each super-node (also
            ``x``).
        edge_index (ndarray (2, E_c) int64): coarse edges, both orientations, sorted, no loops.
        edge_weight (ndarray (E_c,) int64): original edges between the two super-nodes.
        reached_target (bool): False when the graph ran out of edges first (one super-node per
            connected component); a RuntimeWarning is issued then.
        num_nodes, num_edges, target (int): N, the input's edges between distinct nodes, and
            the super-nodes asked for.
        self_loops_dropped, duplicates_merged (int): input clean-up counts.
        one_way_pairs, two_way_pairs (int): node pairs the edge list gives in one orientation
            only / in both (every edge is read as undirected).
        heap_pushes (int): candidate pairs pushed on the merge heap (the work done).
        data (torch_geometric.data.Data or None): the coarse graph as a ``Data`` when the input
            was one (mean ``x``, ``edge_weight``, majority ``y``, pooled masks, ``assignment``).
    """

    merges: np.ndarray
    keys: np.ndarray
    roots: np.ndarray
    assignment: np.ndarray
    sizes: np.ndarray
    members_indptr: np.ndarray
    members: np.ndarray
    features: np.ndarray
    edge_index: np.ndarray
    edge_weight: np.ndarray
    reached_target: bool
    num_nodes: int
    num_edges: int
    target: int
    self_loops_dropped: int
    duplicates_merged: int
    one_way_pairs: int
    two_way_pairs: int
    heap_pushes: int
    data: Any = None

    def __init__(self, state, fields):
        self._state = state
        super().__init__(fields)

    @property
    def num_super_nodes(self) -> int:
        """K, the number of super-nodes."""
        return int(self.roots.shape[0])

    @property
    def x(self) -> np.ndarray:
        """Alias of ``features`` (PyG's name)."""
        return self.features

    def cut(self, ratio: float | None = None, n_coarse: int | None = None) -> Coarsening:
        """The result at a larger kept fraction, from this run's merge list (no re-run).

        Args:
            ratio: fraction of nodes kept, in (0, 1], at least this run's ratio.
            n_coarse: number of super-nodes instead of ``ratio``.

        Raises:
            ValueError: ratio outside (0, 1], or more merges asked than this run holds.
        """
        if n_coarse is None:
            if ratio is None:
                raise ValueError("cut: give ratio or n_coarse")
            n_coarse = _birkhoff.coarsen_target(int(self.num_nodes), float(ratio))
        return _wrap(self._state, self._state.cut(int(n_coarse)))

    def lift(self, values) -> np.ndarray:
        """Maps super-node values (K, ...) to the original nodes: ``values[assignment]``.

        ``values``: an array or list (kept in its own dtype), or a torch
        tensor, lifted as a tensor on its device (differentiable).
        """
        if hasattr(values, "detach") and hasattr(values, "index_select"):  # a torch tensor
            import torch

            if values.shape[0] != self.num_super_nodes:
                raise ValueError(
                    f"values: expected {self.num_super_nodes} rows (one per super-node), "
                    f"got {values.shape[0]}"
                )
            index = torch.from_numpy(self.assignment).to(values.device)
            return values.index_select(0, index)  # differentiable
        values = _values(values, "values")
        if values.shape[0] != self.num_super_nodes:
            raise ValueError(
                f"values: expected {self.num_super_nodes} rows (one per super-node), "
                f"got {values.shape[0]}"
            )
        return values[self.assignment]

    def pool(self, values, reduce: str = "mean") -> np.ndarray:
        """Pools node values (N, ...) onto super-nodes by ``reduce`` = "mean" or "sum".

        ``values``: a real array, DLPack tensor or list, pooled in float64.
        """
        values = _values(values, "values")
        if values.dtype.kind not in "biuf":
            raise TypeError(f"values: dtype {values.dtype} is not supported; use a real array")
        if values.shape[0] != self.assignment.shape[0]:
            raise ValueError(
                f"values: expected {self.assignment.shape[0]} rows (one per node), "
                f"got {values.shape[0]}"
            )
        if reduce not in ("mean", "sum"):
            raise ValueError(f"reduce: must be 'mean' or 'sum', got {reduce!r}")
        if self.num_super_nodes == 0:
            return np.zeros((0,) + values.shape[1:], dtype=np.float64)
        out = np.add.reduceat(values[self.members].astype(np.float64), self.members_indptr[:-1])
        if reduce == "mean":
            out /= self.sizes.reshape((-1,) + (1,) * (values.ndim - 1))
        return out

    def assignment_matrix(self, normalize: bool = False):
        """The sparse (N, K) assignment operator P (scipy CSR).

        P[i, assignment[i]] = 1, or 1 / size with ``normalize``; lift = P @ v, sum-pool = P.T @ u.
        """
        import scipy.sparse as sp

        n = self.assignment.shape[0]
        data = np.ones(n) if not normalize else 1.0 / self.sizes[self.assignment]
        return sp.csr_matrix(
            (data, self.assignment, np.arange(n + 1)), shape=(n, self.num_super_nodes)
        )

    def __repr__(self) -> str:
        return (
            f"Coarsening(num_nodes={self.num_nodes}, super_nodes={self.num_super_nodes}, "
            f"coarse_edges={self.edge_index.shape[1] // 2}, reached_target={self.reached_target})"
        )


def _wrap(state, fields) -> Coarsening:
    result = Coarsening(state, fields)
    if not result.reached_target:
        warnings.warn(
            f"coarsen: target of {result.target} super-nodes not reachable; the graph ran out of "
            f"edges at {result.num_super_nodes} (one super-node per connected component)",
            RuntimeWarning,
            stacklevel=3,
        )
    if result.one_way_pairs and result.two_way_pairs:
        warnings.warn(
            f"coarsen: edge_index is not symmetric: {result.one_way_pairs} node pairs are listed "
            f"in one orientation only and {result.two_way_pairs} in both; every edge was read as "
            "undirected (NOPE coarsens undirected graphs; birkhoff.align(directed=True) reads a "
            "directed one)",
            RuntimeWarning,
            stacklevel=3,
        )
    return result


def _values(obj, name: str) -> np.ndarray:
    arr = _as_array(obj, name, list_dtype=None)
    if arr.ndim == 0:
        raise ValueError(f"{name}: must have one row per node, got a scalar")
    return arr


def _as_edge_index(edge_index, num_nodes: int) -> np.ndarray:
    try:
        import scipy.sparse as sp

        if sp.issparse(edge_index):
            if edge_index.shape != (num_nodes, num_nodes):
                raise ValueError(
                    f"edge_index: sparse adjacency must be ({num_nodes}, {num_nodes}), "
                    f"got {edge_index.shape}"
                )
            coo = edge_index.tocoo()
            return np.ascontiguousarray(np.vstack([coo.row, coo.col]).astype(np.int64))
    except ImportError:
        pass
    arr = as_ids(edge_index, "edge_index", 2, "(2, E)")
    if arr.shape[0] != 2:
        raise ValueError(f"edge_index: must have shape (2, E), got {arr.shape}")
    return arr


def coarsen(
    x,
    edge_index=None,
    ratio: float = 0.5,
    method: str = "nope",
    *,
    n_coarse: int | None = None,
    key_precision: str = "numpy1",
    clamp_interference: bool = False,
    bitset_bytes: int = -1,
    edge_weights: bool = True,
    num_threads: int = 0,
    progress=None,
) -> Coarsening:
    """Coarsens an attributed graph with NOPE or NOPE*.

    Greedy merging along edges: pop the edge with the smallest (key, lo, hi), merge its two ends
    into a super-node (size-weighted mean feature, union of neighbourhoods), score the new
    node's edges; older keys are never re-scored (the authors' lazy heap). Memory O(N D + E).
    Array arguments may be lists: x becomes float32, edge_index int64.

    Args:
        x: (N, D) float32 node features (finite; any memory layout). N is the node count. Or a
            ``torch_geometric.data.Data`` (x, edge_index; then leave edge_index unset): the
            result then also has ``data``, the coarse graph as a Data (birkhoff.pyg).
        edge_index: (2, E) integer pairs (PyG convention; treated as undirected: self-loops are
            dropped, duplicate and reversed pairs merged), or a scipy.sparse (N, N) adjacency.
        ratio: fraction of nodes KEPT, in (0, 1]; the target is round(N * ratio).
        method: "nope" (interference score) or "nope_star" (isotropic relaxation, faster).
        n_coarse: number of super-nodes to keep; overrides ``ratio``.
        key_precision: "numpy1" (the authors' goldens) or "numpy2" arithmetic of NOPE keys.
        clamp_interference: clamp NOPE's updated interference at 0 (the reference does not).
        bitset_bytes: memory cap in bytes of the bitset adjacency used in the late, dense part
            of the run (-1 = automatic, 0 = never); the result does not depend on it.
        edge_weights: also return ``edge_weight``.
        num_threads: OpenMP threads for the parallel parts (0 = OpenMP's default:
            OMP_NUM_THREADS, else all cores); results do not depend on it.
        progress: None, True (a bar) or a callable(stage, done, total).

    Returns:
        Coarsening. Run once at the smallest ratio you need and use ``cut()`` for the others.

    Raises:
        ValueError: bad shapes, ids outside [0, N), NaN/inf features, ratio outside (0, 1].
        TypeError: x not float32 (or missing), edge_index not integer (each names itself).
        KeyboardInterrupt: Ctrl-C during the run.
    """
    from . import _pyg_inputs as pyg

    if pyg.is_data(x):
        if edge_index is not None:
            raise TypeError("edge_index: given with a Data, which holds its own edge_index")
        data = x
        x, edge_index, weight, _ = pyg.unpack(data, "x")
        if weight is not None:
            warnings.warn(
                "coarsen: the Data's edge_weight is not used (NOPE coarsens unweighted graphs)",
                RuntimeWarning,
                stacklevel=2,
            )
        result = coarsen(
            x, edge_index, ratio, method, n_coarse=n_coarse, key_precision=key_precision,
            clamp_interference=clamp_interference, bitset_bytes=bitset_bytes,
            edge_weights=edge_weights, num_threads=num_threads, progress=progress,
        )  # fmt: skip
        result.data = pyg.coarse_data(data, result)
        return result
    if edge_index is None:
        raise TypeError("edge_index: required (or pass a torch_geometric Data as x)")
    if x is None:
        raise TypeError(
            "x: node features are required; without any, pass np.ones((N, 1), np.float32)"
        )
    xa = as_features(x, "x", "NOPE's features")
    ei = _as_edge_index(edge_index, xa.shape[0])
    # Options by their described names (birkhoff/graph/coarsen/describe.hpp), as the CLI's.
    options = dict(
        method=method,
        ratio=float(ratio),
        n_coarse=None if n_coarse is None else int(n_coarse),
        key_precision=key_precision,
        clamp_interference=as_bool(clamp_interference, "clamp_interference"),
        bitset_bytes=int(bitset_bytes),
        num_threads=int(num_threads),
    )
    state, fields = _birkhoff.coarsen_nope(
        xa, ei, options, as_bool(edge_weights, "edge_weights"), progress_callback(progress)
    )
    return _wrap(state, fields)
