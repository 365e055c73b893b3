"""Tensor arguments of birkhoff.torch: checked, detached and shared with the native core."""

from __future__ import annotations

import numpy as np
import torch


def _points(t, name):
    """A CPU float32/float64 tensor, contiguous (no copy when it already is), detached."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(
            f"{name}: {t.device.type} tensors are not supported yet (birkhoff runs on "
            f"the CPU); pass {name}.cpu()"
        )
    if t.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"{name}: dtype {t.dtype} is not supported; use float32 or float64")
    return t.detach().contiguous()


def _require_tensor(t, name):
    """Points and plan operands stay tensors (their gradients flow back to them)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")


def _tensor(t, name):
    """A tensor as it is; a list, tuple or numpy array converted (birkhoff._arrays's rule)."""
    if isinstance(t, torch.Tensor):
        return t
    if not isinstance(t, (list, tuple)) and not hasattr(t, "__array__"):
        raise TypeError(f"{name}: expected a tensor, an array or a list, got {type(t).__name__}")
    try:
        # Through numpy: a list of Python floats is float64 there (torch would make float32).
        return torch.as_tensor(np.asarray(t))
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError(f"{name}: cannot be read as a numeric tensor ({e})") from None


def _weights_in(t, name, x):
    """A weight argument: a tensor as given (it may require grad), a list or array converted.

    The conversion is birkhoff._arrays's rule: to x's dtype when x is a float tensor.
    """
    if t is None or isinstance(t, torch.Tensor):
        return t
    t = _tensor(t, name)
    if t.dtype.is_complex:
        raise TypeError(f"{name}: dtype {t.dtype} is not supported; use real weights")
    if isinstance(x, torch.Tensor) and x.dtype in (torch.float32, torch.float64):
        t = t.to(x.dtype)
    return t


def _labels(t, name):
    """Class ids as a contiguous int64 tensor: any integer dtype or a list of ints."""
    if t is None:
        raise ValueError(f"{name}: required with label_cost")
    t = _tensor(t, name)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{name}: dtype {t.dtype} is not supported; class ids must be integers")
    return t.detach().cpu().to(torch.int64).contiguous()


def _weights(t, name, like, count):
    """Weights as a contiguous detached tensor of the points' dtype (None stays None)."""
    if t is None:
        return None
    t = _tensor(t, name)
    if t.device.type != "cpu":
        raise TypeError(f"{name}: {t.device.type} tensors are not supported yet; pass {name}.cpu()")
    if t.dim() == 2 and t.shape[1] == 1:
        t = t.reshape(-1)
    if t.dim() != 1 or t.shape[0] != count:
        raise ValueError(f"{name}: must have shape ({count},), got {tuple(t.shape)}")
    return t.detach().to(like.dtype).contiguous()


def _to_torch(array):
    return torch.from_numpy(array)
