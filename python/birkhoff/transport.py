"""Entropic optimal transport between point clouds (FlashSinkhorn on CPU).

Every update of the stabilised log-domain Sinkhorn iteration is a row-wise LogSumExp of biased
dot products, streamed in tiles, so the n x m cost matrix is never stored: memory is
O((n + m) d). Sources: FlashSinkhorn [flashsinkhorn2026] §2-6; the symmetric schedule,
epsilon-scaling and debiasing of GeomLoss [feydy2019].
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _birkhoff
from ._arrays import (
    _as_array,
    argument_names,
    as_float,
    as_point_pair,
    as_weights,
    progress_callback,
)
from ._solver_args import (
    _comm_handle,
    _init_potentials,
    _not_converged,
    blur_to_epsilon,
    cost_spec,
    solver_options,
)

__all__ = ["SamplesLoss", "SinkhornResult", "partial_sinkhorn", "sinkhorn", "sinkhorn_divergence"]


class SinkhornResult:
    """The solution of an entropic OT problem; the plan is reached through streamed products.

    Potentials use GeomLoss's convention: the plan is
    ``P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon)``. Nothing of size n x m is stored.
    The result keeps views of the input arrays (no copy): do not modify x, y, a, b while
    using its methods.

    Attributes:
        loss (float): the OT value (cost units), GeomLoss's formula: <a, f> + <b, g> when
            balanced (the dual objective for unit masses); with ``debias=True`` the Sinkhorn
            divergence OT(a,b) - OT(a,a)/2 - OT(b,b)/2.
        f (ndarray (n,)), g (ndarray (m,)): the final potentials, dtype of x.
        transport_cost (float): <P, C> for the plan built from (f, g).
        epsilon (float): the final epsilon (cost units).
        iterations (int): Sinkhorn sweeps performed.
        converged (bool): whether ``marginal_error <= marginal_tol`` (and, multiscale, the
            truncation bound within epsilon * marginal_tol).
        backend (str): "dense" or "multiscale"; ``report`` says why and gives the levels.
        truncation_bound (float): largest certified error (cost units) of a truncated update
            at the final epsilon; 0 for the dense backend.
        kept_fraction (float): pairs evaluated per pass / (n m) at the final epsilon.
        marginal_error (float): relative L1 violation of the hard marginal constraints,
            max(|P1 - a|_1 / |a|_1, |P^T 1 - b|_1 / |b|_1); for partial OT the violation of
            its optimality conditions over the mass.
        multiplier (float): partial OT: the multiplier lambda of the mass constraint;
            ``f`` holds f + lambda, and d loss / d mass = lambda + epsilon. 0 else.
    """

    def __init__(self, native, x, y):
        self._native = native
        self._x, self._y = x, y

    loss = property(lambda self: self._native.loss)
    f = property(lambda self: self._native.f)
    g = property(lambda self: self._native.g)
    transport_cost = property(lambda self: self._native.transport_cost)
    multiplier = property(lambda self: self._native.multiplier)
    epsilon = property(lambda self: self._native.epsilon)
    iterations = property(lambda self: self._native.iterations)
    converged = property(lambda self: self._native.converged)
    stopped_early = property(lambda self: self._native.stopped_early)
    marginal_error = property(lambda self: self._native.marginal_error)
    errors = property(lambda self: np.asarray(self._native.errors))

    @property
    def report(self) -> dict:
        """dict: how the solve went.

        Keys: schedule, backend and backend_reason, acceleration, truncation_bound (cost
        units; 0 for dense), kept_fraction, budget_exhausted, levels (list of dicts: name,
        epsilon_start, epsilon_end, iterations, kept_fraction; names "coarse", "anneal",
        "final, block-local float32" (multiscale float64 solves), "final", and "float32 ..."
        for a float32 stage finished in float64) and marginal_errors (the estimate after each
        iteration at the final epsilon).
        """
        return self._native.report

    backend = property(lambda self: self._native.report["backend"])
    truncation_bound = property(lambda self: self._native.report["truncation_bound"])
    kept_fraction = property(lambda self: self._native.report["kept_fraction"])

    @property
    def f_aa(self) -> np.ndarray:
        """(n,) self potential of OT(a, a); None unless solved with ``debias=True``."""
        return self._native.f_aa if self._native.debias else None

    @property
    def g_bb(self) -> np.ndarray:
        """(m,) self potential of OT(b, b); None unless solved with ``debias=True``."""
        return self._native.g_bb if self._native.debias else None

    def apply(self, v: ArrayLike) -> np.ndarray:
        """P @ v for v of shape (m,) or (m, k), streamed; returns (n,) or (n, k).

        ``v``: an array of x's dtype, or a list (converted to it).

        Raises:
            TypeError: v is not an array of x's dtype.
            ValueError: wrong number of rows, or NaN/inf in v.
        """
        return self._native.apply(self._operand(v, "v"))

    def apply_transpose(self, u: ArrayLike) -> np.ndarray:
        """P.T @ u for u of shape (n,) or (n, k), streamed; returns (m,) or (m, k).

        ``u``: an array of x's dtype, or a list (converted to it).
        """
        return self._native.apply_transpose(self._operand(u, "u"))

    def row_marginal(self) -> np.ndarray:
        """(n,) row sums P 1."""
        return self._native.row_marginal()

    def col_marginal(self) -> np.ndarray:
        """(m,) column sums P^T 1."""
        return self._native.col_marginal()

    def barycentric_map(self) -> np.ndarray:
        """(n, d) image of each x_i: sum_j P_ij y_j / sum_j P_ij (FlashSinkhorn §5.2)."""
        return self._native.barycentric_map()

    def plan(self, max_entries: int = 50_000_000) -> np.ndarray:
        """The dense (n, m) plan; refused above ``max_entries`` entries (use apply instead)."""
        n, m = self._x.shape[0], self._y.shape[0]
        if n * m > max_entries:
            raise ValueError(
                f"plan: {n} x {m} entries exceed max_entries={max_entries}; "
                "use apply / apply_transpose, which stream"
            )
        return self._native.dense_plan()

    def gradients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Gradients of ``loss`` with respect to (x, y, a, b), shapes (n,d), (m,d), (n,), (m,).

        Envelope theorem (FlashSinkhorn §5; GeomLoss's extrapolated potentials): exact at the
        fixed point. With unbalanced OT the row masses a_i exp(-f_i / rho) replace a_i.
        """
        return self._native.gradients()

    def grad_x(self) -> np.ndarray:
        """(n, d) gradient of ``loss`` with respect to x."""
        return self.gradients()[0]

    def grad_y(self) -> np.ndarray:
        """(m, d) gradient of ``loss`` with respect to y."""
        return self.gradients()[1]

    def _operand(self, v, name):
        arr = _as_array(v, name, list_dtype=self._x.dtype)
        if arr.dtype != self._x.dtype:
            raise TypeError(f"{name}: dtype {arr.dtype} differs from the problem's {self._x.dtype}")
        return np.ascontiguousarray(arr)

    def __repr__(self):
        return (
            f"SinkhornResult(loss={self.loss:.6g}, epsilon={self.epsilon:.3g}, "
            f"iterations={self.iterations}, converged={self.converged}, "
            f"marginal_error={self.marginal_error:.3g})"
        )


def sinkhorn(
    x: ArrayLike,
    y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    blur: float = 0.05,
    scaling: float = 0.5,
    debias: bool = False,
    cost: str = "sqeuclidean",
    p: float | None = None,
    half_cost: bool = False,
    reach: float | None = None,
    reach_a: float | None = None,
    reach_b: float | None = None,
    diameter: float | None = None,
    schedule: str = "auto",
    backend: str = "auto",
    max_iter: int = 20000,
    acceleration: str = "over-relaxation",
    block_size: int = 32,
    epsilons: Sequence[float] | None = None,
    iterations: int = 0,
    update: str = "symmetric",
    last_extrapolation: bool = True,
    tol: float | None = None,
    check_every: int = 5,
    marginal_tol: float = 1e-3,
    num_threads: int = 0,
    progress: bool | Callable[[str, int, int], None] | None = None,
    warn: bool = True,
    _mass: float | None = None,
    comm: Any = None,
    init: tuple[ArrayLike, ArrayLike] | None = None,
) -> SinkhornResult:
    """Entropic OT between two weighted point clouds, in O((n + m) d) memory.

    Solves min_P <P, C> + epsilon KL(P | a x b) over plans with marginals a and b (or KL
    penalties rho KL(P1 | a), rho = reach^2, when unbalanced), with the ground cost
    C_ij = c(x_i, y_j) named by ``cost`` and epsilon = blur^p (p = 2 but for the euclidean
    cost, GeomLoss's convention). Lists are converted: points to the
    other cloud's dtype, weights to theirs.

    Args:
        x: (n, d) source points, float32 or float64 (numpy or DLPack; C order is used without
            a copy, another layout is copied once).
            A list or tuple is converted to y's dtype when y is an array, else to float64.
        y: (m, d) target points, same dtype as x (a list or tuple: converted to x's dtype).
        a: (n,) non-negative source weights (zero allowed); default uniform 1/n. Converted to
            x's dtype. Balanced problems need sum(a) == sum(b) (relative 1e-5).
        b: (m,) target weights; default uniform 1/m.
        blur: final blur (length units); epsilon = blur**p (cost units): blur**2 for the
            sqeuclidean and cosine costs, blur**p for euclidean.
        scaling: ratio between successive blurs of the epsilon-scaling schedule, in (0, 1);
            closer to 1 is slower and more accurate.
        debias: return the debiased Sinkhorn divergence instead of OT (GeomLoss's default).
        cost: the ground cost: "sqeuclidean" |x - y|^2 (default), "euclidean" |x - y|^p
            (p = 1: the distance, GeomLoss's p = 1 cost), or "cosine" 1 - <x, y> / (|x| |y|)
            (no zero rows). The multiscale backend and the second-order products (birkhoff.torch)
            take sqeuclidean only.
        p: the power of the euclidean cost, p >= 1 (default 1); other costs take none.
        half_cost: with sqeuclidean, |x - y|^2 / 2 (GeomLoss's p = 2) instead of |x - y|^2.
        reach: unbalanced OT on both sides; rho = reach**2 (default None: balanced).
        reach_a: the reach of the source side alone (default: ``reach``).
        reach_b: the reach of the target side alone (default: ``reach``).
        diameter: start of the schedule (default: bounding-box diagonal of the points that
            carry weight).
        schedule: "converge" (epsilon-scaling, then iterations at the final epsilon until the
            plan's marginal error is within ``marginal_tol``: a converged answer), "geomloss"
            (one sweep per epsilon, GeomLoss's values; what SamplesLoss computes), or "auto"
            (default): converge, unless ``iterations`` or ``epsilons`` are given.
        backend: "dense" (every pair), "multiscale" (blocks of nearby points, a coarse solve on
            their centroids, then block-sparse passes with a certified truncation bound; for
            low dimensions and small blur; the result's plan products, marginals, map and
            gradients, and the debiased divergence, read the kept blocks only; it iterates to
            ``marginal_tol`` also when the GeomLoss schedule is asked for), or "auto" (default:
            multiscale for 1e8 pairs or more in dimension <= 8 when few pairs are expected to
            be kept; the report says which and why).
        max_iter: converge schedule: the budget of iterations at the final epsilon.
        acceleration: converge schedule: "over-relaxation" (default), "anderson" or "none".
        block_size: multiscale: points per row block (a multiple of 16; columns are kept
            by sub-blocks of 8 points, 16 from d = 4, whole blocks from d = 8).
        epsilons: GeomLoss schedule: explicit epsilons (cost units), replacing blur/scaling.
        iterations: GeomLoss schedule: when > 0, this many iterations at epsilon = blur**2
            without annealing.
        update: GeomLoss schedule: "symmetric" (averaged) or "alternating" (Gauss-Seidel).
        last_extrapolation: GeomLoss schedule, symmetric: a final full sweep (exact gradients).
        tol: with ``iterations`` (or ``epsilons``): stop once the potentials move less than
            tol (cost units) over ``check_every`` iterations at the final epsilon.
        check_every: iterations between two convergence checks.
        marginal_tol: ``converged`` means marginal_error <= marginal_tol (and a multiscale
            truncation bound within epsilon * marginal_tol).
        num_threads: OpenMP threads, 0 = OpenMP's default (OMP_NUM_THREADS, else all cores).
            Results do not depend on it.
        progress: True for a progress bar (epsilon and marginal error shown), or a
            callable(stage, done, total).
        warn: issue a RuntimeWarning when not converged.
        comm: an mpi4py communicator (``MPI.COMM_WORLD``) to solve over its ranks: every rank
            calls sinkhorn with the same arguments (the whole x, y, a, b; checked), each
            reduces its slice of the rows of every pass and the ranks exchange the row
            results; every rank gets the result, with the same bits as without ``comm``
            (the dense backend; docs/distributed.md). Needs a build with MPI.
        init: a warm start (f, g), potentials of shapes (n,) and (m,) in this result's
            convention (a previous result's ``f`` and ``g``, or those of a nearby problem, such
            as the previous step of a gradient flow): the converge schedule then skips the
            annealing (and the multiscale backend its coarse solve) and iterates at the final
            epsilon from them. Not with ``debias``.

    Returns:
        SinkhornResult.

    Raises:
        TypeError: x or y not float32/float64, or of different dtypes; comm
            not an mpi4py communicator.
        ValueError: the ranks of ``comm`` given different arguments (on every rank); empty
            clouds, dimension mismatch, weights of the wrong length, NaN/inf,
            negative weights, zero total mass, unequal masses when balanced, blur <= 0, an
            unknown cost, p given to a cost other than euclidean or below 1, a zero row with
            the cosine cost,
            scaling outside (0, 1), an epsilon too small for float64 (below about
            7e-15 L, L the largest term of the logits: the cost at the sum of the clouds'
            radii about the centre of their bounding box). float32 points below float32's
            floor (about 4e-6 L) are solved in float64, and ``report["working_dtype"]``
            says so.
        KeyboardInterrupt: Ctrl-C during the solve.

    Source: [flashsinkhorn2026] §2-5; [feydy2019] Alg. 3.5.
    """
    x, y = as_point_pair(x, y)
    a = as_weights(a, "a", x.dtype)
    b = as_weights(b, "b", x.dtype)
    if reach is not None:
        reach_a = reach if reach_a is None else reach_a
        reach_b = reach if reach_b is None else reach_b
    options = solver_options(
        scaling=scaling,
        diameter=diameter,
        epsilons=epsilons,
        iterations=iterations,
        update=update,
        last_extrapolation=last_extrapolation,
        tol=tol,
        check_every=check_every,
        marginal_tol=marginal_tol,
        num_threads=num_threads,
        schedule=schedule,
        backend=backend,
        max_iter=max_iter,
        acceleration=acceleration,
        block_size=block_size,
    )
    epsilons = options["epsilons"]
    spec = cost_spec(cost, p, half_cost)
    # The core's epsilon is blur**p (or the last value of an explicit schedule).
    epsilon = epsilons[-1] if epsilons else blur_to_epsilon(blur, spec)
    renames = {"init_f": "init", "init_g": "init"} | ({} if epsilons else {"epsilon": "blur"})
    with argument_names(renames):
        native = _birkhoff.sinkhorn(
            x,
            y,
            a,
            b,
            spec,
            as_float(reach_a, "reach_a", True),
            as_float(reach_b, "reach_b", True),
            epsilon,
            bool(debias),
            progress_callback(progress),
            options,
            _mass,
            _comm_handle(comm),
            *_init_potentials(init),
        )
    result = SinkhornResult(native, x, y)
    if warn and not result.converged:
        warnings.warn(
            _not_converged(result.report, result.marginal_error, marginal_tol),
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def partial_sinkhorn(
    x: ArrayLike,
    y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    mass: float | None = None,
    mass_fraction: float | None = None,
    blur: float = 0.05,
    **kwargs: Any,
) -> SinkhornResult:
    """Entropic partial OT: move exactly ``mass`` between two point clouds, in O((n + m) d).

    Solves min_P <P, C> + epsilon KL(P | a x b) subject to P 1 <= a, P^T 1 <= b and
    sum(P) = mass, 0 < mass <= min(sum(a), sum(b)), C_ij = cs |x_i - y_j|^2, epsilon =
    blur**2. Only the cheapest mass is moved: ``row_marginal()`` (n,) and ``col_marginal()``
    (m,) say how much of each point is matched. With uniform weights the plan is that of POT's
    ``ot.partial.entropic_partial_wasserstein`` (reg = epsilon, m = mass), whose entropy is
    sum P log P; with other weights the two problems differ (our reference measure is a x b).
    Solved by block-coordinate ascent on the dual with capped potentials and a mass
    multiplier, each step one streamed LogSumExp pass (docs/partial.md).

    Args:
        x: (n, d) source points, float32 or float64 (as :func:`sinkhorn`; a list
            is converted as there).
        y: (m, d) target points, same dtype as x.
        a: (n,) non-negative source weights; default uniform 1/n. The totals may differ.
        b: (m,) target weights; default uniform 1/m.
        blur: final blur (length units); epsilon = blur**2 (cost units).
        mass: the mass to transport (weight units), 0 < mass <= min(sum(a), sum(b)).
        mass_fraction: instead of ``mass``: that fraction of min(sum(a), sum(b)), in (0, 1].
        **kwargs: the solver options of :func:`sinkhorn` (schedule, max_iter, marginal_tol,
            iterations, num_threads, progress, warn, ...); ``reach`` and ``debias`` are
            refused. Partial OT updates alternately and without acceleration, on either
            backend (``backend="auto"`` chooses as for :func:`sinkhorn`).

    Returns:
        SinkhornResult: ``loss`` = <P, C> + epsilon sum P log(P / (a x b)) at the optimum,
        ``transport_cost`` = <P, C>, ``multiplier`` (d loss / d mass - epsilon), the plan's
        products and ``gradients()`` (with respect to x, y, a, b, the mass held fixed).

    Raises:
        ValueError: neither or both of mass and mass_fraction; mass <= 0, NaN, or above
            min(sum(a), sum(b)); mass_fraction outside (0, 1]; reach or debias given; and
            everything :func:`sinkhorn` raises.
        TypeError: as :func:`sinkhorn`.

    Source: [benamou2015] §5.2 (Bregman projections for partial OT), [chapel2020]; in the
    log domain on the streamed kernel of [flashsinkhorn2026].
    """
    for name in ("reach", "reach_a", "reach_b", "debias"):
        if kwargs.get(name):
            raise ValueError(f"mass: partial OT excludes {name}")
    if (mass is None) == (mass_fraction is None):
        raise ValueError("mass: give exactly one of mass and mass_fraction")
    if mass_fraction is not None:
        frac = as_float(mass_fraction, "mass_fraction")
        if not (0 < frac <= 1):
            raise ValueError(f"mass_fraction: must lie in (0, 1], got {mass_fraction!r}")
        xs, ys = as_point_pair(x, y)
        ma = 1.0 if a is None else float(np.sum(as_weights(a, "a", xs.dtype), dtype=np.float64))
        mb = 1.0 if b is None else float(np.sum(as_weights(b, "b", ys.dtype), dtype=np.float64))
        mass = frac * min(ma, mb)
    mass = as_float(mass, "mass")
    return sinkhorn(x, y, a, b, blur=blur, _mass=mass, **kwargs)


def sinkhorn_divergence(
    x: ArrayLike,
    y: ArrayLike,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    **kwargs: Any,
) -> SinkhornResult:
    """The debiased Sinkhorn divergence S = OT(a,b) - OT(a,a)/2 - OT(b,b)/2.

    Same arguments as :func:`sinkhorn` (``debias`` is set; lists are converted as there). It
    is >= 0, zero when the two measures are equal, and between a cloud and its translate by t
    it equals cs |t|^2 at any epsilon. Source: [feydy2019] eq. (9), one schedule for the three
    terms.
    """
    kwargs["debias"] = True
    return sinkhorn(x, y, a, b, **kwargs)


class SamplesLoss:
    """GeomLoss-compatible loss: ``SamplesLoss("sinkhorn", p=2, blur=.05)(x, y)``.

    As in GeomLoss, p = 2 means the cost |x - y|^2 / 2 and p = 1 the distance |x - y|,
    epsilon = blur^p, ``debias=True`` by default, and ``reach`` makes it unbalanced with
    rho = reach^p (GeomLoss's; :func:`sinkhorn`'s reach is rho = reach^2). Call it
    as ``loss(x, y)`` or ``loss(a, x, b, y)`` with numpy arrays, DLPack tensors or lists
    (converted as :func:`sinkhorn` does): it returns a float, or (f, g) with
    ``potentials=True`` (debiased potentials f_ab - f_aa, g_ab - g_bb when debias).

    Raises:
        ValueError: a loss other than "sinkhorn", or p other than 1 or 2.
    """

    def __init__(
        self,
        loss: str = "sinkhorn",
        p: int = 2,
        blur: float = 0.05,
        reach: float | None = None,
        diameter: float | None = None,
        scaling: float = 0.5,
        debias: bool = True,
        potentials: bool = False,
        num_threads: int = 0,
        **kwargs: Any,
    ):
        if loss != "sinkhorn":
            raise ValueError(f"loss: only 'sinkhorn' is supported, got {loss!r}")
        if p not in (1, 2):
            raise ValueError(f"p: GeomLoss's costs are p=1 (|x-y|) and p=2 (|x-y|^2/2), got {p!r}")
        self.cost = {"cost": "euclidean", "p": 1} if p == 1 else {"half_cost": True}
        # GeomLoss's rho = reach**p is sinkhorn's reach**2.
        reach = None if reach is None else as_float(reach, "reach") ** (p / 2)
        self.blur, self.reach, self.diameter, self.scaling = blur, reach, diameter, scaling
        self.debias, self.potentials, self.num_threads = debias, potentials, num_threads
        self.kwargs = kwargs

    def __call__(self, *args: ArrayLike) -> float | tuple[np.ndarray, np.ndarray]:
        """The loss between (x, y) or (a, x, b, y), as GeomLoss's SamplesLoss returns it."""
        if len(args) == 2:
            a, x, b, y = None, args[0], None, args[1]
        elif len(args) == 4:
            a, x, b, y = args
        else:
            raise TypeError("SamplesLoss expects (x, y) or (a, x, b, y)")
        r = sinkhorn(
            x,
            y,
            a,
            b,
            blur=self.blur,
            scaling=self.scaling,
            debias=self.debias,
            reach=self.reach,
            diameter=self.diameter,
            num_threads=self.num_threads,
            warn=False,
            **self.cost,
            **{"schedule": "geomloss", **self.kwargs},
        )
        if self.potentials:
            if self.debias:
                return r.f - r.f_aa, r.g - r.g_bb
            return r.f, r.g
        return r.loss
