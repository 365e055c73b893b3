"""PyTorch front end: entropic OT as a differentiable loss, with second-order products.

``birkhoff.torch.SamplesLoss`` has GeomLoss's constructor and call signatures and returns
torch tensors with ``grad_fn``: gradients with respect to the points and the weights,
double backward (Hessian-vector products through the streamed kernels), batches
``(B, N, D)`` and ragged batches given by PyG-style index vectors. ``sinkhorn`` returns a
solution whose potentials are differentiable (implicit differentiation) and which offers
``hvp``, ``inverse_hvp`` and streamed plan products; ``c_transform`` is the hard semi-dual.

Everything runs in O((n + m) d) memory: the n x m cost matrix is never formed. CPU float32
and float64 tensors are shared with the native core through DLPack without a copy when
contiguous (a non-contiguous tensor is made contiguous first). Points, potentials and plan
operands must be tensors (TypeError naming the argument otherwise); weights, class labels and
label costs may also be lists or numpy arrays, converted to the points' dtype, int64 and
float64. The GIL is released while solving and Ctrl-C
interrupts. Sources: FlashSinkhorn (arXiv 2602.03067) §2-8; Feydy et al.
(AISTATS 2019) for the schedule and the debiased divergence; Luise et al. (NeurIPS 2018) for
the differentiability of the potentials.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "birkhoff.torch needs PyTorch, which is not installed: pip install birkhoff[torch]"
    ) from e

from ._arrays import argument_names
from ._solver_args import _init_potentials, cost_spec
from ._torch_autograd import (
    _Apply,
    _Loss,
    _loss_one,
    _Potentials,
    _potentials_one,
    _Settings,
    _solve_one,
)
from ._torch_barycenter import TorchBarycenterResult, barycenter
from ._torch_c_transform import c_transform, inverse_hvp
from ._torch_fixed_barycenter import TorchFixedBarycenterResult, fixed_support_barycenter
from ._torch_inputs import (
    _labels,
    _points,
    _require_tensor,
    _tensor,
    _to_torch,
    _weights_in,
)
from ._torch_problems import fused_gromov_wasserstein, gromov_wasserstein, sliced_wasserstein

__all__ = [
    "SamplesLoss",
    "TorchBarycenterResult",
    "TorchFixedBarycenterResult",
    "TorchSinkhornResult",
    "barycenter",
    "c_transform",
    "fixed_support_barycenter",
    "fused_gromov_wasserstein",
    "gromov_wasserstein",
    "inverse_hvp",
    "sinkhorn",
    "sliced_wasserstein",
]

_BACKENDS = ("auto", "tensorized", "online", "multiscale")


def _segments(batch, count, name):
    """Index sets of a PyG batch vector: a list of slices when sorted, else index tensors."""
    if not isinstance(batch, torch.Tensor) or batch.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name}: expected an integer torch.Tensor")
    if batch.dim() != 1 or batch.shape[0] != count:
        raise ValueError(f"{name}: must have shape ({count},), got {tuple(batch.shape)}")
    if count and int(batch.min()) < 0:
        raise ValueError(f"{name}: batch indices must be >= 0")
    return batch.long()


def _ragged_parts(batch, size):
    """For each entry b < size: a slice (sorted batch vector) or an index tensor."""
    counts = torch.bincount(batch, minlength=size)
    if bool((batch[1:] >= batch[:-1]).all()):
        ends = torch.cumsum(counts, 0).tolist()
        starts = [0] + ends[:-1]
        return [slice(s, e) for s, e in zip(starts, ends)], counts
    return [torch.nonzero(batch == k).reshape(-1) for k in range(size)], counts


class SamplesLoss(torch.nn.Module):
    """GeomLoss-compatible Sinkhorn loss between point clouds, differentiable twice.

    ``SamplesLoss("sinkhorn", p=2, blur=0.05)(x, y)`` with the cost |x - y|^2 / 2 (GeomLoss's
    p = 2), epsilon = blur^2 annealed from the data's diameter by ``scaling``, and the
    debiased Sinkhorn divergence by default. Values and gradients equal GeomLoss's on the same
    inputs (balanced; see docs/torch.md for the unbalanced gradients).

    Call signatures (as GeomLoss):
        ``L(x, y)``, ``L(a, x, b, y)`` with x (N, D), y (M, D), a (N,), b (M,): a 0-d tensor;
        batched x (B, N, D), y (B, M, D), a (B, N), b (B, M): a (B,) tensor, one epsilon
        schedule for the whole batch (from its joint diameter, as GeomLoss);
        ragged: ``L(x, y, x_batch=bx, y_batch=by)`` (or with weights) where bx (N,), by (M,)
        are PyG-style batch vectors (entry of each point): a (B,) tensor, B = max index + 1;
        each entry is solved on its own points, in linear memory (no padding).

    With ``potentials=True`` it returns (f, g) instead (debiased f_ab - f_aa, g_ab - g_bb
    when ``debias``), shapes (N,), (M,) (or (B, N), (B, M); ragged: per point).

    Gradients flow to x, y, a and b (weights through the potentials, envelope theorem);
    ``torch.autograd.grad(loss, x, create_graph=True)`` followed by a second grad gives
    Hessian-vector products with respect to x and y (streamed CG, FlashSinkhorn §7).

    Args:
        loss: only "sinkhorn".
        p: 1 (the cost |x - y|) or 2 (|x - y|^2 / 2), GeomLoss's two costs.
        blur: length scale; epsilon = blur**p (cost units).
        reach: unbalanced OT with rho = reach**p on both sides (GeomLoss's); None = balanced.
        diameter: start of the epsilon schedule (default: bounding-box diagonal).
        scaling: ratio between successive blurs, in (0, 1).
        truncate, cluster_scale: GeomLoss's multiscale settings; birkhoff's multiscale backend
            chooses its own blocks, so only their defaults (5, None) are accepted.
        cost, kernel: must be None (custom cost functions are not supported).
        verbose: must be False (GeomLoss's multiscale diagnostics have no counterpart here).
        debias: the Sinkhorn divergence OT(a,b) - OT(a,a)/2 - OT(b,b)/2.
        potentials: return the potentials instead of the value.
        backend: "auto", "tensorized", "online" or "multiscale". "tensorized" and "online"
            are birkhoff's dense streamed passes; "multiscale" its block-sparse backend, which
            iterates to convergence instead of GeomLoss's one sweep per epsilon (a value
            within that schedule's own error of the dense one); "auto" stays dense, so that the
            values are GeomLoss's schedule's at every size.
        num_threads: OpenMP threads, 0 = all cores.
        iterations, tol: beyond GeomLoss: run ``iterations`` sweeps at epsilon = blur**2 (no
            annealing), stopping early once the potentials move less than ``tol``. Converged
            solves make the gradients and Hessian-vector products exact; GeomLoss's annealed
            default makes one sweep per epsilon.
        hvp_max_iter, hvp_rtol: the CG solve inside Hessian-vector products.

    Raises:
        ValueError: an unsupported loss, p, backend, cost or kernel; shapes that do not match.
        TypeError: tensors that are not CPU float32/float64, or of different dtypes.
    """

    def __init__(
        self,
        loss="sinkhorn",
        p=2,
        blur=0.05,
        reach=None,
        diameter=None,
        scaling=0.5,
        truncate=5,
        cost=None,
        kernel=None,
        cluster_scale=None,
        debias=True,
        potentials=False,
        verbose=False,
        backend="auto",
        num_threads=0,
        iterations=0,
        tol=None,
        hvp_max_iter=300,
        hvp_rtol=1e-6,
    ):
        super().__init__()
        if loss != "sinkhorn":
            raise ValueError(f"loss: only 'sinkhorn' is supported, got {loss!r}")
        if p not in (1, 2):
            raise ValueError(f"p: GeomLoss's costs are p=1 (|x-y|) and p=2 (|x-y|^2/2), got {p!r}")
        if p == 1 and backend == "multiscale":
            raise ValueError("backend: the multiscale backend runs p=2 only; use backend='online'")
        if cost is not None or kernel is not None:
            raise ValueError(
                "cost, kernel: custom cost functions are not supported (p=1 is |x-y|, p=2 is "
                "|x-y|^2/2; birkhoff.torch.sinkhorn takes cost='cosine')"
            )
        if backend not in _BACKENDS:
            raise ValueError(f"backend: must be one of {_BACKENDS}, got {backend!r}")
        for name, value, default in (
            ("truncate", truncate, 5),
            ("cluster_scale", cluster_scale, None),
            ("verbose", verbose, False),
        ):
            if value != default:
                raise ValueError(
                    f"{name}: GeomLoss's multiscale setting is not used by birkhoff (its "
                    f"multiscale backend chooses its own blocks); leave it at {default!r}"
                )
        self.potentials = bool(potentials)
        self.settings = _Settings(
            blur,
            # GeomLoss's rho = reach**p is birkhoff's reach**2.
            None if reach is None else float(reach) ** (p / 2),
            None if reach is None else float(reach) ** (p / 2),
            cost_spec("euclidean", 1) if p == 1 else cost_spec(half_cost=True),
            debias,
            # GeomLoss's one sweep per epsilon: SamplesLoss's values are GeomLoss's.
            dict(
                scaling=scaling,
                diameter=diameter,
                iterations=iterations,
                tol=tol,
                num_threads=num_threads,
                schedule="geomloss",
                # GeomLoss's tensorized and online backends are both our dense passes.
                backend={"tensorized": "dense", "online": "dense"}.get(backend, backend),
            ),
            hvp_max_iter=hvp_max_iter,
            hvp_rtol=hvp_rtol,
        )

    def forward(self, *args, x_batch=None, y_batch=None):
        """Evaluates the loss; see the class docstring for the signatures."""
        if len(args) == 2:
            a, x, b, y = None, args[0], None, args[1]
        elif len(args) == 4:
            a, x, b, y = args
        else:
            raise TypeError("SamplesLoss expects (x, y) or (a, x, b, y)")
        a, b = _weights_in(a, "a", x), _weights_in(b, "b", x)
        if (x_batch is None) != (y_batch is None):
            raise ValueError("x_batch, y_batch: give both or neither")
        if x_batch is not None:
            return self._ragged(a, x, b, y, x_batch, y_batch)
        _require_tensor(x, "x")
        _require_tensor(y, "y")
        if x.dim() == 3:
            return self._batched(a, x, b, y)
        if x.dim() == 1:
            x = x.reshape(-1, 1)
        if y.dim() == 1:
            y = y.reshape(-1, 1)
        if x.dim() != 2 or y.dim() != 2:
            raise ValueError(
                f"x, y: expected (N, D) or (B, N, D) tensors, got shapes "
                f"{tuple(x.shape)} and {tuple(y.shape)}"
            )
        if self.potentials:
            return _potentials_one(self.settings, x, y, a, b)
        return _loss_one(self.settings, x, y, a, b)[0]

    def _batched(self, a, x, b, y):
        if y.dim() != 3 or y.shape[0] != x.shape[0]:
            raise ValueError(
                f"y: batched x has shape {tuple(x.shape)}, so y must be (B, M, D) "
                f"with the same B, got {tuple(y.shape)}"
            )
        settings = self.settings
        if settings.options.get("diameter") is None:
            # As GeomLoss: one epsilon schedule for the whole batch, from its joint bounding box.
            points = torch.cat(
                [x.detach().reshape(-1, x.shape[-1]), y.detach().reshape(-1, y.shape[-1])]
            )
            span = points.max(0).values - points.min(0).values
            settings = copy.copy(settings)
            settings.options = {**settings.options, "diameter": float(span.double().norm())}
        out = []
        for k in range(x.shape[0]):
            ak = None if a is None else a[k]
            bk = None if b is None else b[k]
            if self.potentials:
                out.append(_potentials_one(settings, x[k], y[k], ak, bk))
            else:
                out.append(_loss_one(settings, x[k], y[k], ak, bk)[0])
        if self.potentials:
            return torch.stack([f for f, _ in out]), torch.stack([g for _, g in out])
        return torch.stack(out)

    def _ragged(self, a, x, b, y, x_batch, y_batch):
        if x.dim() != 2 or y.dim() != 2:
            raise ValueError("x, y: ragged batches take (N, D) and (M, D) tensors")
        bx = _segments(x_batch, x.shape[0], "x_batch")
        by = _segments(y_batch, y.shape[0], "y_batch")
        size = int(max(bx.max(), by.max())) + 1
        px, cx = _ragged_parts(bx, size)
        py, cy = _ragged_parts(by, size)
        for k in range(size):
            if int(cx[k]) == 0 or int(cy[k]) == 0:
                raise ValueError(
                    f"x_batch, y_batch: batch entry {k} has no point in "
                    f"{'x' if int(cx[k]) == 0 else 'y'}"
                )
        out = []
        for k in range(size):
            ak = None if a is None else a[px[k]]
            bk = None if b is None else b[py[k]]
            if self.potentials:
                out.append(_potentials_one(self.settings, x[px[k]], y[py[k]], ak, bk))
            else:
                out.append(_loss_one(self.settings, x[px[k]], y[py[k]], ak, bk)[0])
        if not self.potentials:
            return torch.stack(out)
        f = torch.zeros(x.shape[0], dtype=x.dtype)
        g = torch.zeros(y.shape[0], dtype=y.dtype)
        for k, (fk, gk) in enumerate(out):
            f = f.index_put((torch.arange(x.shape[0])[px[k]],), fk)
            g = g.index_put((torch.arange(y.shape[0])[py[k]],), gk)
        return f, g


class TorchSinkhornResult:
    """A solved OT problem with torch tensors; nothing n x m is stored.

    Attributes:
        loss (Tensor, 0-d): the value (cost units), differentiable twice with respect to x, y
            (once with respect to a, b).
        f (Tensor (n,)), g (Tensor (m,)): the potentials (GeomLoss convention, plan
            P_ij = a_i b_j exp((f_i + g_j - C_ij) / epsilon)); differentiable with respect to
            x, y, a, b by implicit differentiation (debias=False only).
        epsilon, iterations, converged, marginal_error, transport_cost: the solve's report.
        report (dict): the whole report, as :attr:`birkhoff.SinkhornResult.report` (backend,
            backend_reason, kept_fraction, levels, ...); backend and kept_fraction also as
            attributes.
    """

    def __init__(self, native, settings, x, y, a, b):
        self._native, self._settings = native, settings
        self._x = x
        a = None if a is None else a.reshape(-1)
        b = None if b is None else b.reshape(-1)
        self.loss = _Loss.apply(x, y, a, b, native, settings)
        self.f, self.g = _Potentials.apply(x, y, a, b, native, settings)

    epsilon = property(lambda self: self._native.epsilon)
    iterations = property(lambda self: self._native.iterations)
    converged = property(lambda self: self._native.converged)
    marginal_error = property(lambda self: self._native.marginal_error)
    transport_cost = property(lambda self: self._native.transport_cost)
    report = property(lambda self: self._native.report)
    backend = property(lambda self: self._native.report["backend"])
    kept_fraction = property(lambda self: self._native.report["kept_fraction"])

    def apply(self, v):
        """P @ v for v (m,) or (m, k), streamed; differentiable with respect to v."""
        _require_tensor(v, "v")
        vv = v.reshape(-1, 1) if v.dim() == 1 else v
        out = _Apply.apply(vv.to(self._x.dtype), self._native, False)
        return out.reshape(-1) if v.dim() == 1 else out

    def apply_transpose(self, u):
        """P.T @ u for u (n,) or (n, k), streamed; differentiable with respect to u."""
        _require_tensor(u, "u")
        uu = u.reshape(-1, 1) if u.dim() == 1 else u
        out = _Apply.apply(uu.to(self._x.dtype), self._native, True)
        return out.reshape(-1) if u.dim() == 1 else out

    def barycentric_map(self):
        """(n, d) image of each x_i: sum_j P_ij y_j / sum_j P_ij (not differentiable)."""
        return _to_torch(self._native.barycentric_map())

    def gradients(self):
        """(d loss / dx, dy, da, db) as tensors, shapes (n, d), (m, d), (n,), (m,)."""
        return tuple(_to_torch(g) for g in self._native.gradients())

    def hvp(self, vx, vy=None, want_y=False):
        """Hessian-vector product of ``loss``: (H_xx vx + H_xy vy, H_yx vx + H_yy vy or None).

        Args:
            vx: (n, d) direction on x.
            vy: (m, d) direction on y, or None (zero).
            want_y: also return the y block.

        Returns:
            (hx, hy, cg_iterations, converged); hy is None unless ``want_y``.
        """
        vy = None if vy is None else _points(vy, "vy").to(self._x.dtype)
        hx, hy, iters, ok = self._native.hvp(
            _points(vx, "vx").to(self._x.dtype),
            vy,
            bool(want_y),
            self._settings.hvp_max_iter,
            self._settings.hvp_rtol,
            self._settings.num_threads,
        )
        return _to_torch(hx), (None if hy is None else _to_torch(hy)), iters, ok

    def inverse_hvp(self, g, max_iter=100, rtol=1e-6, inner_max_iter=300, inner_rtol=1e-8):
        """Solves H_xx w = g by CG over Hessian-vector products (a Newton direction is -w).

        Returns:
            (w, iterations, converged, negative_curvature): w (n, d); negative_curvature says
            CG met a direction where H_xx is not positive (the value is not convex there).
        """
        w, iters, ok, neg = self._native.inverse_hvp(
            _points(g, "g").to(self._x.dtype),
            int(max_iter),
            float(rtol),
            int(inner_max_iter),
            float(inner_rtol),
            self._settings.num_threads,
        )
        return _to_torch(w), iters, ok, neg

    def __repr__(self):
        return (
            f"TorchSinkhornResult(loss={float(self.loss):.6g}, epsilon={self.epsilon:.3g}, "
            f"iterations={self.iterations}, converged={self.converged})"
        )


def sinkhorn(
    x: torch.Tensor,
    y: torch.Tensor,
    a: Any = None,
    b: Any = None,
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
    marginal_tol: float = 1e-3,
    block_size: int = 32,
    iterations: int = 0,
    epsilons: Sequence[float] | None = None,
    update: str = "symmetric",
    last_extrapolation: bool = True,
    tol: float | None = None,
    check_every: int = 5,
    x_labels: Any = None,
    y_labels: Any = None,
    label_cost: Any = None,
    label_weight: float = 1.0,
    num_threads: int = 0,
    hvp_max_iter: int = 300,
    hvp_rtol: float = 1e-6,
    init: Any = None,
) -> TorchSinkhornResult:
    """Entropic OT between weighted point clouds, as a differentiable torch object.

    Solves min_P <P, C> + epsilon KL(P | a x b) (or its unbalanced / debiased variants) with
    the ground cost C_ij = c(x_i, y_j) named by ``cost`` plus, with labels, the
    label-augmented cost ``label_weight * label_cost[x_labels[i], y_labels[j]]``
    [alvarezmelis2020], epsilon = blur**p, in O((n + m) d) memory.

    Args:
        x: (n, d) CPU float32/float64 tensor.
        y: (m, d), same dtype.
        a: (n,) weights >= 0 or None (uniform); a list or array is converted to x's dtype.
        b: (m,) weights or None (uniform), converted likewise.
        blur: final blur (length units); epsilon = blur**p (p = 2 but for euclidean).
        scaling: ratio between successive blurs of the schedule, as birkhoff.sinkhorn.
        debias: solve the Sinkhorn divergence (its potentials are not differentiable).
        cost: "sqeuclidean" (default), "euclidean" (|x - y|^p) or "cosine", as
            birkhoff.sinkhorn; second derivatives (Hessian-vector products) need sqeuclidean.
        p: the power of the euclidean cost, p >= 1 (default 1).
        half_cost: with sqeuclidean, |x - y|^2 / 2 instead of |x - y|^2.
        reach: unbalanced OT on both sides, rho = reach**2.
        reach_a: unbalanced OT on the x side only (overrides ``reach`` there).
        reach_b: unbalanced OT on the y side only.
        diameter: start of the schedule (default: the data's diameter).
        schedule: "converge" (to ``marginal_tol``), "geomloss" or "auto", as
            birkhoff.sinkhorn.
        backend: "dense", "multiscale" or "auto", as birkhoff.sinkhorn.
        max_iter: converge schedule: the budget of iterations at the final epsilon.
        acceleration: converge schedule: "over-relaxation", "anderson" or "none".
        marginal_tol: ``converged`` means a relative marginal error within this.
        block_size: multiscale: points per row block (a multiple of 16; columns are kept
            by sub-blocks of 8 points, 16 from d = 4, whole blocks from d = 8).
        iterations: when > 0, this many iterations at the final epsilon (GeomLoss schedule).
        epsilons: GeomLoss schedule: explicit epsilons (cost units), replacing blur/scaling.
        update: GeomLoss schedule: "symmetric" (averaged) or "alternating" (Gauss-Seidel).
        last_extrapolation: GeomLoss schedule, symmetric: a final full sweep.
        tol: with ``iterations``, stop once the potentials move less than this.
        check_every: iterations between two ``tol`` checks.
        x_labels: (n,) integer class ids of x (any integer dtype or a list; made int64).
        y_labels: (m,) integer class ids of y, likewise.
        label_cost: (V, V) symmetric table of class-to-class costs (converted to float64).
        label_weight: the table's factor (OTDD's lambda).
        num_threads: OpenMP threads, 0 = OpenMP's default.
        hvp_max_iter: CG iteration cap of the second-order products.
        hvp_rtol: CG relative tolerance of the second-order products.
        init: a warm start (f, g), tensors (detached here) or arrays of shapes (n,) and (m,) in
            this result's convention, e.g. the previous step's ``r.f, r.g`` in a gradient flow:
            the converge schedule skips the annealing and iterates at the final epsilon from
            them, as :func:`birkhoff.sinkhorn`'s ``init``.

    Returns:
        TorchSinkhornResult with a differentiable ``loss`` and potentials ``f``, ``g``.

    Raises:
        TypeError: tensors that are not CPU float32/float64 (CUDA tensors included).
        ValueError: shapes, NaN/inf, negative weights, unequal masses when balanced, bad
            labels or tables (the message names the argument).
        KeyboardInterrupt: Ctrl-C during the solve.
    """
    if reach is not None:
        reach_a = reach if reach_a is None else reach_a
        reach_b = reach if reach_b is None else reach_b
    labels = None
    if label_cost is not None:
        labels = (
            _labels(x_labels, "x_labels"),
            _labels(y_labels, "y_labels"),
            _tensor(label_cost, "label_cost").detach().cpu().to(torch.float64).contiguous(),
            label_weight,
        )
    settings = _Settings(
        blur,
        reach_a,
        reach_b,
        cost_spec(cost, p, half_cost),
        debias,
        dict(
            scaling=scaling,
            diameter=diameter,
            schedule=schedule,
            backend=backend,
            max_iter=max_iter,
            acceleration=acceleration,
            marginal_tol=marginal_tol,
            block_size=block_size,
            iterations=iterations,
            epsilons=epsilons,
            update=update,
            last_extrapolation=last_extrapolation,
            tol=tol,
            check_every=check_every,
            num_threads=num_threads,
        ),
        hvp_max_iter=hvp_max_iter,
        hvp_rtol=hvp_rtol,
        labels=labels,
    )
    a, b = _weights_in(a, "a", x), _weights_in(b, "b", x)
    if init is not None and isinstance(init, (tuple, list)):
        init = tuple(v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v for v in init)
    with argument_names({"init_f": "init", "init_g": "init"}):
        native = _solve_one(settings, x, y, a, b, _init_potentials(init))
    return TorchSinkhornResult(native, settings, x, y, a, b)
