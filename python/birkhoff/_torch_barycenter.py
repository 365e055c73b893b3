"""birkhoff.torch.barycenter: the free-support barycenter with its support differentiable.

The support X* is a stationary point of L(X, Y) = sum_k w_k OT_eps((X, b), (Y_k, a_k)), so by the
implicit function theorem dX*/dY_k = -(d2L/dX2)^-1 d2L/dXdY_k; the backward pass solves the
Hessian system by conjugate gradients, each product one streamed HVP (double backward).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from ._arrays import as_float, as_int
from ._torch_inputs import _points, _weights
from .barycenter import _start
from .barycenter import barycenter as _numpy_barycenter

__all__ = ["TorchBarycenterResult", "barycenter"]


class TorchBarycenterResult:
    """The result of :func:`birkhoff.torch.barycenter`.

    Besides the attributes below it holds ``losses``, ``iterations``, ``inner_iterations``,
    ``converged`` and ``displacement``, as :class:`birkhoff.BarycenterResult` does.

    Attributes:
        points (Tensor (n, d)): the barycenter's support, differentiable in the clouds.
        support_weights (Tensor (n,)): its weights b (fixed).
        loss (Tensor, 0-d): sum_k w_k OT_eps(barycenter, cloud k) at the returned support,
            differentiable in the clouds and their weights (envelope theorem: the support is
            stationary).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        return (
            f"TorchBarycenterResult(loss={float(self.loss.detach()):.6g}, "
            f"n={self.points.shape[0]}, "
            f"iterations={self.iterations}, converged={self.converged})"
        )


def _objective(x, clouds, masses, b, lam, blur, marginal_tol):
    from .torch import sinkhorn

    return sum(
        w * sinkhorn(x, y, a=b, b=a, blur=blur, marginal_tol=marginal_tol).loss
        for w, y, a in zip(lam, clouds, masses)
    )


def _conjugate_gradient(apply, rhs, max_iter, rtol):
    """Solves apply(u) = rhs, apply symmetric positive definite ([nocedal2006] Alg. 5.2).

    Returns u and whether the residual reached rtol |rhs|.
    """
    u = torch.zeros_like(rhs)
    r, p = rhs.clone(), rhs.clone()
    rr, target = float((r * r).sum()), rtol * float(rhs.norm())
    for _ in range(max_iter):
        if rr**0.5 <= target:
            return u, True
        hp = apply(p)
        alpha = rr / float((p * hp).sum())
        u, r = u + alpha * p, r - alpha * hp
        rr_new = float((r * r).sum())
        p, rr = r + (rr_new / rr) * p, rr_new
    return u, rr**0.5 <= target


class _Support(torch.autograd.Function):
    """X*(Y): the solved support; its vector-Jacobian product by the implicit function theorem."""

    @staticmethod
    def forward(ctx, support, setup, *tensors):
        ctx.setup = setup
        ctx.save_for_backward(support, *tensors)
        return support.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        support, *tensors = ctx.saved_tensors
        k = len(tensors) // 2
        s = ctx.setup
        if any(ctx.needs_input_grad[2 + k :]):
            # The streamed HVP has no mixed derivative in the weights: refuse, never return 0.
            raise RuntimeError(
                "barycenter backward: points are differentiable in the clouds' positions, not "
                "in cloud_weights (loss is differentiable in both); detach cloud_weights"
            )
        # In float64 whatever the inputs: float32 Hessian-vector products are too noisy for CG.
        wide = torch.float64
        with torch.enable_grad():
            x = support.detach().to(wide).requires_grad_(True)
            ys = [
                t.detach().to(wide).requires_grad_(need)
                for t, need in zip(tensors, ctx.needs_input_grad[2:])
            ]
            b = s["b"].to(wide)
            loss = _objective(x, ys[:k], ys[k:], b, s["lam"], s["blur"], s["marginal_tol"])
            (gx,) = torch.autograd.grad(loss, x, create_graph=True)
            u, ok = _conjugate_gradient(
                lambda v: torch.autograd.grad(gx, x, v, retain_graph=True)[0].detach(),
                grad.detach().to(wide),
                s["hvp_max_iter"],
                s["hvp_rtol"],
            )
            if not ok:
                raise RuntimeError(
                    "barycenter backward: the Hessian solve did not reach hvp_rtol in "
                    f"{s['hvp_max_iter']} CG iterations; raise hvp_max_iter or blur"
                )
            wanted = [y for y in ys if y.requires_grad]
            parts = (
                iter(torch.autograd.grad(gx, wanted, u, allow_unused=True)) if wanted else iter(())
            )
            grads = []
            for y in ys:
                g = next(parts) if y.requires_grad else None
                grads.append(None if g is None else -g.to(support.dtype))
        return (None, None, *grads)


def barycenter(
    clouds: Sequence[torch.Tensor],
    weights: Any = None,
    *,
    cloud_weights: Sequence[Any] | None = None,
    blur: float = 0.05,
    n_support: int | None = None,
    init: Any = None,
    support_weights: Any = None,
    seed: int = 0,
    max_iter: int = 100,
    tol: float = 1e-7,
    marginal_tol: float = 1e-5,
    num_threads: int = 0,
    hvp_max_iter: int = 300,
    hvp_rtol: float = 1e-8,
    progress: Any = None,
) -> TorchBarycenterResult:
    """Free-support entropic Wasserstein barycenter of K tensor clouds, differentiable.

    The forward pass is :func:`birkhoff.barycenter` (the fixed-point iteration of [cuturi2014]
    Alg. 2 on streamed Sinkhorn solves, squared Euclidean cost, epsilon = blur**2) with the same
    arguments. ``points`` is differentiable in the clouds: X* is a stationary point of
    L(X, Y) = sum_k w_k OT_eps((X, b), (Y_k, a_k)), so the backward pass applies
    -(d2L/dX2)^-1 d2L/dXdY_k (implicit function theorem), solving the Hessian system by
    conjugate gradients on streamed Hessian-vector products; it is exact at a converged
    barycenter (tighten ``tol`` and ``marginal_tol`` for accurate gradients). ``loss`` is
    differentiable in the clouds and ``cloud_weights`` by the envelope theorem.

    Args:
        clouds: K CPU float32/float64 tensors (m_k, d) of one dtype.
        weights: (K,) weights of the measures (normalised), default uniform.
        cloud_weights: K tensors, arrays or lists (m_k,) of one total mass, default uniform.
        blur: blur (length units), epsilon = blur**2.
        n_support: support points drawn from the clouds (``seed``), as :func:`birkhoff.barycenter`.
        init: (n, d) initial support (tensor or array; not differentiated).
        support_weights: (n,) the support's weights b (default as :func:`birkhoff.barycenter`).
        seed: seed of ``n_support``'s draw.
        max_iter: fixed-point iterations at most.
        tol: stop once sum_i |X_new,i - X_i|^2 < tol.
        marginal_tol: inner solves' marginal tolerance (the backward pass uses at most 1e-9).
        num_threads: OpenMP threads, 0 = OpenMP's default.
        progress: None, True (a bar) or a callable(stage, done, total).
        hvp_max_iter: CG iterations at most in the backward pass.
        hvp_rtol: CG relative residual of the backward pass.

    Returns:
        TorchBarycenterResult.

    Raises:
        TypeError, ValueError: as :func:`birkhoff.barycenter` (naming the argument); TypeError
            for a cloud that is not a CPU float tensor.
        RuntimeError: in backward, when the Hessian solve does not reach ``hvp_rtol``.

    Source: [cuturi2014] Alg. 2; the implicit gradient from the stationarity of L (implicit
    function theorem), its solve by CG [nocedal2006] Alg. 5.2.
    """
    if isinstance(clouds, torch.Tensor) or not isinstance(clouds, (list, tuple)) or not clouds:
        raise TypeError("clouds: expected a non-empty list of (m_k, d) tensors")
    ys = [_points(c, f"clouds[{k}]") for k, c in enumerate(clouds)]
    for k, y in enumerate(ys):
        if y.dim() != 2 or y.shape[0] == 0:
            raise ValueError(
                f"clouds[{k}]: expected a non-empty (m, d) tensor, got {tuple(y.shape)}"
            )
    if isinstance(weights, torch.Tensor):
        if weights.requires_grad:
            raise ValueError("weights: the measures' weights are not differentiable; detach them")
        weights = weights.detach().cpu().numpy()
    hvp_max_iter = as_int(hvp_max_iter, "hvp_max_iter", 1)
    hvp_rtol = as_float(hvp_rtol, "hvp_rtol")
    if not 0 < hvp_rtol < 1:
        raise ValueError(f"hvp_rtol: must lie in (0, 1), got {hvp_rtol}")
    if cloud_weights is None:
        masses = [torch.full((len(y),), 1.0 / len(y), dtype=y.dtype) for y in ys]
        given = None
    else:
        if len(cloud_weights) != len(ys):
            raise ValueError(
                f"cloud_weights: has {len(cloud_weights)} entries for {len(ys)} clouds"
            )
        given = [
            w if isinstance(w, torch.Tensor) else torch.as_tensor(np.asarray(w))
            for w in cloud_weights
        ]
        masses = [
            _weights(w, f"cloud_weights[{k}]", y, len(y)) for k, (w, y) in enumerate(zip(given, ys))
        ]
    arrays = [y.numpy() for y in ys]
    start, b = _start(
        arrays,
        None if given is None else [m.numpy() for m in masses],
        None
        if init is None
        else np.asarray(init.detach() if isinstance(init, torch.Tensor) else init),
        n_support,
        support_weights.detach().numpy()
        if isinstance(support_weights, torch.Tensor)
        else support_weights,
        seed,
    )
    start = np.ascontiguousarray(start, dtype=arrays[0].dtype)
    if start.ndim != 2 or start.shape[0] == 0:
        raise ValueError(f"init: expected a non-empty (n, d) array, got shape {start.shape}")
    b = (
        np.full(len(start), 1.0 / len(start), dtype=arrays[0].dtype)
        if b is None
        else np.ascontiguousarray(b, dtype=arrays[0].dtype)
    )
    r = _numpy_barycenter(
        arrays,
        weights,
        cloud_weights=None if given is None else [m.numpy() for m in masses],
        blur=blur,
        init=start,
        support_weights=b,
        max_iter=max_iter,
        tol=tol,
        marginal_tol=marginal_tol,
        num_threads=num_threads,
        progress=progress,
    )
    lam = np.ones(len(ys)) if weights is None else np.asarray(weights, dtype=np.float64)
    lam = (lam / lam.sum()).tolist()
    b_t = torch.from_numpy(b)
    support = torch.from_numpy(np.array(r.points))
    inputs = [*clouds, *(given if given is not None else masses)]
    setup = dict(
        b=b_t,
        lam=lam,
        blur=blur,
        marginal_tol=min(marginal_tol, 1e-9),
        hvp_max_iter=hvp_max_iter,
        hvp_rtol=hvp_rtol,
    )
    points = _Support.apply(support, setup, *inputs)
    weights_t = [
        m if isinstance(m, torch.Tensor) else torch.as_tensor(m) for m in inputs[len(ys) :]
    ]
    loss = _objective(support, list(clouds), weights_t, b_t, lam, blur, min(marginal_tol, 1e-9))
    return TorchBarycenterResult(
        points=points,
        support_weights=b_t,
        loss=loss,
        losses=r.losses,
        iterations=r.iterations,
        inner_iterations=r.inner_iterations,
        converged=r.converged,
        displacement=r.displacement,
    )
