"""Free-support Wasserstein barycenters of weighted point clouds, each step streamed Sinkhorn.

The support X of the barycenter moves by the fixed-point iteration of [cuturi2014] Alg. 2 with
entropic plans: X_i <- sum_k w_k (T_k Y_k)_i / b_i, T_k the plan between (X, b) and cloud k
(POT's ``free_support_sinkhorn_barycenter``), in O((n + max m_k) d) memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import (
    as_float,
    as_int,
    as_length,
    as_points,
    as_reals,
    as_weights,
    progress_callback,
)
from ._described import DescribedResult

__all__ = ["BarycenterResult", "barycenter"]


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
    if isinstance(clouds, np.ndarray) or not isinstance(clouds, (list, tuple)):
        raise TypeError("clouds: expected a list of (m_k, d) arrays")
    if len(clouds) == 0:
        raise ValueError("clouds: needs at least one point cloud")
    arrays = [as_points(c, f"clouds[{k}]") for k, c in enumerate(clouds)]
    dtype = arrays[0].dtype
    for k, c in enumerate(arrays):
        if c.dtype != dtype:
            raise TypeError(f"clouds[{k}]: dtype {c.dtype} differs from clouds[0]'s {dtype}")
    if cloud_weights is not None:
        if not isinstance(cloud_weights, (list, tuple)):
            raise TypeError("cloud_weights: expected a list of (m_k,) arrays")
        if len(cloud_weights) != len(arrays):
            raise ValueError(
                f"cloud_weights: has {len(cloud_weights)} entries for {len(arrays)} clouds"
            )
        cloud_weights = [
            as_weights(w, f"cloud_weights[{k}]", dtype) for k, w in enumerate(cloud_weights)
        ]
    if init is not None and n_support is not None:
        raise TypeError("n_support: give n_support or init, not both")
    if init is not None:
        start = as_reals(init, "init", 2, dtype)
    elif n_support is None:
        start = arrays[0]
        if support_weights is None and cloud_weights is not None:
            support_weights = cloud_weights[0]
    else:
        count = as_int(n_support, "n_support", 1)
        pool = np.concatenate(arrays)
        rng = np.random.default_rng(as_int(seed, "seed", 0, 2**63 - 1))
        start = pool[rng.choice(len(pool), size=count, replace=count > len(pool))].copy()
    if weights is not None:
        weights = as_reals(weights, "weights", 1)
        if weights.size == 0:
            raise ValueError("weights: has no entries; pass None for uniform weights")
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
        weights,
        start,
        as_weights(support_weights, "support_weights", dtype),
        epsilon,
        progress_callback(progress),
        options,
    )
    return BarycenterResult(fields)
