"""birkhoff.torch.fixed_support_barycenter: the debiased barycenter on a fixed support.

The weights q* minimise F(q, theta) = sum_k w_k S_eps(q, measure k) over measures of the given
mass ([janati2020] §3), a set that does not depend on theta (the support's and the clouds'
positions, the clouds' weights, the measures' weights w). By the envelope theorem
dF(q*(theta), theta)/dtheta is the partial derivative of F at q* held fixed: one differentiable
Sinkhorn divergence per measure. (The entropic barycenter of iterative Bregman projections
minimises sum_k w_k OT_eps(q, measure k) + eps <q, log q> + const, not its reported loss, so
its loss has no such gradient: debias=False is refused here.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ._arrays import as_bool, as_float
from ._torch_inputs import _points, _weights
from .barycenter import fixed_support_barycenter as _numpy_fixed_support_barycenter

__all__ = ["TorchFixedBarycenterResult", "fixed_support_barycenter"]


class TorchFixedBarycenterResult:
    """The result of :func:`birkhoff.torch.fixed_support_barycenter`.

    Besides the attributes below it holds ``iterations``, ``converged`` and
    ``marginal_error``, as :class:`birkhoff.FixedBarycenterResult` does.

    Attributes:
        points (Tensor (n, d)): the fixed support, as given.
        weights (Tensor (n,)): the barycenter's weights q*, of the measures' total mass. Not
            differentiable: a backward pass through them raises (differentiate ``loss``).
        loss (Tensor, 0-d): sum_k w_k S_eps(q*, measure k), differentiable in the support, the
            clouds, their weights and ``weights`` of the measures (envelope theorem at q*).
        losses (list of Tensor, 0-d): each measure's term, differentiable likewise.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (
            f"TorchFixedBarycenterResult(loss={float(self.loss.detach()):.6g}, "
            f"n={self.weights.shape[0]}, iterations={self.iterations}, "
            f"converged={self.converged})"
        )


class _Constant(torch.autograd.Function):
    """q* as a tensor of the graph whose backward pass raises.

    q* depends on the inputs but its derivative is not computed; a silent zero would be a wrong
    gradient.
    """

    @staticmethod
    def forward(ctx, q, *inputs):
        return q.clone()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "fixed_support_barycenter: the weights are not differentiable in the inputs; "
            "differentiate the result's loss (envelope theorem) instead"
        )


def _measure_weights(weights, count, dtype):
    """(K,) tensor of the measures' weights normalised to sum 1 (differentiable if given so)."""
    if weights is None:
        return torch.full((count,), 1.0 / count, dtype=dtype)
    w = weights if isinstance(weights, torch.Tensor) else torch.as_tensor(np.asarray(weights))
    if w.dim() != 1 or w.shape[0] != count:
        raise ValueError(
            f"weights: expected ({count},) weights of the measures, got {tuple(w.shape)}"
        )
    w = w.to(dtype)
    return w / w.sum()


def fixed_support_barycenter(
    support: torch.Tensor,
    clouds: Sequence[torch.Tensor] | None = None,
    weights: Any = None,
    *,
    cloud_weights: Any = None,
    blur: float = 0.05,
    cost: str = "sqeuclidean",
    p: float | None = None,
    half_cost: bool = False,
    debias: bool = True,
    max_iter: int = 2000,
    tol: float = 1e-7,
    marginal_tol: float = 1e-6,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
) -> TorchFixedBarycenterResult:
    """Debiased Sinkhorn barycenter on a fixed support, its loss differentiable.

    The forward pass is :func:`birkhoff.fixed_support_barycenter` (debiased) with the same
    arguments: the weights q* on ``support`` minimising sum_k w_k S_eps(q, measure k)
    ([janati2020] Alg. 1). ``loss`` is then recomputed from q* by one differentiable divergence
    per measure (:func:`birkhoff.torch.sinkhorn` with ``debias=True``, to ``marginal_tol``): by
    the envelope theorem its gradient is that of the barycenter's loss, in the support's and
    the clouds' positions, the clouds' weights and the measures' weights. Gradients in a
    cloud's weights are those of balanced OT: defined up to a constant (only directions that
    keep the mass count). q* itself is not differentiated.

    Args:
        support: (n, d) CPU float32/float64 tensor, the fixed support.
        clouds: K tensors (m_k, d) of the support's dtype; default: every measure lives on the
            support (``cloud_weights`` then gives the K histograms).
        weights: (K,) weights of the measures (normalised), default uniform; a tensor may
            require grad.
        cloud_weights: K tensors (m_k,) or a (K, n) tensor of histograms on the support, of one
            total mass; default uniform. They may require grad.
        blur: epsilon = blur**p in the cost's units.
        cost: "sqeuclidean", "euclidean" or "cosine".
        p: the exponent of cost="euclidean".
        half_cost: with sqeuclidean, |x - y|^2 / 2.
        debias: must be True (the entropic barycenter's loss is not stationary in q; use
            :func:`birkhoff.fixed_support_barycenter` for it).
        max_iter: barycenter iterations at the most.
        tol: the barycenter's stopping tolerance, as :func:`birkhoff.fixed_support_barycenter`.
        marginal_tol: the marginal tolerance of the loss's solves.
        num_threads: OpenMP threads, 0 = OpenMP's default.
        progress: True for a progress bar, or a callable(stage, done, total).

    Returns:
        TorchFixedBarycenterResult.

    Raises:
        TypeError, ValueError: as :func:`birkhoff.fixed_support_barycenter`, naming the
            argument; TypeError for a support or cloud that is not a CPU float tensor;
            ValueError for ``debias=False``.
        RuntimeError: in backward, through ``weights``.

    Source: [janati2020] Alg. 1; the gradient by the envelope theorem.
    """
    from .torch import sinkhorn

    if as_bool(debias, "debias") is not True:
        raise ValueError(
            "debias: the entropic barycenter (debias=False) minimises sum_k w_k OT_eps(q, "
            "measure k) + eps <q, log q>, not its loss, so its loss has no envelope gradient; "
            "use debias=True or birkhoff.fixed_support_barycenter"
        )
    x = _points(support, "support")
    ys = None
    if clouds is not None:
        if isinstance(clouds, torch.Tensor) or not isinstance(clouds, (list, tuple)) or not clouds:
            raise TypeError("clouds: expected a non-empty list of (m_k, d) tensors")
        ys = [_points(c, f"clouds[{k}]") for k, c in enumerate(clouds)]
    if cloud_weights is not None:
        if isinstance(cloud_weights, torch.Tensor) and cloud_weights.dim() == 2:
            cloud_weights = list(cloud_weights.unbind(0))
        elif isinstance(cloud_weights, np.ndarray) and cloud_weights.ndim == 2:
            cloud_weights = list(cloud_weights)
        if not isinstance(cloud_weights, (list, tuple)):
            raise TypeError("cloud_weights: expected K weight tensors or a (K, n) tensor")
    count = len(ys) if ys is not None else len(cloud_weights or [])
    if cloud_weights is not None and len(cloud_weights) != count:
        raise ValueError(f"cloud_weights: has {len(cloud_weights)} entries for {count} measures")
    given = None
    if cloud_weights is not None:
        given = [
            w if isinstance(w, torch.Tensor) else torch.as_tensor(np.asarray(w))
            for w in cloud_weights
        ]
    lam = _measure_weights(weights, count, x.dtype) if count else None
    r = _numpy_fixed_support_barycenter(
        x.numpy(),
        None if ys is None else [y.numpy() for y in ys],
        None if lam is None else lam.detach().numpy(),
        cloud_weights=None
        if given is None
        else [
            _weights(w, f"cloud_weights[{k}]", x, len(x) if ys is None else len(ys[k])).numpy()
            for k, w in enumerate(given)
        ],
        blur=blur,
        cost=cost,
        p=p,
        half_cost=half_cost,
        max_iter=max_iter,
        tol=tol,
        num_threads=num_threads,
        progress=progress,
    )
    marginal_tol = as_float(marginal_tol, "marginal_tol")
    q = torch.from_numpy(np.array(r.weights))
    points = list(clouds) if ys is not None else [support] * count
    masses = given if given is not None else [None] * count
    losses = [
        sinkhorn(
            support,
            y,
            a=q,
            b=b,
            blur=blur,
            debias=True,
            cost=cost,
            p=p,
            half_cost=half_cost,
            marginal_tol=marginal_tol,
            num_threads=num_threads,
        ).loss
        for y, b in zip(points, masses)
    ]
    loss = sum(w * term for w, term in zip(lam, losses))
    sources = [t for t in (support, weights, *(clouds or []), *(given or [])) if _grad(t)]
    return TorchFixedBarycenterResult(
        points=support,
        weights=_Constant.apply(q, *sources) if sources else q,
        loss=loss,
        losses=losses,
        iterations=r.iterations,
        converged=r.converged,
        marginal_error=r.marginal_error,
    )


def _grad(t):
    return isinstance(t, torch.Tensor) and t.requires_grad
