"""The hard c-transform and Newton-CG directions of birkhoff.torch."""

from __future__ import annotations

from typing import Any

import torch

from . import _birkhoff
from ._solver_args import cost_spec
from ._torch_inputs import _points, _to_torch, _weights


class _CTransform(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, native_out):
        _, _, value, grad_x, grad_g = native_out
        ctx.grads = (_to_torch(grad_x), _to_torch(grad_g))
        return torch.tensor(value, dtype=x.dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, go):
        gx, gg = ctx.grads
        return go * gx, go * gg, None


def c_transform(
    x: torch.Tensor,
    y: torch.Tensor,
    g: torch.Tensor,
    a: Any = None,
    b: Any = None,
    *,
    cost: str = "sqeuclidean",
    p: float | None = None,
    half_cost: bool = False,
    num_threads: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Hard c-transform c_i = min_j C_ij - g_j and the semi-dual value, streamed.

    Args:
        x: (n, d) CPU float32/float64 tensor.
        y: (m, d) tensor of the same dtype.
        g: (m,) potential on y.
        a: (n,) weights (None = uniform).
        b: (m,) weights (None = uniform).
        cost: the ground cost, as birkhoff.sinkhorn ("sqeuclidean", "euclidean", "cosine").
        p: the power of the euclidean cost (default 1).
        half_cost: with sqeuclidean, C = |x - y|^2 / 2 instead of |x - y|^2.
        num_threads: OpenMP threads, 0 = OpenMP's default.

    Returns:
        (c, argmin, value): c (n,) tensor, argmin (n,) int64 tensor (smallest j on ties),
        value = <a, c> + <b, g> as a 0-d tensor differentiable with respect to x and g
        (Danskin: a_i dC/dx (x_i, y_{argmin_i}) and b_j - sum of a over the cells of j).

    Source: Santambrogio (2015) §1.6; FlashSinkhorn §8.
    """
    xd, yd = _points(x, "x"), _points(y, "y")
    gd = _points(g, "g").to(xd.dtype).contiguous()
    ad = _weights(a, "a", xd, xd.shape[0])
    bd = _weights(b, "b", xd, yd.shape[0])
    spec = cost_spec(cost, p, half_cost)
    out = _birkhoff.c_transform(xd, yd, gd.reshape(-1), ad, bd, spec, int(num_threads))
    value = _CTransform.apply(x, g, out)
    return _to_torch(out[0]), _to_torch(out[1]), value


def inverse_hvp(
    loss: torch.Tensor, params: list[torch.Tensor], max_iter: int = 50, rtol: float = 1e-8
) -> tuple[list[torch.Tensor], int, bool, bool]:
    """Newton direction of a scalar ``loss`` in the parameters ``params``: w with H w = g.

    g = d loss / d params and H its Hessian; each CG iteration is one Hessian-vector product
    by double backward, which for birkhoff losses runs the streamed HVP (FlashSinkhorn §7)
    through whatever parametrisation maps ``params`` to the points (for example an affine
    registration). A Newton step is ``p - w`` for each parameter.

    Args:
        loss: a 0-d tensor built from ``params`` (its graph is kept).
        params: list of tensors requiring grad.
        max_iter: CG iterations at most.
        rtol: stop once |H w - g| <= rtol |g|.

    Returns:
        tuple: ``(w, iterations, converged, negative_curvature)``, w a list shaped like ``params``;
        negative_curvature says H was found not positive definite (w is then the last
        iterate, or g itself when that happened at once).

    Source: Nocedal & Wright (2006) Alg. 5.2 and §7.1 (Newton-CG).
    """
    grads = torch.autograd.grad(loss, params, create_graph=True)
    g = torch.cat([t.reshape(-1) for t in grads])

    def hessian_times(v):
        hv = torch.autograd.grad(grads, params, grad_outputs=_split(v, params), retain_graph=True)
        return torch.cat([t.reshape(-1) for t in hv]).detach()

    rhs = g.detach()
    w = torch.zeros_like(rhs)
    r, p = rhs.clone(), rhs.clone()
    rr, norm0 = float(r @ r), float(rhs.norm())
    iterations, negative = 0, False
    while iterations < max_iter and rr**0.5 > rtol * norm0:
        hp = hessian_times(p)
        curvature = float(p @ hp)
        if not curvature > 0:
            negative = True
            if iterations == 0:
                w = rhs.clone()
            break
        alpha = rr / curvature
        w, r = w + alpha * p, r - alpha * hp
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
        iterations += 1
    return _split(w, params), iterations, rr**0.5 <= rtol * norm0, negative


def _split(flat, like):
    out, offset = [], 0
    for t in like:
        out.append(flat[offset : offset + t.numel()].reshape(t.shape))
        offset += t.numel()
    return out
