"""Entropic Gromov-Wasserstein and fused GW between point clouds, in linear memory.

With squared Euclidean inner costs the linearised GW cost at a plan T is
M_ij = alpha_i + beta_j - 2 phi_i^T K chi_j, phi and chi the points' (d + 2)-dimensional
lifted features and K a (dx + 2) x (dy + 2) matrix formed by one streamed plan product, so each
outer iteration is one streamed Sinkhorn solve and nothing n x m is stored. The iteration is
POT's projected gradient (``entropic_gromov_wasserstein``, solver "PGD") [peyre2016]; fused GW
[vayer2019] adds a feature cost. The factorisation is that of [scetbon2022].
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import (
    _as_array,
    as_bool,
    as_features,
    as_float,
    as_ids,
    as_int,
    as_reals,
    as_weights,
    progress_callback,
)
from ._described import DescribedResult

__all__ = [
    "GraphGromovResult",
    "GromovResult",
    "fused_gromov_wasserstein",
    "graph_gromov_wasserstein",
    "gromov_wasserstein",
]


class GromovResult(DescribedResult):
    """The result of :func:`gromov_wasserstein` and :func:`fused_gromov_wasserstein`.

    Attributes:
        loss (float): the objective at the final plan, without the entropy: GW(T), or
            alpha GW(T) + (1 - alpha) F(T) for fused GW (POT's ``gw_dist`` / ``fgw_dist``).
        gw_loss (float): GW(T) = sum (|x_i - x_k|^2 - |y_j - y_l|^2)^2 T_ij T_kl, the marginal
            terms taken at a and b (POT's square-loss ``gwloss``).
        feature_loss (float): F(T) = sum T_ij |features_x_i - features_y_j|^2 (fused GW).
        epsilon (float): the entropic regularisation.
        iterations (int): outer iterations of the kept initial plan.
        inner_iterations (int): Sinkhorn iterations of all outer iterations and initial plans.
        converged (bool): the outer tolerance was met and the last inner solve converged.
        marginal_error (float): relative marginal error of the final plan.
        backend (str): the last inner solve's backend, "dense" or "multiscale".
        working_dtype (str): the last inner solve's arithmetic, "float64", "float32", or
            "float64 (why)" when a float32 solve was finished in float64.
        best_init (int): the initial plan kept (0: the product plan or ``init``).
        losses (list of float): each initial plan's final loss.
        grad_x (ndarray (n, dx)), grad_y (ndarray (m, dy)): gradients of ``loss`` at the final
            plan held fixed (None unless ``gradients=True``).
        grad_features_x, grad_features_y (ndarray (n, df), (m, df)): fused GW's.
        plan (ndarray (n, m)): the final plan (None unless ``return_plan=True``).
    """

    loss: float
    gw_loss: float
    feature_loss: float
    epsilon: float
    iterations: int
    inner_iterations: int
    converged: bool
    marginal_error: float
    backend: str
    working_dtype: str
    best_init: int
    losses: list[float]
    grad_x: np.ndarray | None
    grad_y: np.ndarray | None
    grad_features_x: np.ndarray | None
    grad_features_y: np.ndarray | None
    plan: np.ndarray | None

    def __repr__(self):
        return (
            f"GromovResult(loss={self.loss:.6g}, iterations={self.iterations}, "
            f"converged={self.converged})"
        )


# The described options (birkhoff/transport/describe.hpp: GromovOptions), by name.
_OPTIONS = (
    "alpha",
    "max_iter",
    "tol",
    "n_init",
    "seed",
    "marginal_tol",
    "inner_max_iter",
    "backend",
    "dtype",
    "num_threads",
)


def _points(obj, name):
    arr = _as_array(obj, name)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: dtype {arr.dtype} is not supported; use a float array")
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name}: must be a 2-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _is_float32(array):
    """Whether an array or tensor holds float32 (either byte order)."""
    dtype = getattr(array, "dtype", None)
    if str(dtype) == "torch.float32":
        return True
    return isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype.itemsize == 4


def _inner_dtype(dtype, arrays):
    """The inner solves' arithmetic: as asked, else float32 when every input is float32."""
    if dtype is None:
        return "float32" if all(_is_float32(v) for v in arrays) else "float64"
    if str(dtype) in ("torch.float32", "torch.float64"):
        return str(dtype).removeprefix("torch.")
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = np.dtype(dtype).name
    if not isinstance(dtype, str):
        raise TypeError(f"dtype: must be a str ('float32' or 'float64') or None, got {dtype!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype: must be 'float32' or 'float64', got {dtype!r}")
    return dtype


def _solve(x, y, a, b, epsilon, features, init, options, gradients, return_plan, progress):
    dtype = _inner_dtype(
        options.pop("dtype"), [v for v in (x, y, *(features or ())) if v is not None]
    )
    x, y = _points(x, "x"), _points(y, "y")
    features_x, features_y = (None, None) if features is None else features
    if features is not None:
        features_x, features_y = (
            _points(features_x, "features_x"),
            _points(features_y, "features_y"),
        )
    if init is not None:
        init = _points(init, "init")
        if init.size == 0:
            raise ValueError("init: is empty; pass None for the product plan a b^T")
    described = {
        "alpha": as_float(options.pop("alpha", 0.5), "alpha"),
        "max_iter": as_int(options.pop("max_iter"), "max_iter"),
        "tol": as_float(options.pop("tol"), "tol"),
        "n_init": as_int(options.pop("n_init"), "n_init"),
        "seed": as_int(options.pop("seed"), "seed", -(2**63), 2**63 - 1),
        "marginal_tol": as_float(options.pop("marginal_tol"), "marginal_tol"),
        "inner_max_iter": as_int(options.pop("inner_max_iter"), "inner_max_iter"),
        "backend": options.pop("backend"),
        "dtype": dtype,
        "num_threads": as_int(options.pop("num_threads"), "num_threads"),
    }
    fields = _birkhoff.gromov_wasserstein(
        x,
        y,
        as_weights(a, "a", np.float64),
        as_weights(b, "b", np.float64),
        as_float(epsilon, "epsilon"),
        features_x,
        features_y,
        init,
        as_bool(gradients, "gradients"),
        as_bool(return_plan, "return_plan"),
        progress_callback(progress),
        described,
    )
    return GromovResult(fields)


def gromov_wasserstein(
    x: ArrayLike,
    y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    epsilon: float = 0.1,
    max_iter: int = 100,
    tol: float = 1e-4,
    n_init: int = 1,
    seed: int = 0,
    init: ArrayLike | None = None,
    marginal_tol: float = 1e-5,
    inner_max_iter: int = 20000,
    backend: str = "auto",
    dtype: str | None = None,
    gradients: bool = False,
    return_plan: bool = False,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> GromovResult:
    """Entropic Gromov-Wasserstein between two point clouds, O((n + m) d) memory.

    Solves min_T GW(T) + epsilon KL(T | a b^T) over plans with marginals a and b, the inner
    costs |x_i - x_k|^2 and |y_j - y_l|^2 and the square loss, by POT's projected gradient:
    each outer iteration is the entropic OT plan (converged to ``marginal_tol``) for the
    linearised cost 2 M(T).

    Args:
        x: (n, dx) source points (any real dtype; used as float64, a copy if it is not; float32
            points select float32 inner solves unless ``dtype`` says otherwise).
        y: (m, dy) target points; dy may differ from dx.
        a: (n,) non-negative weights, default uniform 1/n.
        b: (m,) weights, default uniform 1/m; sum(a) == sum(b) (relative 1e-5).
        epsilon: the entropic regularisation, in the units of the linearised cost (distance^4),
            POT's ``epsilon``.
        max_iter: outer iterations at the most, per initial plan.
        tol: stop when K (the linearisation, which fixes the next plan) changes by less than
            this, relative to its norm.
        n_init: initial plans: the product plan a b^T (or ``init``), then n_init - 1 monotone
            couplings of the clouds projected on random directions; the best is kept.
        seed: seed of the random initial plans.
        init: (n, m) an initial plan (POT's ``G0``) replacing the product plan.
        marginal_tol: each inner solve's relative marginal error.
        inner_max_iter: each inner solve's iteration budget.
        backend: the inner solves' backend, "auto" (default: multiscale for 1e8 pairs or more
            when few are expected to be kept, as :func:`birkhoff.sinkhorn`), "dense" or
            "multiscale". The plan products that form the linearisation read the same plan.
        dtype: the inner solves' arithmetic, "float32" (about twice the pairs per second; a
            solve float32 cannot bring to ``marginal_tol`` is finished in float64, as
            :func:`birkhoff.sinkhorn` does) or "float64", or the numpy / torch dtype; None
            (default): float32 when the points (and features) are all float32. The outer loop
            stays in float64. Raises ValueError for another name, TypeError for another type.
        gradients: also grad_x, grad_y (the final plan held fixed, POT's convention).
        return_plan: also the dense (n, m) plan.
        num_threads: OpenMP threads, 0 = OpenMP's default. Results do not depend on it.
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        GromovResult.

    Raises:
        TypeError: an argument that is not a real array, an option of the wrong type.
        ValueError: empty clouds, NaN/inf, bad or unequal weights, epsilon <= 0, init not of
            shape (n, m), an option out of range.
        KeyboardInterrupt: Ctrl-C during the solve.

    Source: [peyre2016] (entropic GW), [scetbon2022] (the low-rank linearisation).
    """
    options = {k: v for k, v in locals().items() if k in _OPTIONS}
    return _solve(x, y, a, b, epsilon, None, init, options, gradients, return_plan, progress)


def fused_gromov_wasserstein(
    x: ArrayLike,
    y: ArrayLike,
    features_x: ArrayLike,
    features_y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    alpha: float = 0.5,
    epsilon: float = 0.1,
    max_iter: int = 100,
    tol: float = 1e-4,
    n_init: int = 1,
    seed: int = 0,
    init: ArrayLike | None = None,
    marginal_tol: float = 1e-5,
    inner_max_iter: int = 20000,
    backend: str = "auto",
    dtype: str | None = None,
    gradients: bool = False,
    return_plan: bool = False,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> GromovResult:
    """Entropic fused Gromov-Wasserstein: structure (x, y) and features together.

    Minimises (1 - alpha) <T, M> + alpha GW(T) + epsilon KL(T | a b^T), with
    M_ij = |features_x_i - features_y_j|^2 (POT's ``entropic_fused_gromov_wasserstein`` with
    ``M = ot.dist(features_x, features_y)``), in O((n + m)(d + df)) memory.

    Args:
        x: (n, dx) source points (any real dtype; used as float64).
        y: (m, dy) target points; dy may differ from dx.
        features_x: (n, df) source features.
        features_y: (m, df) target features.
        a: (n,) non-negative weights, default uniform 1/n.
        b: (m,) weights, default uniform 1/m; sum(a) == sum(b) (relative 1e-5).
        alpha: weight of the structure term, in [0, 1].
        epsilon: the entropic regularisation (POT's ``epsilon``).
        max_iter: outer iterations at the most, per initial plan.
        tol: relative change of the linearisation at which the outer loop stops.
        n_init: initial plans: the product plan (or ``init``), then random monotone couplings.
        seed: seed of the random initial plans.
        init: (n, m) an initial plan (POT's ``G0``).
        marginal_tol: each inner solve's relative marginal error.
        inner_max_iter: each inner solve's iteration budget.
        backend: the inner solves' backend, as :func:`gromov_wasserstein`.
        dtype: the inner solves' arithmetic, as :func:`gromov_wasserstein`.
        gradients: also grad_x, grad_y, grad_features_x, grad_features_y.
        return_plan: also the dense (n, m) plan.
        num_threads: OpenMP threads, 0 = OpenMP's default.
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        GromovResult (loss = (1 - alpha) feature_loss + alpha gw_loss).

    Raises:
        As :func:`gromov_wasserstein`; ValueError naming features_x or features_y for a
        wrong number of rows or columns, alpha outside [0, 1].

    Source: [vayer2019].
    """
    options = {k: v for k, v in locals().items() if k in _OPTIONS}
    features = (features_x, features_y)
    return _solve(x, y, a, b, epsilon, features, init, options, gradients, return_plan, progress)


class GraphGromovResult(DescribedResult):
    """The result of :func:`graph_gromov_wasserstein`.

    Attributes:
        loss (float): the objective at the final plan, without the entropy: GW(T), or
            alpha GW(T) + (1 - alpha) F(T) for fused GW (POT's ``gw_dist`` / ``fgw_dist``).
        gw_loss (float): GW(T) = sum (C1_ik - C2_jl)^2 T_ij T_kl (POT's square-loss ``gwloss``).
        feature_loss (float): F(T) = sum T_ij |x1_i - x2_j|^2 (fused GW).
        epsilon (float): the entropic regularisation.
        iterations (int): outer iterations.
        inner_iterations (int): Sinkhorn iterations of all outer iterations.
        converged (bool): the outer tolerance was met and the last inner solve converged.
        marginal_error (float): relative marginal error of the final plan.
        plan (ndarray (n1, n2) float64): the final plan.
        matching (ndarray (n1,) int64): the node of G2 with each row's largest plan entry.
    """

    loss: float
    gw_loss: float
    feature_loss: float
    epsilon: float
    iterations: int
    inner_iterations: int
    converged: bool
    marginal_error: float
    plan: np.ndarray
    matching: np.ndarray

    def __repr__(self):
        return (
            f"GraphGromovResult(loss={self.loss:.6g}, iterations={self.iterations}, "
            f"converged={self.converged})"
        )


def _graph_side(edge_index, x, weight, adjacency, num_nodes, k):
    from . import _pyg_inputs as pyg
    from .align import _num_nodes

    if pyg.is_data(edge_index):
        if x is not None or weight is not None or num_nodes is not None:
            raise TypeError(
                f"x{k}: given with a Data as edge_index{k}, which holds its own x, "
                "edge_weight and num_nodes"
            )
        has_x = edge_index.x is not None
        x, edge_index, weight, num_nodes = pyg.unpack(edge_index, f"edge_index{k}")
        x = x if has_x else None
    e = as_ids(edge_index, f"edge_index{k}", 2, "(2, E)")
    f = as_features(x, f"x{k}", "fused GW's features")
    adj = as_reals(adjacency, f"adjacency{k}", 2)
    w = as_reals(weight, f"edge_weight{k}", 1)
    n = _num_nodes(num_nodes, f, adj, e, str(k))
    return n, e, w, adj, f


def graph_gromov_wasserstein(
    edge_index1=None,
    edge_index2=None,
    x1: ArrayLike | None = None,
    x2: ArrayLike | None = None,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    edge_weight1: ArrayLike | None = None,
    edge_weight2: ArrayLike | None = None,
    adjacency1: ArrayLike | None = None,
    adjacency2: ArrayLike | None = None,
    num_nodes1: int | None = None,
    num_nodes2: int | None = None,
    structure: str = "adjacency",
    alpha: float = 0.5,
    epsilon: float = 0.01,
    max_iter: int = 100,
    tol: float = 1e-6,
    marginal_tol: float = 1e-6,
    inner_max_iter: int = 10000,
    init: ArrayLike | None = None,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> GraphGromovResult:
    """Entropic (fused) Gromov-Wasserstein between two undirected graphs.

    Minimises GW(T) + epsilon KL(T | a b^T) (or, with features x1 and x2, fused GW:
    alpha GW(T) + (1 - alpha) sum T_ij |x1_i - x2_j|^2 + epsilon KL) over plans with marginals
    a and b, the inner costs C1, C2 the adjacency matrices (``structure="adjacency"``, kept
    sparse) or the shortest-path lengths (``"shortest_path"``, dense), the square loss, by
    POT's projected gradient (``entropic_gromov_wasserstein`` /
    ``entropic_fused_gromov_wasserstein`` with ``loss_fun="square_loss"``): each outer
    iteration is a log-stabilised Sinkhorn solve, to ``marginal_tol``, for the linearised cost.
    The plan is dense: n1 n2 at most 10^8 (ValueError beyond; coarsen the graphs first).

    Args:
        edge_index1: (2, E1) integer edge list of G1, or a ``torch_geometric.data.Data``
            (its x, edge_weight and num_nodes are used; then leave x1, edge_weight1 and
            num_nodes1 unset). Each edge may be listed once or in both orientations.
        edge_index2: (2, E2) edge list of G2, or a Data.
        x1: (n1, d) float32 node features of G1: fused GW when x2 is given too.
        x2: (n2, d) float32 node features of G2.
        a: (n1,) non-negative node weights, default uniform 1/n1.
        b: (n2,) weights, default uniform 1/n2; sum(a) == sum(b) (relative 1e-5).
        edge_weight1: (E1,) edge weights of G1 (adjacency entries; lengths for shortest paths).
        edge_weight2: (E2,) edge weights of G2.
        adjacency1: (n1, n1) dense symmetric adjacency of G1 instead of an edge list.
        adjacency2: (n2, n2) dense symmetric adjacency of G2 instead of an edge list.
        num_nodes1: node count of G1 (default: rows of x1, else the largest id + 1).
        num_nodes2: node count of G2.
        structure: "adjacency" or "shortest_path" (pairs in different components get the
            largest finite distance plus one).
        alpha: fused GW's weight of the structure term, in [0, 1].
        epsilon: the entropic regularisation, in the units of the linearised cost (POT's
            ``epsilon``).
        max_iter: outer iterations at the most.
        tol: stop when sum |T_k+1 - T_k| / sum T_k is at most this.
        marginal_tol: each inner solve's relative marginal error.
        inner_max_iter: each inner solve's iteration budget.
        init: (n1, n2) an initial plan (POT's ``G0``) replacing a b^T.
        num_threads: OpenMP threads, 0 = OpenMP's default (the inner solve's
            matrix-vector products use the system BLAS's threads).
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        GraphGromovResult with the (n1, n2) plan and each row's argmax ``matching``.

    Raises:
        TypeError: ids that are not integers, features not float32-convertible, a Data with
            x1/edge_weight1/num_nodes1 also given.
        ValueError: ids out of range, NaN/inf, non-positive lengths for shortest paths, bad or
            unequal weights, epsilon <= 0, features of different d, init of the wrong shape,
            a plan above 10^8 entries, an option out of range.
        KeyboardInterrupt: Ctrl-C during the solve.

    Source: [peyre2016] (entropic GW), [vayer2019] (fused GW).
    """
    n1, e1, w1, adj1, f1 = _graph_side(edge_index1, x1, edge_weight1, adjacency1, num_nodes1, 1)
    n2, e2, w2, adj2, f2 = _graph_side(edge_index2, x2, edge_weight2, adjacency2, num_nodes2, 2)
    if (f1 is None) != (f2 is None):
        raise ValueError("x2: fused GW needs features on both graphs (x1 and x2) or on neither")
    if structure not in ("adjacency", "shortest_path"):
        raise ValueError(f"structure: must be 'adjacency' or 'shortest_path', got {structure!r}")
    if init is not None:
        init = _points(init, "init")
        if init.size == 0:
            raise ValueError("init: is empty; pass None for the product plan a b^T")
    options = {
        "alpha": as_float(alpha, "alpha"),
        "structure": structure,
        "max_iter": as_int(max_iter, "max_iter"),
        "tol": as_float(tol, "tol"),
        "marginal_tol": as_float(marginal_tol, "marginal_tol"),
        "inner_max_iter": as_int(inner_max_iter, "inner_max_iter"),
        "num_threads": as_int(num_threads, "num_threads"),
    }
    fields = _birkhoff.graph_gromov_wasserstein(
        n1,
        n2,
        e1,
        e2,
        w1,
        w2,
        adj1,
        adj2,
        f1,
        f2,
        as_weights(a, "a", np.float64),
        as_weights(b, "b", np.float64),
        as_float(epsilon, "epsilon"),
        init,
        options,
        progress_callback(progress),
    )
    return GraphGromovResult(fields)
