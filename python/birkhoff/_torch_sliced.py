"""birkhoff.torch.sliced_wasserstein: the sliced distance as a differentiable loss."""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from . import sliced as _sliced
from ._torch_inputs import _points, _to_torch, _weights, _weights_in

__all__ = ["sliced_wasserstein"]


class _Sliced(torch.autograd.Function):
    """The loss of a solved sliced problem, with its exact gradients in x, y, a, b."""

    @staticmethod
    def forward(ctx, x, y, a, b, result):
        ctx.result = result
        return torch.tensor(result.loss, dtype=x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        r, need = ctx.result, ctx.needs_input_grad
        grads = (r.grad_x, r.grad_y, r.grad_a, r.grad_b)
        return (*(grad * _to_torch(g) if n else None for g, n in zip(grads, need[:4])), None)


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
    if "gradients" in kwargs:
        raise TypeError("gradients: decided by autograd in birkhoff.torch; do not pass it")
    xd, yd = _points(x, "x"), _points(y, "y")
    a, b = _weights_in(a, "a", x), _weights_in(b, "b", x)
    ad = _weights(a, "a", xd, xd.shape[0])
    bd = _weights(b, "b", xd, yd.shape[0])
    inputs = (x, y, a, b)
    needs = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in inputs)
    r = _sliced.sliced_wasserstein(xd, yd, ad, bd, gradients=needs, **kwargs)
    fields = dict(vars(r))
    fields["loss"] = _Sliced.apply(*inputs, r) if needs else torch.tensor(r.loss, dtype=x.dtype)
    return _sliced.SlicedResult(fields)
