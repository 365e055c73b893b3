"""The hard c-transform of a potential between two point clouds, streamed (no n x m matrix)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import as_int, as_point_pair, as_reals, as_weights
from ._solver_args import cost_spec

__all__ = ["CTransformResult", "c_transform"]


class CTransformResult:
    """The result of :func:`c_transform`.

    Attributes:
        values (ndarray (n,)): c_i = min_j C_ij - g_j, the points' dtype.
        argmin (ndarray (n,) int64): the minimising j (the smallest on ties).
        value (float): the semi-dual value <a, c> + <b, g>.
        grad_x (ndarray (n, d)): d value / d x, a_i dC/dx (x_i, y_argmin_i) (Danskin).
        grad_g (ndarray (m,)): d value / d g, b_j minus the mass of a over the cell of j.
    """

    def __init__(self, values, argmin, value, grad_x, grad_g):
        self.values, self.argmin, self.value = values, argmin, float(value)
        self.grad_x, self.grad_g = grad_x, grad_g

    def __repr__(self):
        return f"CTransformResult(value={self.value:.6g}, n={self.values.shape[0]})"


def c_transform(
    x: ArrayLike,
    y: ArrayLike,
    g: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    cost: str = "sqeuclidean",
    p: float | None = None,
    half_cost: bool = False,
    num_threads: int = 0,
) -> CTransformResult:
    """Hard c-transform c_i = min_j C_ij - g_j and the semi-dual value, streamed.

    The semi-dual of unregularised OT ([santambrogio2015] §1.6): for any potential g on y,
    <a, g^c> + <b, g> is at most the transport cost, with equality at an optimal g, and its
    gradient (Danskin) drives semi-discrete and semi-dual solvers. Each point's minimum is one
    streamed pass over y: memory O((n + m) d). :func:`birkhoff.torch.c_transform` is the same
    with tensors and autograd.

    Args:
        x: (n, d) points, float32 or float64 (C order is used without a copy).
        y: (m, d) points of the same dtype.
        g: (m,) potential on y (converted to the points' dtype).
        a: (n,) weights of x, default uniform 1/n.
        b: (m,) weights of y, default uniform 1/m.
        cost: "sqeuclidean", "euclidean" or "cosine", as :func:`birkhoff.sinkhorn`.
        p: the power of cost="euclidean" (default 1).
        half_cost: with sqeuclidean, C = |x - y|^2 / 2.
        num_threads: OpenMP threads, 0 = OpenMP's default.

    Returns:
        CTransformResult with ``values``, ``argmin``, ``value``, ``grad_x`` and ``grad_g``.

    Raises:
        TypeError: x or y not float32/float64 or of different dtypes; g not real.
        ValueError: empty clouds, a dimension mismatch, NaN/inf, g or weights of the wrong
            length, negative weights, an unknown cost.

    Source: [santambrogio2015] §1.6; [flashsinkhorn2026] §8.
    """
    x, y = as_point_pair(x, y)
    if g is None:
        raise TypeError("g: expected an (m,) array of the potential on y, got None")
    g = np.ascontiguousarray(as_reals(g, "g", 1), dtype=x.dtype)
    if g.shape[0] != y.shape[0]:
        raise ValueError(f"g: has {g.shape[0]} entries but y has {y.shape[0]} points")
    a = as_weights(a, "a", x.dtype)
    b = as_weights(b, "b", x.dtype)
    spec = cost_spec(cost, p, half_cost)
    values, argmin, value, grad_x, grad_g = _birkhoff.c_transform(
        x, y, g, a, b, spec, as_int(num_threads, "num_threads")
    )
    return CTransformResult(values, argmin, value, grad_x, grad_g)
