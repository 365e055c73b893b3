"""birkhoff.torch: autograd, batches, second order, c-transform, labels, GeomLoss parity."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.special import logsumexp

from birkhoff import sinkhorn as birkhoff_sinkhorn

torch = pytest.importorskip("torch")
bt = pytest.importorskip("birkhoff.torch")

F64 = torch.float64


def clouds(n, m, d, seed, shift=0.5, dtype=F64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=dtype)
    y = torch.randn(m, d, generator=g, dtype=dtype) + shift
    a = torch.rand(n, generator=g, dtype=dtype) + 0.1
    b = torch.rand(m, generator=g, dtype=dtype) + 0.1
    return x, y, a / a.sum(), b / b.sum()


def converged_loss(**kw):
    """A SamplesLoss whose fixed-epsilon solve converges (gradients exact)."""
    return bt.SamplesLoss(blur=kw.pop("blur", 0.7), iterations=3000, tol=1e-14, **kw)


def test_import_birkhoff_works_without_torch_and_birkhoff_torch_says_what_is_missing():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import birkhoff\n"
        "try:\n"
        "    import birkhoff.torch\n"
        "except ImportError as e:\n"
        "    print('ImportError:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install birkhoff[torch]" in out.stdout


@pytest.mark.parametrize("debias", [False, True], ids=["ot", "divergence"])
@pytest.mark.parametrize("reach", [None, 1.5], ids=["balanced", "unbalanced"])
def test_gradcheck_points_float64(debias, reach):
    x, y, a, b = clouds(9, 7, 2, 1)
    loss = converged_loss(debias=debias, reach=reach)
    x.requires_grad_()
    y.requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: loss(a, x, b, y), (x, y), atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("debias", [False, True], ids=["ot", "divergence"])
def test_gradcheck_weights_balanced_along_mass_preserving_directions(debias):
    x, y, a, b = clouds(8, 6, 2, 2)
    loss = converged_loss(debias=debias)
    wa, wb = a.clone().requires_grad_(), b.clone().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda wa, wb: loss(wa / wa.sum(), x, wb / wb.sum(), y), (wa, wb), atol=1e-7, rtol=1e-5
    )


@pytest.mark.parametrize("debias", [False, True], ids=["ot", "divergence"])
def test_gradcheck_weights_unbalanced(debias):
    x, y, a, b = clouds(8, 6, 2, 3)
    loss = converged_loss(debias=debias, reach=1.0)
    a.requires_grad_()
    b.requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: loss(a, x, b, y), (a, b), atol=1e-7, rtol=1e-5)


def test_gradcheck_batched_and_ragged():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 6, 2, generator=g, dtype=F64, requires_grad=True)
    y = torch.randn(3, 5, 2, generator=g, dtype=F64, requires_grad=True)
    loss = converged_loss()
    assert torch.autograd.gradcheck(lambda x, y: loss(x, y).sum(), (x, y), atol=1e-7, rtol=1e-5)
    xr = torch.randn(11, 2, generator=g, dtype=F64, requires_grad=True)
    yr = torch.randn(9, 2, generator=g, dtype=F64, requires_grad=True)
    bx = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    by = torch.tensor([0, 0, 1, 1, 1, 1, 2, 2, 2])
    weights = torch.tensor([1.0, 2.0, 3.0], dtype=F64)
    assert torch.autograd.gradcheck(
        lambda x, y: (loss(x, y, x_batch=bx, y_batch=by) * weights).sum(),
        (xr, yr),
        atol=1e-7,
        rtol=1e-5,
    )


geomloss = pytest.importorskip("geomloss")


def geomloss_value_and_grads(a, x, b, y, **kw):
    a, x, b, y = (t.detach().clone().requires_grad_() for t in (a, x, b, y))
    v = geomloss.SamplesLoss("sinkhorn", p=2, backend="tensorized", **kw)(a, x, b, y)
    return (v.detach(), *torch.autograd.grad(v.sum(), (a, x, b, y)))


def ours_value_and_grads(a, x, b, y, **kw):
    a, x, b, y = (t.detach().clone().requires_grad_() for t in (a, x, b, y))
    v = bt.SamplesLoss("sinkhorn", p=2, **kw)(a, x, b, y)
    return (v.detach(), *torch.autograd.grad(v.sum(), (a, x, b, y)))


def assert_rel(got, want, rtol=1e-5, what=""):
    scale = want.abs().max().item()
    err = (got - want).abs().max().item()
    assert err <= rtol * max(scale, 1e-12), f"{what}: max error {err:.3g}, scale {scale:.3g}"


@pytest.mark.parametrize("debias", [True, False], ids=["divergence", "ot"])
@pytest.mark.parametrize("blur,scaling", [(0.05, 0.5), (0.3, 0.8)])
def test_values_and_gradients_equal_geomloss_tensorized(debias, blur, scaling):
    x, y, a, b = clouds(120, 90, 3, 5)
    kw = {"blur": blur, "scaling": scaling, "debias": debias}
    want = geomloss_value_and_grads(a, x, b, y, **kw)
    got = ours_value_and_grads(a, x, b, y, **kw)
    for name, g, w in zip(["value", "a", "x", "b", "y"], got, want):
        if name in "ab":  # weight gradients: both are defined up to a constant (balanced)
            g, w = g - g.mean(), w - w.mean()
        assert_rel(g, w, what=name)


@pytest.mark.parametrize("debias", [True, False], ids=["divergence", "ot"])
def test_unbalanced_values_equal_geomloss(debias):
    x, y, a, b = clouds(80, 70, 2, 6)
    kw = {"blur": 0.1, "scaling": 0.7, "debias": debias, "reach": 0.8}
    want = geomloss_value_and_grads(a, x, b, y, **kw)[0]
    got = ours_value_and_grads(a, x, b, y, **kw)[0]
    assert_rel(got, want, what="value")


def test_batched_values_and_gradients_equal_geomloss():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 50, 3, generator=g, dtype=F64)
    y = torch.randn(3, 40, 3, generator=g, dtype=F64) + 0.3
    a = torch.full((3, 50), 1 / 50, dtype=F64)
    b = torch.full((3, 40), 1 / 40, dtype=F64)
    want = geomloss_value_and_grads(a, x, b, y, blur=0.1)
    got = ours_value_and_grads(a, x, b, y, blur=0.1)
    assert got[0].shape == (3,)
    for name, gg, w in zip(["value", "a", "x", "b", "y"], got, want):
        if name in "ab":
            gg, w = gg - gg.mean(-1, keepdim=True), w - w.mean(-1, keepdim=True)
        assert_rel(gg, w, what=name)


def test_potentials_equal_geomloss():
    x, y, _, _ = clouds(60, 50, 2, 8)
    for debias in (True, False):
        f, g = bt.SamplesLoss(blur=0.1, potentials=True, debias=debias)(x, y)
        ft, gt = geomloss.SamplesLoss(
            "sinkhorn", p=2, blur=0.1, potentials=True, debias=debias, backend="tensorized"
        )(x, y)
        assert_rel(f, ft.reshape(-1), what="f")
        assert_rel(g, gt.reshape(-1), what="g")


@pytest.mark.parametrize("sorted_batch", [True, False], ids=["sorted", "shuffled"])
def test_ragged_batch_equals_the_loop_of_single_solves(sorted_batch):
    g = torch.Generator().manual_seed(9)
    sizes_x, sizes_y = [30, 7, 19], [12, 25, 9]
    bx = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes_x)])
    by = torch.cat([torch.full((s,), k) for k, s in enumerate(sizes_y)])
    if not sorted_batch:
        bx = bx[torch.randperm(len(bx), generator=g)]
        by = by[torch.randperm(len(by), generator=g)]
    x = torch.randn(len(bx), 3, generator=g, dtype=F64, requires_grad=True)
    y = torch.randn(len(by), 3, generator=g, dtype=F64, requires_grad=True)
    loss = bt.SamplesLoss(blur=0.1)
    ragged = loss(x, y, x_batch=bx, y_batch=by)
    gx, gy = torch.autograd.grad(ragged.sum(), (x, y))
    assert ragged.shape == (3,)
    for k in range(3):
        xk = x.detach()[bx == k].clone().requires_grad_()
        yk = y.detach()[by == k].clone().requires_grad_()
        single = loss(xk, yk)
        sx, sy = torch.autograd.grad(single, (xk, yk))
        assert float(ragged[k]) == pytest.approx(float(single), rel=1e-12)
        torch.testing.assert_close(gx[bx == k], sx, rtol=1e-10, atol=1e-14)
        torch.testing.assert_close(gy[by == k], sy, rtol=1e-10, atol=1e-14)
    f, _ = bt.SamplesLoss(blur=0.1, potentials=True)(x, y, x_batch=bx, y_batch=by)
    fk, _ = bt.SamplesLoss(blur=0.1, potentials=True)(x[bx == 1], y[by == 1])
    torch.testing.assert_close(f[bx == 1], fk)


def dense_hessian_vector(x, y, a, b, blur, cs, A, B):
    """The Hessian-vector product of OT_eps written densely (float64), independent code."""
    x, y, a, b, A, B = (t.detach().numpy() for t in (x, y, a, b, A, B))
    eps, kap = blur**2, 2 * cs
    C = cs * ((x[:, None] - y[None]) ** 2).sum(-1)
    f, g = np.zeros(len(x)), np.zeros(len(y))
    for _ in range(20000):
        f = -eps * logsumexp(np.log(b)[None] + (g[None] - C) / eps, axis=1)
        g = -eps * logsumexp(np.log(a)[:, None] + (f[:, None] - C) / eps, axis=0)
    P = a[:, None] * b[None] * np.exp((f[:, None] + g[None] - C) / eps)
    e = x[:, None] - y[None]
    ed = (e * (A[:, None] - B[None])).sum(-1)
    M = np.block([[np.diag(P.sum(1)), P], [P.T, np.diag(P.sum(0))]])
    z = np.linalg.lstsq(
        M, np.concatenate([kap * (P * ed).sum(1), kap * (P * ed).sum(0)]), rcond=None
    )[0]
    zz = z[: len(x)][:, None] + z[len(x) :][None]
    full = (
        (kap / eps) * P[..., None] * e * zz[..., None]
        + kap * P[..., None] * (A[:, None] - B[None])
        - (kap**2 / eps) * P[..., None] * ed[..., None] * e
    )
    return torch.from_numpy(full.sum(1)), torch.from_numpy(-full.sum(0))


@pytest.mark.parametrize("half_cost", [False, True], ids=["cs1", "cs_half"])
def test_double_backward_matches_the_dense_hessian_and_finite_differences(half_cost):
    x, y, a, b = clouds(40, 33, 2, 10)
    x.requires_grad_()
    y.requires_grad_()
    blur = 0.6

    def value(x, y):
        return bt.sinkhorn(
            x, y, a, b, blur=blur, half_cost=half_cost, iterations=5000, tol=1e-14, hvp_rtol=1e-12
        ).loss

    gx, gy = torch.autograd.grad(value(x, y), (x, y), create_graph=True)
    gen = torch.Generator().manual_seed(11)
    A, B = (
        torch.randn(x.shape, generator=gen, dtype=F64),
        torch.randn(y.shape, generator=gen, dtype=F64),
    )
    hx, hy = torch.autograd.grad((gx * A).sum() + (gy * B).sum(), (x, y))
    wx, wy = dense_hessian_vector(x, y, a, b, blur, 0.5 if half_cost else 1.0, A, B)
    assert_rel(hx, wx, 1e-7, "x block vs dense")
    assert_rel(hy, wy, 1e-7, "y block vs dense")
    h = 1e-5
    xp, yp = (x + h * A).detach().requires_grad_(), (y + h * B).detach().requires_grad_()
    xm, ym = (x - h * A).detach().requires_grad_(), (y - h * B).detach().requires_grad_()
    up = torch.autograd.grad(value(xp, yp), (xp, yp))
    down = torch.autograd.grad(value(xm, ym), (xm, ym))
    assert_rel(hx, (up[0] - down[0]) / (2 * h), 1e-5, "x block vs finite differences")
    assert_rel(hy, (up[1] - down[1]) / (2 * h), 1e-5, "y block vs finite differences")


def test_double_backward_of_the_debiased_samples_loss_matches_finite_differences():
    x, y, _, _ = clouds(25, 20, 3, 12)
    x.requires_grad_()
    loss = converged_loss(blur=0.6, hvp_rtol=1e-12)
    (gx,) = torch.autograd.grad(loss(x, y), x, create_graph=True)
    v = torch.randn(x.shape, generator=torch.Generator().manual_seed(13), dtype=F64)
    (hv,) = torch.autograd.grad((gx * v).sum(), x)
    h = 1e-5
    xp, xm = (x + h * v).detach().requires_grad_(), (x - h * v).detach().requires_grad_()
    fd = (torch.autograd.grad(loss(xp, y), xp)[0] - torch.autograd.grad(loss(xm, y), xm)[0]) / (
        2 * h
    )
    assert_rel(hv, fd, 1e-5, "divergence HVP")


def test_newton_step_with_inverse_hvp_beats_the_best_gradient_step_on_registration():
    """Affine registration of a cloud onto its rotated (5 degrees), scaled, shifted copy."""
    gen = torch.Generator().manual_seed(14)
    y = torch.randn(60, 2, generator=gen, dtype=F64)
    c, s = np.cos(np.radians(5)), np.sin(np.radians(5))
    rot = torch.tensor([[c, -s], [s, c]], dtype=F64)
    x0 = (y - 0.15) @ rot.T * 0.92 + 0.01 * torch.randn(60, 2, generator=gen, dtype=F64)
    loss = converged_loss(blur=0.1, hvp_rtol=1e-10)

    def value(A, t):
        return loss(x0 @ A.T + t, y)

    A = torch.eye(2, dtype=F64, requires_grad=True)
    t = torch.zeros(2, dtype=F64, requires_grad=True)
    start = value(A, t)
    (w_a, w_t), _, converged, negative = bt.inverse_hvp(start, [A, t])
    assert converged and not negative
    with torch.no_grad():
        newton = float(value(A - w_a, t - w_t))
    ga, gt = torch.autograd.grad(value(A, t), (A, t))
    with torch.no_grad():
        best_gradient = min(
            float(value(A - s * ga, t - s * gt)) for s in torch.logspace(-3, 2, 80).tolist()
        )
    assert newton < 0.2 * best_gradient
    assert newton < 0.05 * float(start)


def test_inverse_hvp_of_a_solution_solves_the_newton_system():
    gen = torch.Generator().manual_seed(15)
    y = torch.randn(50, 2, generator=gen, dtype=F64)
    x0 = (y - 0.3) * 0.85 + 0.01 * torch.randn(50, 2, generator=gen, dtype=F64)
    r = bt.sinkhorn(x0, y, blur=0.1, iterations=3000, tol=1e-13, hvp_rtol=1e-12)
    g = r.gradients()[0]
    w, _, converged, negative = r.inverse_hvp(g, rtol=1e-9, inner_rtol=1e-12)
    assert converged and not negative
    hw, _, _, _ = r.hvp(w)
    assert_rel(hw, g, 1e-6, "H w")


def test_potentials_are_differentiable_by_implicit_differentiation():
    x, y, a, b = clouds(12, 10, 2, 15)
    x.requires_grad_()
    y.requires_grad_()
    u = torch.randn(12, generator=torch.Generator().manual_seed(16), dtype=F64)

    def functional(x, y):
        r = bt.sinkhorn(x, y, a, b, blur=0.6, iterations=4000, tol=1e-14, hvp_rtol=1e-12)
        # Invariant under (f + t, g - t): the only part balanced potentials define.
        return (u * r.f).sum() + u.sum() * r.g.mean()

    assert torch.autograd.gradcheck(functional, (x, y), atol=1e-7, rtol=1e-5)


def test_c_transform_matches_brute_force_and_danskin_gradients():
    x, y, a, b = clouds(70, 90, 3, 17)
    g = torch.randn(90, generator=torch.Generator().manual_seed(18), dtype=F64)
    c, arg, value = bt.c_transform(x, y, g, a, b)
    dense = ((x[:, None] - y[None]) ** 2).sum(-1) - g[None]
    torch.testing.assert_close(c, dense.min(1).values)
    assert torch.equal(arg, dense.argmin(1))
    assert float(value) == pytest.approx(float((a * c).sum() + (b * g).sum()), rel=1e-12)
    xr, gr = x.clone().requires_grad_(), g.clone().requires_grad_()
    _, _, v = bt.c_transform(xr, y, gr, a, b)
    gx, gg = torch.autograd.grad(v, (xr, gr))
    torch.testing.assert_close(gx, 2 * a[:, None] * (x - y[arg]))
    want_g = b - torch.zeros(90, dtype=F64).index_add(0, arg, a)
    torch.testing.assert_close(gg, want_g)


def test_label_cost_matches_the_dense_formula():
    x, y, a, b = clouds(40, 30, 2, 19)
    gen = torch.Generator().manual_seed(20)
    lx, ly = torch.randint(0, 3, (40,), generator=gen), torch.randint(0, 3, (30,), generator=gen)
    W = torch.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 0.5], [2.0, 0.5, 0.0]], dtype=F64)
    r = bt.sinkhorn(
        x,
        y,
        a,
        b,
        blur=0.5,
        iterations=3000,
        tol=1e-13,
        x_labels=lx,
        y_labels=ly,
        label_cost=W,
        label_weight=0.8,
    )
    eps = 0.25
    C = (((x[:, None] - y[None]) ** 2).sum(-1) + 0.8 * W[lx][:, ly]).numpy()
    f, g = np.zeros(40), np.zeros(30)
    for _ in range(5000):
        f = -eps * logsumexp(np.log(b.numpy())[None] + (g[None] - C) / eps, axis=1)
        g = -eps * logsumexp(np.log(a.numpy())[:, None] + (f[:, None] - C) / eps, axis=0)
    want = float((a.numpy() * f).sum() + (b.numpy() * g).sum())
    assert float(r.loss) == pytest.approx(want, rel=1e-9)


def test_inputs_are_shared_without_copy_and_non_contiguous_ones_are_accepted():
    x, y, _, _ = clouds(30, 20, 3, 21)
    assert bt._points(x, "x").data_ptr() == x.data_ptr()
    xt = x.t().contiguous().t()  # same values, column-major
    assert not xt.is_contiguous()
    loss = bt.SamplesLoss(blur=0.2)
    assert float(loss(xt, y)) == float(loss(x, y))


def test_float32_works_and_bad_devices_and_dtypes_raise_type_error():
    x, y, _, _ = clouds(50, 40, 3, 22, dtype=torch.float32)
    x.requires_grad_()
    v = bt.SamplesLoss(blur=0.1)(x, y)
    assert v.dtype == torch.float32
    (g,) = torch.autograd.grad(v, x)
    assert g.dtype == torch.float32 and torch.isfinite(g).all()
    with pytest.raises(TypeError, match="x: meta tensors are not supported"):
        bt.SamplesLoss()(torch.zeros(3, 2, device="meta"), y[:, :2])
    with pytest.raises(TypeError, match="x: dtype"):
        bt.SamplesLoss()(torch.zeros(3, 2, dtype=torch.int64), y[:, :2])
    with pytest.raises(ValueError, match="x_batch"):
        bt.SamplesLoss()(x, y, x_batch=torch.zeros(50, dtype=torch.int64))


def test_ctrl_c_interrupts_a_torch_solve(interrupted):
    code = (
        "import torch, birkhoff.torch as bt\n"
        "x = torch.randn(20000, 3, dtype=torch.float64); y = torch.randn(20000, 3).double()\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    bt.SamplesLoss(blur=0.05, iterations=100000)(x, y)\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    _, out = interrupted(code, delay=2.0)
    assert "interrupted" in out


@pytest.mark.slow
def test_forward_and_backward_at_1e5_points_use_linear_memory():
    code = (
        "import resource, torch, birkhoff.torch as bt\n"
        "g = torch.Generator().manual_seed(0)\n"
        "x = torch.randn(100000, 3, generator=g, requires_grad=True)\n"
        "y = torch.randn(100000, 3, generator=g)\n"
        "bt.SamplesLoss(blur=1.0)(x[:100], y[:100]).backward()\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "loss = bt.SamplesLoss(blur=0.5, debias=False)(x, y)\n"
        "loss.backward()\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print((peak - base) * 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    added = int(out.stdout.strip().splitlines()[-1])
    # O((n + m) d): a few dozen arrays of n * d floats; a dense cost would take 40 GB.
    assert added < 40 * (100000 + 100000) * 3 * 4, f"added {added / 2**20:.1f} MiB"


def test_torch_sinkhorn_takes_the_solver_options_of_birkhoff_sinkhorn():
    gen = torch.Generator().manual_seed(4)
    x = torch.rand(300, 2, generator=gen, dtype=torch.float64)
    y = torch.rand(250, 2, generator=gen, dtype=torch.float64) + 0.3
    xn, yn = x.numpy(), y.numpy()
    for options in (
        dict(backend="dense", marginal_tol=1e-6),
        dict(backend="multiscale", acceleration="anderson", marginal_tol=1e-6),
    ):
        ours = bt.sinkhorn(x, y, blur=0.05, **options)
        ref = birkhoff_sinkhorn(xn, yn, blur=0.05, **options)
        assert ours.converged and ours.marginal_error <= 1e-6
        assert float(ours.loss) == pytest.approx(ref.loss, rel=1e-12)
    budget = bt.sinkhorn(x, y, blur=0.01, max_iter=2, marginal_tol=1e-9)
    assert not budget.converged
    with pytest.raises(ValueError, match="^backend: must be one of"):
        bt.sinkhorn(x, y, backend="gpu")
