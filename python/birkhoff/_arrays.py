"""Input conversion shared by every front-end function: numpy or DLPack in, no silent copies."""

from __future__ import annotations

import contextlib

import numpy as np

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_points(obj, name: str) -> np.ndarray:
    """Returns ``obj`` as a C-contiguous float32/float64 array of shape (n, d), without copying.

    Lists and tuples are converted with ``np.asarray`` (float64). A 1-D array is viewed as
    (n, 1). Raises TypeError, naming ``name``, for another dtype or a non-contiguous array.
    """
    arr = _as_array(obj, name)
    if arr.dtype not in _FLOATS:
        raise TypeError(f"{name}: dtype {arr.dtype} is not supported; use float32 or float64")
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name}: must be a 2-D array of shape (n, d), got shape {arr.shape}")
    if not arr.flags.c_contiguous:
        raise TypeError(f"{name}: array is not C-contiguous; pass np.ascontiguousarray({name})")
    return arr


def as_point_pair(x, y, names=("x", "y")):
    """Two point clouds of one dtype, as :func:`as_points` gives them.

    A list or tuple takes the dtype of the other argument when that one is an array (float64
    when both are lists), so ``sinkhorn(x.tolist(), y)`` solves in y's dtype. Two arrays of
    different dtypes raise TypeError naming the second (the first sets the dtype) and the
    conversion to make.
    """
    x_list, y_list = isinstance(x, (list, tuple)), isinstance(y, (list, tuple))
    if x_list and not y_list:
        y = as_points(y, names[1])
        x = as_points(np.asarray(x, dtype=y.dtype), names[0])
    else:
        x = as_points(x, names[0])
        y = as_points(np.asarray(y, dtype=x.dtype) if y_list else y, names[1])
    if x.dtype != y.dtype:
        raise TypeError(
            f"{names[1]}: dtype {y.dtype} differs from {names[0]}'s {x.dtype}; convert one, "
            f"e.g. {names[1]}.astype(np.{x.dtype})"
        )
    return x, y


def as_weights(obj, name: str, dtype: np.dtype):
    """Weights as a contiguous 1-D array of ``dtype`` (converted: weights are O(n)); None stays."""
    if obj is None:
        return None
    arr = _as_array(obj, name)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: dtype {arr.dtype} is not supported; use a float array")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name}: must be a 1-D array of weights, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=dtype)


def _as_array(obj, name: str) -> np.ndarray:
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack__"):
        if hasattr(obj, "detach"):  # a torch tensor that may require grad
            obj = obj.detach()
        try:
            return np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            raise TypeError(
                f"{name}: this tensor cannot be shared with numpy without a copy "
                f"({e}); pass a CPU float32/float64 tensor"
            ) from None
    if isinstance(obj, (list, tuple)):
        return np.asarray(obj, dtype=np.float64)
    raise TypeError(f"{name}: expected a numpy array or a DLPack tensor, got {type(obj).__name__}")


def as_int(value, name: str, low: int = 0, high: int = 2**31 - 1) -> int:
    """An integral option in [low, high]; TypeError/ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: must lie in [{low}, {high}], got {value}")
    return int(value)


def as_float(value, name: str, optional: bool = False):
    """A real option; None allowed when ``optional``; TypeError naming ``name`` otherwise."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    return float(value)


def as_length(value, name: str) -> float:
    """A positive finite length whose square is a normal double (blur, reach, diameter)."""
    v = as_float(value, name)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name}: must be positive and finite, got {v}")
    if not np.isfinite(v * v) or v * v < np.finfo(np.float64).tiny:
        raise ValueError(
            f"{name}: its square must be a normal double (between 1e-154 and 1e154), got {v}"
        )
    return v


@contextlib.contextmanager
def argument_names(names: dict):
    """Renames the argument an error of the core names (``epsilon`` -> ``blur``).

    The core's messages start with its argument name; a front end that exposes the value
    under another name maps it here, so the user reads the name they typed.
    """
    try:
        yield
    except (TypeError, ValueError) as e:
        head, sep, rest = str(e).partition(": ")
        if sep and head in names:
            raise type(e)(f"{names[head]}: {rest}") from None
        raise


def progress_callback(progress):
    """Maps the ``progress`` argument to a callable(stage, done, total) or None.

    ``True`` shows a tqdm bar when tqdm is installed, else a one-line bar on stderr.
    """
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    if progress is not True:
        raise TypeError(f"progress: expected True, False, None or a callable, got {progress!r}")
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    state = {}

    def report(stage, done, total):
        if tqdm is not None:
            bar = state.get("bar")
            if bar is None:
                bar = state["bar"] = tqdm(total=total, desc=stage)
            bar.update(done - bar.n)
            if done >= total:
                bar.close()
        else:
            import sys

            sys.stderr.write(f"\r{stage} {done}/{total}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return report
