"""The solver's arguments, checked and converted as the native solvers take them.

Options by their described names, the ground cost, warm starts, communicators, and the warning
of a solve that missed its tolerance; shared by birkhoff.sinkhorn, the barycenters and
birkhoff.torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _birkhoff
from ._arrays import _as_array, as_float, as_int, as_length

# Each solver option's conversion, by its described name (birkhoff/transport/describe.hpp).
_OPTION_TYPES = {
    "scaling": lambda v: as_float(v, "scaling"),
    "diameter": lambda v: as_float(v, "diameter", True),
    "epsilons": lambda v: [as_float(e, "epsilons") for e in (v or [])],
    "iterations": lambda v: as_int(v, "iterations"),
    "update": str,
    "last_extrapolation": bool,
    "tol": lambda v: as_float(v, "tol", True),
    "check_every": lambda v: as_int(v, "check_every", 1),
    "marginal_tol": lambda v: as_float(v, "marginal_tol"),
    "num_threads": lambda v: as_int(v, "num_threads", 0, 4096),
    "schedule": str,
    "backend": str,
    "max_iter": lambda v: as_int(v, "max_iter", 1),
    "acceleration": str,
    "block_size": lambda v: as_int(v, "block_size"),
}


def solver_options(**options: Any) -> dict:
    """The solver options given, checked and converted, by their described names.

    What the native solvers take: the core fills in the others from its defaults and names any
    spelling it does not know. Shared by :func:`sinkhorn` and birkhoff.torch.
    """
    return {name: _OPTION_TYPES[name](value) for name, value in options.items()}


def cost_spec(
    cost: str = "sqeuclidean", p: float | None = None, half_cost: bool = False
) -> tuple[str, float | None, float]:
    """The ground cost as the native solvers take it, (name, p or None, scale), checked.

    Raises:
        ValueError: an unknown name, p for a cost that takes none or below 1, half_cost
            with a cost other than sqeuclidean.
    """
    if not isinstance(cost, str):
        raise TypeError(f"cost: expected a name such as 'sqeuclidean', got {type(cost).__name__}")
    spec = (cost, None if p is None else as_float(p, "p"), 0.5 if half_cost else 1.0)
    if half_cost and cost != "sqeuclidean":
        raise ValueError(f"half_cost: applies to the sqeuclidean cost only, not {cost!r}")
    _birkhoff.cost_exponent(spec)
    return spec


def blur_to_epsilon(blur: float, spec: tuple[str, float | None, float]) -> float:
    """The epsilon of a blur: blur**p for the cost's exponent p (GeomLoss's convention)."""
    return as_length(blur, "blur") ** _birkhoff.cost_exponent(spec)


def _init_potentials(init):
    """(f, g) of a warm start as contiguous float64 arrays, or (None, None)."""
    if init is None:
        return None, None
    if not isinstance(init, (tuple, list)) or len(init) != 2:
        raise TypeError("init: expected a pair (f, g) of potentials")
    out = []
    for name, v in zip(("f", "g"), init):
        arr = np.ascontiguousarray(_as_array(v, "init"), dtype=np.float64)
        if arr.ndim != 1:
            raise ValueError(
                f"init: {name} must be 1-D (one potential per point), got shape {arr.shape}"
            )
        out.append(arr)
    return tuple(out)


def _comm_handle(comm):
    """The Fortran handle of an mpi4py communicator (-1 for None), which the C++ side converts."""
    if comm is None:
        return -1
    if not hasattr(comm, "py2f"):
        raise TypeError(f"comm: expected an mpi4py communicator, got {type(comm).__name__}")
    return int(comm.py2f())


def _not_converged(report, error, tol):
    """The warning for a solve that missed marginal_tol: which budget ran out, how far it got."""
    head = f"Sinkhorn not converged: marginal error {error:.3g} > {tol:g}"
    if report["schedule"] == "geomloss":
        return (
            f"{head} after the GeomLoss schedule (one sweep per epsilon); use the default "
            "schedule='converge', or anneal more slowly (scaling closer to 1)"
        )
    if report["budget_exhausted"]:
        return f"{head} when the budget of max_iter iterations at the final epsilon ran out"
    if report["stalled"]:
        advice = "a larger blur or marginal_tol"
        if report["working_dtype"] == "float32":
            advice = "float64 points, " + advice
        return (
            f"{head}: the error stopped improving at the final epsilon (the floor of the "
            f"{report['working_dtype']} arithmetic); use {advice}"
        )
    bound = report["truncation_bound"]
    if error <= tol:
        return (
            f"Sinkhorn not converged: the marginal error {error:.3g} is within {tol:g}, but the "
            f"multiscale truncation bound {bound:.3g} exceeds epsilon * marginal_tol = "
            f"{report['epsilon'] * tol:.3g} (the skipped pairs may change the answer); use "
            "backend='dense'"
        )
    return f"{head} (multiscale truncation bound {bound:.3g})"
