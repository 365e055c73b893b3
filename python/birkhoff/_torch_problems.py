"""birkhoff.torch's problems beside Sinkhorn, as differentiable losses.

Sliced Wasserstein and (fused) Gromov-Wasserstein: the native solve computes the gradients.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from . import gromov as _gw
from . import sliced as _sliced
from ._torch_inputs import _points, _to_torch, _weights, _weights_in

__all__ = ["fused_gromov_wasserstein", "gromov_wasserstein", "sliced_wasserstein"]


class _Solved(torch.autograd.Function):
    """A solved problem's loss; its gradient in each input is the solve's array of that name."""

    @staticmethod
    def forward(ctx, result, names, *inputs):
        ctx.result, ctx.names = result, names
        return torch.tensor(result.loss, dtype=inputs[0].dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        grads = [
            grad * _to_torch(getattr(ctx.result, name)).to(grad.dtype) if need else None
            for name, need in zip(ctx.names, ctx.needs_input_grad[2:])
        ]
        return (None, None, *grads)


def _loss(result, names, inputs, dtype, differentiable):
    """The result's fields with the loss a tensor, differentiable when the solve had gradients."""
    fields = dict(vars(result))
    if differentiable:
        fields["loss"] = _Solved.apply(result, names, *inputs)
    else:
        fields["loss"] = torch.tensor(result.loss, dtype=dtype)
    return fields


def _needs_grad(*inputs):
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in inputs)


def _no_gradients_keyword(kwargs):
    if "gradients" in kwargs:
        raise TypeError("gradients: decided by autograd in birkhoff.torch; do not pass it")


def sliced_wasserstein(x, y, a=None, b=None, **kwargs) -> _sliced.SlicedResult:
    """Sliced Wasserstein distance between tensors, differentiable in x, y, a and b.

    The arguments and options are :func:`birkhoff.sliced_wasserstein`'s, but ``gradients``,
    which autograd decides: x (n, d) and y (m, d) CPU float32/float64 tensors; a (n,) and
    b (m,) tensors (which may require grad), lists or arrays, default uniform.

    Returns:
        SlicedResult whose ``loss`` is a 0-d tensor with ``grad_fn`` when an input requires
        grad (once differentiable; exact where no two projected points tie), the other fields
        as in numpy.

    Raises:
        TypeError, ValueError: as :func:`birkhoff.sliced_wasserstein`; TypeError when
            ``gradients`` is passed or the points are not tensors.

    Source: [bonneel2015], [deshpande2019].
    """
    _no_gradients_keyword(kwargs)
    xd, yd = _points(x, "x"), _points(y, "y")
    a, b = _weights_in(a, "a", x), _weights_in(b, "b", x)
    ad, bd = _weights(a, "a", xd, xd.shape[0]), _weights(b, "b", xd, yd.shape[0])
    inputs = (x, y, a, b)
    needs = _needs_grad(*inputs)
    r = _sliced.sliced_wasserstein(xd, yd, ad, bd, gradients=needs, **kwargs)
    names = ("grad_x", "grad_y", "grad_a", "grad_b")
    return _sliced.SlicedResult(_loss(r, names, inputs, x.dtype, needs))


def _solve_gromov(x, y, features, a, b, kwargs):
    _no_gradients_keyword(kwargs)
    _points(x, "x")  # checked: CPU float tensors
    _points(y, "y")
    for w, name in [(a, "a"), (b, "b")]:
        if getattr(w, "requires_grad", False):
            raise TypeError(f"{name}: GW's gradients are in the points and features only")
    inputs = (x, y) if features is None else (x, y, *features)
    plain = [t.detach().cpu().numpy() for t in inputs]
    a, b = (
        None if w is None else _weights_in(w, n, x).detach().numpy()
        for w, n in [(a, "a"), (b, "b")]
    )
    needs = _needs_grad(*inputs)
    if features is None:
        r = _gw.gromov_wasserstein(*plain, a, b, gradients=needs, **kwargs)
    else:
        r = _gw.fused_gromov_wasserstein(*plain, a, b, gradients=needs, **kwargs)
    names = ("grad_x", "grad_y", "grad_features_x", "grad_features_y")[: len(inputs)]
    return _gw.GromovResult(_loss(r, names, inputs, x.dtype, needs))


def gromov_wasserstein(x, y, a=None, b=None, **kwargs) -> _gw.GromovResult:
    """Entropic Gromov-Wasserstein between tensors, differentiable in x and y.

    The arguments and options are :func:`birkhoff.gromov_wasserstein`'s, but ``gradients``,
    which autograd decides. The gradient is that of the objective at the final plan held fixed
    (the envelope theorem for the entropic problem; POT's convention for its torch backend).

    Returns:
        GromovResult whose ``loss`` is a 0-d tensor (once differentiable).

    Raises:
        As :func:`birkhoff.gromov_wasserstein`; TypeError when ``gradients`` is passed.

    Source: [peyre2016], [scetbon2022].
    """
    return _solve_gromov(x, y, None, a, b, kwargs)


def fused_gromov_wasserstein(
    x, y, features_x, features_y, a=None, b=None, **kwargs
) -> _gw.GromovResult:
    """Entropic fused GW between tensors, differentiable in x, y and the features.

    The arguments and options are :func:`birkhoff.fused_gromov_wasserstein`'s, but
    ``gradients``; the gradients hold the final plan fixed, as :func:`gromov_wasserstein`'s.

    Returns:
        GromovResult whose ``loss`` is a 0-d tensor (once differentiable).

    Raises:
        As :func:`birkhoff.fused_gromov_wasserstein`; TypeError when ``gradients`` is passed.

    Source: [vayer2019].
    """
    for t, name in [(features_x, "features_x"), (features_y, "features_y")]:
        _points(t, name)
    return _solve_gromov(x, y, (features_x, features_y), a, b, kwargs)
