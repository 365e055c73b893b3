"""Input conversion shared by every front-end function: numpy or DLPack in, no silent copies."""

from __future__ import annotations

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
        return np.from_dlpack(obj)
    if isinstance(obj, (list, tuple)):
        return np.asarray(obj, dtype=np.float64)
    raise TypeError(f"{name}: expected a numpy array or a DLPack tensor, got {type(obj).__name__}")


def progress_callback(progress):
    """Maps the ``progress`` argument to a callable(stage, done, total) or None.

    ``True`` shows a tqdm bar when tqdm is installed, else a one-line bar on stderr.
    """
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
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
