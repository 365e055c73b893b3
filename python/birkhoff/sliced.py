"""Sliced and max-sliced Wasserstein distances: exact 1-D transport on random directions.

Each direction projects both clouds onto a line, where optimal transport is the monotone
coupling of the sorted points, so the cost is exact and O((n + m) log(n + m)) per direction,
with no entropic bias. Source: [bonneel2015] (sliced), [deshpande2019] (max-sliced); the
definitions and the (d, L) layout of the directions are POT's.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import _as_array, as_bool, as_float, as_int, as_point_pair, as_weights
from ._described import DescribedResult

__all__ = ["SlicedResult", "max_sliced_wasserstein", "random_directions", "sliced_wasserstein"]


class SlicedResult(DescribedResult):
    """The result of :func:`sliced_wasserstein`.

    Attributes:
        loss (float): SW_p = (mean over directions of W_p^p)^(1/p); max-sliced: the largest
            projected W_p^p to the power 1/p (POT's ``sliced_wasserstein_distance`` and
            ``max_sliced_wasserstein_distance``). It scales with the common mass of a and b.
        n_projections (int): L, the number of directions.
        projected (ndarray (L,) float64): W_p^p on each direction (POT's ``projected_emds``).
        projections (ndarray (d, L)): the directions, one per column, dtype of x.
        grad_x (ndarray (n, d)), grad_y (ndarray (m, d)): gradients of ``loss`` in the points
            (None unless ``gradients=True``); exact where no two projected points tie, zero
            where the loss is zero.
        grad_a (ndarray (n,)), grad_b (ndarray (m,)): gradients of ``loss`` in the weights,
            from each line's dual potentials (defined up to a constant shared by both sides).
    """

    loss: float
    n_projections: int
    projected: np.ndarray
    projections: np.ndarray
    grad_x: np.ndarray | None
    grad_y: np.ndarray | None
    grad_a: np.ndarray | None
    grad_b: np.ndarray | None

    def __repr__(self):
        return f"SlicedResult(loss={self.loss:.6g}, n_projections={self.n_projections})"


def sliced_wasserstein(
    x: ArrayLike,
    y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    n_projections: int = 50,
    seed: int = 0,
    p: float = 2.0,
    projections: ArrayLike | None = None,
    max_sliced: bool = False,
    gradients: bool = False,
    num_threads: int = 0,
) -> SlicedResult:
    """Sliced Wasserstein distance between two weighted point clouds.

    Args:
        x: (n, d) source points, float32 or float64 (C order is not copied); lists are
            converted as for :func:`birkhoff.sinkhorn`.
        y: (m, d) target points, same dtype and d.
        a: (n,) non-negative weights (default uniform 1/n), converted to x's dtype.
        b: (m,) weights (default uniform 1/m); sum(a) == sum(b) (relative 1e-5).
        n_projections: L, the number of random unit directions (when ``projections`` is None).
        seed: seed of the directions; the same seed gives the same directions on every
            machine (they differ from numpy's: pass ``projections`` to use given ones).
        p: exponent of the cost |s - t|^p on each line, p >= 1.
        projections: (d, L) directions, one per column, used as given (POT's layout).
        max_sliced: the largest projected cost instead of the mean.
        gradients: also compute grad_x, grad_y, grad_a, grad_b.
        num_threads: OpenMP threads, 0 = OpenMP's default. Results do not depend on it.

    Returns:
        SlicedResult.

    Raises:
        TypeError: points not float32/float64, or of two dtypes; an option of
            the wrong type.
        ValueError: empty clouds, dimension mismatch, NaN/inf, weights of the wrong length,
            negative or of unequal total mass, projections not of shape (d, L) or not finite,
            n_projections < 1, p < 1, projected costs that overflow float64.

    Source: [bonneel2015], [deshpande2019].
    """
    x, y = as_point_pair(x, y)
    a = as_weights(a, "a", x.dtype)
    b = as_weights(b, "b", x.dtype)
    if projections is not None:
        projections = _as_array(projections, "projections", list_dtype=x.dtype)
        if projections.dtype.kind not in "fiu":
            raise TypeError(f"projections: dtype {projections.dtype} is not supported")
        if projections.ndim != 2:
            raise ValueError(
                f"projections: must be a 2-D array of shape (d, L), got shape {projections.shape}"
            )
        projections = np.ascontiguousarray(projections, dtype=x.dtype)
    options = {
        "n_projections": as_int(n_projections, "n_projections"),
        "seed": as_int(seed, "seed", -(2**63), 2**63 - 1),
        "p": as_float(p, "p"),
        "max_sliced": as_bool(max_sliced, "max_sliced"),
        "num_threads": as_int(num_threads, "num_threads"),
    }
    fields = _birkhoff.sliced_wasserstein(
        x, y, a, b, projections, as_bool(gradients, "gradients"), options
    )
    return SlicedResult(fields)


def max_sliced_wasserstein(
    x: ArrayLike, y: ArrayLike, a: ArrayLike | None = None, b: ArrayLike | None = None, **kwargs
) -> SlicedResult:
    """Max-sliced Wasserstein distance: :func:`sliced_wasserstein` with ``max_sliced=True``.

    The largest projected W_p over the sampled directions, to the power 1/p [deshpande2019];
    the arguments, result and errors are :func:`sliced_wasserstein`'s.
    """
    return sliced_wasserstein(x, y, a, b, max_sliced=True, **kwargs)


def random_directions(d: int, n_projections: int, seed: int = 0) -> np.ndarray:
    """The (d, L) unit directions :func:`sliced_wasserstein` draws from ``seed`` (float64)."""
    d = as_int(d, "d", 1)
    count = as_int(n_projections, "n_projections", 1)
    flat = np.asarray(
        _birkhoff.random_directions(d, count, as_int(seed, "seed", -(2**63), 2**63 - 1))
    )
    return flat.reshape(d, count)
