"""The autograd functions of birkhoff.torch and the native solve they share.

Loss, gradients, potentials and plan products of one solve, with the Hessian-vector products
as their backward.
"""

from __future__ import annotations

import torch

from . import _birkhoff
from ._arrays import as_bool
from ._solver_args import blur_to_epsilon, solver_options
from ._torch_inputs import _points, _to_torch, _weights


class _Settings:
    """Solver settings shared by every solve of one loss or call (cost units: epsilon).

    ``options`` are the solver options by their described names (_solver_args.solver_options).
    """

    def __init__(
        self,
        blur,
        reach_a,
        reach_b,
        cost,
        debias,
        options,
        hvp_max_iter=300,
        hvp_rtol=1e-6,
        labels=None,
    ):
        if not (isinstance(blur, (int, float)) and blur > 0):
            raise ValueError(f"blur: must be a positive number, got {blur!r}")
        self.cost = cost  # _solver_args.cost_spec
        self.epsilon = blur_to_epsilon(blur, cost)
        self.reach_a = None if reach_a is None else float(reach_a)
        self.reach_b = None if reach_b is None else float(reach_b)
        self.debias = as_bool(debias, "debias")
        self.options = solver_options(**options)
        if self.options.get("epsilons"):  # an explicit schedule ends at the problem's epsilon
            self.epsilon = self.options["epsilons"][-1]
        self.num_threads = self.options.get("num_threads", 0)
        self.hvp_max_iter = int(hvp_max_iter)
        self.hvp_rtol = float(hvp_rtol)
        self.labels = labels  # (x_labels, y_labels, table, weight) or None

    def solve(self, x, y, a, b, init=(None, None)):
        """Runs the native solver on detached contiguous tensors (shared, not copied).

        ``init`` is the warm start's (f, g) as float64 arrays, or (None, None).
        """
        xl = yl = table = None
        weight = 1.0
        if self.labels is not None:
            xl, yl, table, weight = self.labels
        return _birkhoff.ot_solve(
            x,
            y,
            a,
            b,
            self.cost,
            self.reach_a,
            self.reach_b,
            self.epsilon,
            self.debias,
            xl,
            yl,
            table,
            float(weight),
            self.options,
            *init,
        )


class _Gradient(torch.autograd.Function):
    """(x, y, a, b) -> the loss's gradients; its backward is the Hessian-vector product."""

    @staticmethod
    def forward(ctx, x, y, a, b, native, settings):
        ctx.set_materialize_grads(False)
        ctx.native, ctx.settings = native, settings
        gx, gy, ga, gb = native.gradients()
        return _to_torch(gx), _to_torch(gy), _to_torch(ga), _to_torch(gb)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, vx, vy, va, vb):
        if va is not None or vb is not None:
            raise NotImplementedError(
                "birkhoff.torch: second derivatives through the weight gradients are not "
                "implemented (Hessian-vector products are with respect to x and y)"
            )
        native, s = ctx.native, ctx.settings
        want_x, want_y = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if vx is None and vy is None:
            return None, None, None, None, None, None
        n, d = native.f.shape[0], None
        if vx is None:
            d = vy.shape[1]
            vx = torch.zeros((n, d), dtype=vy.dtype)
        hx, hy, _, _ = native.hvp(
            vx.detach().contiguous(),
            None if vy is None else vy.detach().contiguous(),
            bool(want_y),
            s.hvp_max_iter,
            s.hvp_rtol,
            s.num_threads,
        )
        return (
            _to_torch(hx) if want_x else None,
            _to_torch(hy) if want_y else None,
            None,
            None,
            None,
            None,
        )


class _Loss(torch.autograd.Function):
    """(x, y, a, b) -> the value of a solved problem (the solve happens before apply)."""

    @staticmethod
    def forward(ctx, x, y, a, b, native, settings):
        ctx.set_materialize_grads(False)
        ctx.native, ctx.settings = native, settings
        ctx.save_for_backward(x, y, a, b)
        return torch.tensor(native.loss, dtype=x.dtype)

    @staticmethod
    def backward(ctx, go):
        if go is None:
            return None, None, None, None, None, None
        x, y, a, b = ctx.saved_tensors
        gx, gy, ga, gb = _Gradient.apply(x, y, a, b, ctx.native, ctx.settings)
        need = ctx.needs_input_grad
        return (
            go * gx if need[0] else None,
            go * gy if need[1] else None,
            go * ga if need[2] else None,
            go * gb if need[3] else None,
            None,
            None,
        )


class _Potentials(torch.autograd.Function):
    """(x, y, a, b) -> (f, g); backward by implicit differentiation of the fixed point."""

    @staticmethod
    def forward(ctx, x, y, a, b, native, settings):
        ctx.set_materialize_grads(False)
        ctx.native, ctx.settings = native, settings
        return _to_torch(native.f), _to_torch(native.g)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, uf, ug):
        native, s = ctx.native, ctx.settings
        if native.debias:
            raise NotImplementedError(
                "birkhoff.torch: gradients of the debiased potentials are "
                "not implemented; use debias=False"
            )
        if uf is None and ug is None:
            return None, None, None, None, None, None
        n, m = native.f.shape[0], native.g.shape[0]
        dtype = uf.dtype if uf is not None else ug.dtype
        uf = torch.zeros(n, dtype=dtype) if uf is None else uf.detach().contiguous()
        ug = torch.zeros(m, dtype=dtype) if ug is None else ug.detach().contiguous()
        gx, gy, ga, gb = native.implicit_gradient(uf, ug, s.hvp_max_iter, s.hvp_rtol, s.num_threads)
        need = ctx.needs_input_grad
        return (
            _to_torch(gx) if need[0] else None,
            _to_torch(gy) if need[1] else None,
            _to_torch(ga) if need[2] else None,
            _to_torch(gb) if need[3] else None,
            None,
            None,
        )


def _plan_product(native, v, transpose):
    return native.apply_transpose(v) if transpose else native.apply(v)


class _Apply(torch.autograd.Function):
    """v -> P v (or P^T v); linear in v, the plan itself is treated as a constant."""

    @staticmethod
    def forward(ctx, v, native, transpose):
        ctx.native, ctx.transpose = native, transpose
        return _to_torch(_plan_product(native, v.detach().contiguous(), transpose))

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        out = _plan_product(ctx.native, grad.contiguous(), not ctx.transpose)
        return _to_torch(out), None, None


def _solve_one(settings, x, y, a, b, init=(None, None)):
    """Solves one problem (warm-started from ``init``) and returns its native solution."""
    xd, yd = _points(x, "x"), _points(y, "y")
    if yd.dtype != xd.dtype:
        raise TypeError(f"y: dtype {yd.dtype} differs from x's {xd.dtype}")
    ad = _weights(a, "a", xd, xd.shape[0])
    bd = _weights(b, "b", xd, yd.shape[0])
    return settings.solve(xd, yd, ad, bd, init)


def _loss_one(settings, x, y, a, b):
    native = _solve_one(settings, x, y, a, b)
    a = None if a is None else a.reshape(-1)
    b = None if b is None else b.reshape(-1)
    return _Loss.apply(x, y, a, b, native, settings), native


def _potentials_one(settings, x, y, a, b):
    native = _solve_one(settings, x, y, a, b)
    a = None if a is None else a.reshape(-1)
    b = None if b is None else b.reshape(-1)
    f, g = _Potentials.apply(x, y, a, b, native, settings)
    if native.debias:
        f = f - _to_torch(native.f_aa)
        g = g - _to_torch(native.g_bb)
    return f, g
