"""Input conversion shared by every front-end function: numpy or DLPack in, no silent casts.

One rule for every array argument of ``birkhoff`` (and the weights and labels of
``birkhoff.torch``):

* A numpy array or a DLPack tensor (a CPU torch tensor, ...) of the kind the argument needs is
  used as it is; where the argument is small or copied anyway it is converted to the working
  dtype (see the list below). A large float array of another dtype (points, features, plan
  operands) is refused with a TypeError naming the argument rather than cast silently; a
  Fortran-ordered, strided or byte-swapped one of the right dtype is copied once into C order.
* A list or tuple (nested for 2-D) is converted with ``np.asarray`` to the argument's dtype:

  - ids (``edge_index``, ``seeds``, ``truth``, ``perm``, integer ``topk``): any integer dtype,
    numpy's int8-int64 and uint8-uint64 or a list of ints, becomes int64; floats and bools are
    refused (TypeError: ids are never rounded), an empty list is an empty id array.
  - features (``x`` of coarsen, ``x1``/``x2`` of align): float32 (arrays must be float32).
  - points (``x``, ``y`` of transport): the other cloud's dtype when that one is an array, else
    float64 (arrays must be float32 or float64 and of one dtype).
  - point weights (``a``, ``b``) and plan operands (``v``, ``u``): the points' dtype.
  - edge weights, dense adjacencies and soft scores: float64 (any real or integer dtype).
* Anything else (a scalar, a string, a dict, a ragged list) raises TypeError or ValueError whose
  message starts with the argument's name.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_points(obj, name: str) -> np.ndarray:
    """Returns ``obj`` as a C-contiguous float32/float64 array of shape (n, d).

    A C-contiguous array is used without copying; a Fortran-ordered or strided one is copied
    once into C order (O(n d), small beside any solve). Lists and tuples are converted with
    ``np.asarray`` (float64). A 1-D array is viewed as (n, 1). Raises TypeError, naming
    ``name``, for another dtype.
    """
    arr = _as_array(obj, name)
    if arr.dtype not in _FLOATS:
        raise TypeError(f"{name}: dtype {arr.dtype} is not supported; use float32 or float64")
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name}: must be a 2-D array of shape (n, d), got shape {arr.shape}")
    return np.ascontiguousarray(arr)


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
        x = as_points(_as_array(x, names[0], list_dtype=y.dtype), names[0])
    else:
        x = as_points(x, names[0])
        y = as_points(_as_array(y, names[1], list_dtype=x.dtype) if y_list else y, names[1])
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
    if arr.size == 0:
        # The engine reads no weights as uniform ones: an empty array must not mean that.
        raise ValueError(f"{name}: has no entries; pass None for uniform weights")
    return np.ascontiguousarray(arr, dtype=dtype)


def _as_array(obj, name: str, list_dtype=np.float64) -> np.ndarray:
    """An array (no copy) or a DLPack tensor (shared); a list or tuple converted to list_dtype.

    A float array of non-native byte order is converted to native order (one copy), so that
    every dtype check below sees float32/float64.
    """
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f" and not obj.dtype.isnative:
            return obj.astype(obj.dtype.newbyteorder("="))
        return obj
    if hasattr(obj, "__dlpack__"):
        if hasattr(obj, "detach"):  # a torch tensor that may require grad
            obj = obj.detach()
        try:
            return np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            # On the CPU the dtype is what numpy lacks (bfloat16, complex32, ...).
            on_cpu = str(getattr(obj, "device", "cpu")) == "cpu"
            fix = f"convert it, {name}.float()" if on_cpu else f"pass a CPU tensor, {name}.cpu()"
            raise TypeError(
                f"{name}: this tensor cannot be shared with numpy without a copy ({e}); {fix}"
            ) from None
    if isinstance(obj, (list, tuple)):
        try:
            arr = np.asarray(obj, dtype=list_dtype)
        except (TypeError, ValueError, OverflowError) as e:
            kind = TypeError if isinstance(e, TypeError) else ValueError
            raise kind(f"{name}: the list cannot be read as a numeric array ({e})") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name}: the list holds items that are not real numbers ({arr.dtype})")
        return arr
    raise TypeError(
        f"{name}: expected a numpy array, a DLPack tensor or a list, got {type(obj).__name__}"
    )


def as_ids(obj, name: str, ndim: int, shape: str):
    """Integer ids as a C-contiguous int64 array (None stays None).

    Any integer dtype (a list of ints included) is converted to int64; floats and bools raise
    TypeError (ids are never rounded), another number of dimensions ValueError. ``shape`` is
    the expected shape as the message shows it, e.g. "(2, E)".
    """
    if obj is None:
        return None
    arr = _as_array(obj, name, list_dtype=None)
    if isinstance(obj, (list, tuple)) and arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: dtype {arr.dtype} is not supported; ids must be integers (int64 or any "
            "other integer dtype)"
        )
    if arr.ndim != ndim:
        raise ValueError(f"{name}: must have shape {shape}, got {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: id {int(arr.max())} does not fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def as_features(obj, name: str, what: str = "features"):
    """(n, d) float32 features, C-contiguous (None stays None; other layouts are copied once).

    Arrays and DLPack tensors must be float32 (TypeError naming ``name`` otherwise: features
    are large and never cast silently); lists and tuples are converted to float32.
    """
    if obj is None:
        return None
    arr = _as_array(obj, name, list_dtype=np.float32)
    if arr.dtype != np.float32:
        raise TypeError(
            f"{name}: dtype {arr.dtype} is not supported; {what} are float32, "
            f"pass {name}.astype(np.float32)"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name}: must be a 2-D array of shape (n, d), got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def as_reals(obj, name: str, ndim: int, dtype=np.float64):
    """Real values (edge weights, adjacency, scores) as a C-contiguous array of ``dtype``.

    Any real, integer or boolean dtype and lists are converted (a copy unless already
    ``dtype``); None stays None. TypeError for other dtypes, ValueError for another ndim.
    """
    if obj is None:
        return None
    arr = _as_array(obj, name, list_dtype=None)
    if isinstance(obj, (list, tuple)) and arr.size == 0:
        arr = arr.astype(dtype)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name}: dtype {arr.dtype} is not supported; use a real array")
    if arr.ndim != ndim:
        raise ValueError(f"{name}: must be a {ndim}-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=dtype)


def as_int(value, name: str, low: int = 0, high: int = 2**31 - 1) -> int:
    """An integral option in [low, high]; TypeError/ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: must lie in [{low}, {high}], got {value}")
    return int(value)


def as_bool(value, name: str) -> bool:
    """A flag: a bool or numpy bool; TypeError naming ``name`` otherwise ("no" is not False)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def as_float(value, name: str, optional: bool = False):
    """A real option; None allowed when ``optional``; TypeError naming ``name`` otherwise."""
    if value is None and optional:
        return None
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # a 0-d array is its scalar
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
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

    ``True`` shows a tqdm bar when tqdm is installed, else a one-line bar on stderr (whole
    lines, at most one per tenth of the run, when stderr is not a terminal).
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
        elif sys.stderr.isatty():
            sys.stderr.write(f"\r{stage} {done}/{total}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        else:
            # A log file gets whole lines: the first, one per tenth of the run, and the last.
            last = state.get(stage)
            if last is None or done >= total or done - last >= max(1, total // 10):
                state[stage] = done
                sys.stderr.write(f"{stage} {done}/{total}\n")
                sys.stderr.flush()

    return report
