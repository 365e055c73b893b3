"""Wasserstein barycenters of weighted point clouds, each step streamed Sinkhorn.

Free support (:func:`barycenter`): the support X moves by the fixed-point iteration of
[cuturi2014] Alg. 2 with entropic plans, X_i <- sum_k w_k (T_k Y_k)_i / b_i, T_k the plan between
(X, b) and cloud k (POT's ``free_support_sinkhorn_barycenter``). Fixed support
(:func:`fixed_support_barycenter`): the weights q on a given X, debiased [janati2020] or not
[benamou2015] (POT's ``barycenter_debiased`` and ``barycenter``). Both in O((n + max m_k) d)
memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import (
    argument_names,
    as_bool,
    as_float,
    as_int,
    as_length,
    as_points,
    as_reals,
    as_weights,
    progress_callback,
)
from ._described import DescribedResult
from ._solver_args import blur_to_epsilon, cost_spec

__all__ = [
    "BarycenterResult",
    "FixedBarycenterResult",
    "barycenter",
    "fixed_support_barycenter",
]


class BarycenterResult(DescribedResult):
    """The result of :func:`barycenter`.

    Attributes:
        points (ndarray (n, d)): the barycenter's support, dtype of the clouds.
        loss (float): sum_k w_k OT_eps(barycenter, cloud k), each term the Sinkhorn loss of the
            last iteration.
        losses (list of float): each cloud's OT_eps term.
        iterations (int): fixed-point iterations; inner_iterations (int): Sinkhorn iterations.
        converged (bool): the support moved by less than ``tol`` and every last inner solve
            converged.
        displacement (float): sum_i |X_new,i - X_i|^2 of the last iteration.
    """

    points: np.ndarray
    loss: float
    losses: list[float]
    iterations: int
    inner_iterations: int
    converged: bool
    displacement: float

    def __repr__(self):
        return (
            f"BarycenterResult(loss={self.loss:.6g}, n={self.points.shape[0]}, "
            f"iterations={self.iterations}, converged={self.converged})"
        )


def barycenter(
    clouds: Sequence[ArrayLike],
    weights: ArrayLike | None = None,
    *,
    cloud_weights: Sequence[ArrayLike] | None = None,
    blur: float = 0.05,
    n_support: int | None = None,
    init: ArrayLike | None = None,
    support_weights: ArrayLike | None = None,
    seed: int = 0,
    max_iter: int = 100,
    tol: float = 1e-7,
    marginal_tol: float = 1e-5,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> BarycenterResult:
    """Free-support entropic Wasserstein barycenter of K point clouds.

    Args:
        clouds: K arrays (m_k, d) of one float dtype (float32 or float64) and
            one d.
        weights: (K,) non-negative weights of the clouds, normalised to sum 1; default uniform.
        cloud_weights: K arrays (m_k,) of point weights (default uniform), each of the
            support's total mass.
        blur: epsilon = blur**2 (squared Euclidean cost), as :func:`birkhoff.sinkhorn`.
        n_support: the number of support points, drawn from all clouds' points with ``seed``;
            default: the first cloud's points (and weights) as the initial support.
        init: (n, d) the initial support instead.
        support_weights: (n,) the support's weights b (default uniform 1/n).
        seed: seed of the drawn support.
        max_iter: fixed-point iterations at the most.
        tol: stop when sum_i |X_new,i - X_i|^2 < tol (POT's stopThr).
        marginal_tol: each inner solve's relative marginal error.
        num_threads: OpenMP threads, 0 = OpenMP's default.
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        BarycenterResult with the support ``points``.

    Raises:
        TypeError: clouds of two dtypes, or not float32/float64.
        ValueError: no clouds, clouds of different dimensions, NaN/inf, weights of the wrong
            length, negative or of masses that differ from the support's, blur <= 0, an option
            out of range.
        KeyboardInterrupt: Ctrl-C during the solve.

    Source: [cuturi2014] Alg. 2; POT's free_support_sinkhorn_barycenter.
    """
    arrays = _clouds(clouds)
    dtype = arrays[0].dtype
    cloud_weights = _cloud_weights(cloud_weights, len(arrays), dtype)
    start, support_weights = _start(arrays, cloud_weights, init, n_support, support_weights, seed)
    options = {
        "max_iter": as_int(max_iter, "max_iter"),
        "tol": as_float(tol, "tol"),
        "marginal_tol": as_float(marginal_tol, "marginal_tol"),
        "num_threads": as_int(num_threads, "num_threads"),
    }
    epsilon = as_length(blur, "blur") ** 2
    fields = _birkhoff.barycenter(
        arrays,
        cloud_weights or [],
        _measure_weights(weights),
        start,
        as_weights(support_weights, "support_weights", dtype),
        epsilon,
        progress_callback(progress),
        options,
    )
    result = BarycenterResult(fields)
    if not result.converged and options["tol"] > 0:  # tol 0 asks for exactly max_iter
        warnings.warn(
            f"barycenter: not converged in {result.iterations} iterations (displacement "
            f"{result.displacement:.2g}, tol {options['tol']:g}); raise max_iter or loosen tol",
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def _start(arrays, cloud_weights, init, n_support, support_weights, seed):
    """The initial support and its weights (None: uniform) as :func:`barycenter` documents."""
    dtype = arrays[0].dtype
    if init is not None and n_support is not None:
        raise TypeError("n_support: give n_support or init, not both")
    if init is not None:
        return as_reals(init, "init", 2, dtype), support_weights
    if n_support is None:
        if support_weights is None and cloud_weights is not None:
            support_weights = cloud_weights[0]
        return arrays[0], support_weights
    count = as_int(n_support, "n_support", 1)
    pool = np.concatenate(arrays)
    rng = np.random.default_rng(as_int(seed, "seed", 0, 2**63 - 1))
    return pool[
        rng.choice(len(pool), size=count, replace=count > len(pool))
    ].copy(), support_weights


class FixedBarycenterResult(DescribedResult):
    """The result of :func:`fixed_support_barycenter`.

    Attributes:
        points (ndarray (n, d)): the fixed support, as given.
        weights (ndarray (n,)): the barycenter's weights q, dtype of the support, of the
            measures' total mass.
        loss (float): sum_k w_k S_eps(q, measure k) (debias) or OT_eps(q, measure k), each from a
            converged solve.
        losses (list of float): each measure's term.
        iterations (int): iterations run.
        converged (bool): the marginal error fell below ``tol``.
        marginal_error (float): sum_k w_k |P_k^T 1 - q|_1 / |q|_1 at the last iteration.
    """

    points: np.ndarray
    weights: np.ndarray
    loss: float
    losses: list[float]
    iterations: int
    converged: bool
    marginal_error: float

    def __repr__(self):
        return (
            f"FixedBarycenterResult(loss={self.loss:.6g}, n={self.weights.shape[0]}, "
            f"iterations={self.iterations}, converged={self.converged})"
        )


def fixed_support_barycenter(
    support: ArrayLike,
    clouds: Sequence[ArrayLike] | None = None,
    weights: ArrayLike | None = None,
    *,
    cloud_weights: Sequence[ArrayLike] | ArrayLike | None = None,
    blur: float = 0.05,
    cost: str = "sqeuclidean",
    p: float | None = None,
    half_cost: bool = False,
    debias: bool = True,
    max_iter: int = 2000,
    tol: float = 1e-7,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> FixedBarycenterResult:
    """Entropic Wasserstein barycenter on a fixed support: the weights q on ``support``.

    Minimises sum_k w_k S_eps(q, measure k), S_eps the debiased Sinkhorn divergence
    ([janati2020] Alg. 1), or sum_k w_k OT_eps(q, measure k) with ``debias=False``
    (iterative Bregman projections, [benamou2015]). Histograms on one grid are POT's
    ``ot.bregman.barycenter_debiased(A, M, reg)`` with ``support`` the grid, ``cloud_weights=A.T``
    and ``blur**2 = reg`` (M the squared Euclidean costs of the grid); here the measures may also
    live on their own point clouds, and no n x m cost matrix is formed.

    Args:
        support: (n, d) the fixed support, float32 or float64.
        clouds: K arrays (m_k, d), the measures' points, of the support's dtype and d; default:
            every measure lives on ``support`` (then ``cloud_weights`` gives the K histograms).
        weights: (K,) non-negative weights of the measures, normalised to sum 1; default uniform.
        cloud_weights: K arrays (m_k,) of point weights, or a (K, n) array of histograms on the
            support; default uniform. All of one total mass.
        blur: epsilon = blur**p in the cost's units, as :func:`birkhoff.sinkhorn`.
        cost: "sqeuclidean", "euclidean" or "cosine", as :func:`birkhoff.sinkhorn`.
        p: the exponent of cost="euclidean" (|x - y|^p, p >= 1).
        half_cost: with sqeuclidean, |x - y|^2 / 2.
        debias: the debiased barycenter (default) or the entropic one.
        max_iter: iterations at the most (each one streamed pass per measure each way).
        tol: stop when the plans' marginal error on the support and q's relative L1 change
            since the previous iteration both fall below this.
        num_threads: OpenMP threads, 0 = OpenMP's default.
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        FixedBarycenterResult with ``points`` (the support) and ``weights``.

    Raises:
        TypeError: arrays of two dtypes, or not float32/float64.
        ValueError: no measures, dimensions that differ, NaN/inf, weights of the wrong length,
            negative or of masses that differ, blur <= 0, an unknown cost, an option out of
            range.
        KeyboardInterrupt: Ctrl-C during the solve.

    Source: [janati2020] Alg. 1 and [benamou2015] in the log domain; POT's barycenter_debiased.
    """
    x = as_points(support, "support")
    if cloud_weights is not None and isinstance(cloud_weights, np.ndarray):
        cloud_weights = list(cloud_weights) if cloud_weights.ndim == 2 else [cloud_weights]
    if clouds is None:
        if cloud_weights is None:
            raise TypeError("cloud_weights: give the measures as clouds, cloud_weights or both")
        arrays = [x] * len(cloud_weights)
    else:
        arrays = _clouds(clouds)
        if arrays[0].dtype != x.dtype:
            raise TypeError(f"clouds[0]: dtype {arrays[0].dtype} differs from support's {x.dtype}")
    spec = cost_spec(cost, p, half_cost)
    options = {
        "debias": as_bool(debias, "debias"),
        "max_iter": as_int(max_iter, "max_iter"),
        "tol": as_float(tol, "tol"),
        "num_threads": as_int(num_threads, "num_threads"),
    }
    names = {"epsilon": "blur"}
    if clouds is None:  # the measures live on the support: its errors are the support's
        names |= {f"clouds[{k}]": "support" for k in range(len(arrays))}
    with argument_names(names):
        fields = _birkhoff.fixed_support_barycenter(
            x,
            arrays,
            _cloud_weights(cloud_weights, len(arrays), x.dtype) or [],
            _measure_weights(weights),
            blur_to_epsilon(blur, spec),
            spec,
            progress_callback(progress),
            options,
        )
    fields["points"] = x
    result = FixedBarycenterResult(fields)
    if not result.converged and options["tol"] > 0:  # tol 0 asks for exactly max_iter
        warnings.warn(
            f"fixed_support_barycenter: not converged in {result.iterations} iterations "
            f"(marginal error {result.marginal_error:.2g}, tol {options['tol']:g}); raise "
            "max_iter, or lower the blur against the support's spacing (docs/barycenter.md, "
            "Limits)",
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def _clouds(clouds) -> list[np.ndarray]:
    """K point clouds (m_k, d) of one float dtype."""
    if isinstance(clouds, np.ndarray) or not isinstance(clouds, (list, tuple)):
        raise TypeError("clouds: expected a list of (m_k, d) arrays")
    if len(clouds) == 0:
        raise ValueError("clouds: needs at least one point cloud")
    arrays = [as_points(c, f"clouds[{k}]") for k, c in enumerate(clouds)]
    for k, c in enumerate(arrays):
        if c.dtype != arrays[0].dtype:
            raise TypeError(
                f"clouds[{k}]: dtype {c.dtype} differs from clouds[0]'s {arrays[0].dtype}"
            )
    return arrays


def _cloud_weights(cloud_weights, count: int, dtype) -> list[np.ndarray] | None:
    """K weight vectors of ``dtype``, or None."""
    if cloud_weights is None:
        return None
    if not isinstance(cloud_weights, (list, tuple)):
        raise TypeError("cloud_weights: expected a list of (m_k,) arrays")
    if len(cloud_weights) != count:
        raise ValueError(f"cloud_weights: has {len(cloud_weights)} entries for {count} clouds")
    return [as_weights(w, f"cloud_weights[{k}]", dtype) for k, w in enumerate(cloud_weights)]


def _measure_weights(weights) -> np.ndarray | None:
    """The (K,) weights of the measures as float64, or None for uniform."""
    if weights is None:
        return None
    weights = as_reals(weights, "weights", 1)
    if weights.size == 0:
        raise ValueError("weights: has no entries; pass None for uniform weights")
    return weights
