"""Transport: parity with POT, closed forms, gradients, plan products, threads."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import birkhoff

ot = pytest.importorskip("ot")


def _weights(rng, k, uniform):
    if uniform:
        return np.full(k, 1.0 / k)
    w = rng.uniform(0.1, 1.1, k)
    return w / w.sum()


@pytest.mark.parametrize("d", [1, 2, 3, 10])
@pytest.mark.parametrize("blur", [0.1, 0.3, 1.0])
@pytest.mark.parametrize("uniform", [True, False], ids=["uniform", "random-weights"])
def test_potentials_and_cost_match_pot_sinkhorn_log(rng, d, blur, uniform):
    n, m = 120, 90
    x = rng.uniform(0, 1, (n, d))
    y = rng.uniform(0, 1, (m, d)) + 0.2
    a, b = _weights(rng, n, uniform), _weights(rng, m, uniform)
    eps = blur**2
    M = ot.dist(x, y)
    P, log = ot.sinkhorn(
        a, b, M, eps, method="sinkhorn_log", log=True, numItermax=100000, stopThr=1e-13
    )
    f_pot = eps * (log["log_u"] - np.log(a))
    g_pot = eps * (log["log_v"] - np.log(b))
    r = birkhoff.sinkhorn(x, y, a, b, blur=blur, iterations=100000, tol=1e-13, update="alternating")
    assert r.converged
    shift = np.mean(r.f - f_pot)
    scale = np.abs(f_pot).max() + np.abs(g_pot).max() + eps
    assert np.abs(r.f - f_pot - shift).max() <= 1e-4 * scale
    assert np.abs(r.g - g_pot + shift).max() <= 1e-4 * scale
    assert r.transport_cost == pytest.approx(float((P * M).sum()), rel=1e-4)
    np.testing.assert_allclose(r.plan(), P, atol=1e-7, rtol=1e-4)


def test_float32_agrees_with_float64(rng):
    x = rng.normal(size=(300, 5))
    y = rng.normal(size=(250, 5)) + 0.3
    r64 = birkhoff.sinkhorn(x, y, blur=0.5, warn=False)
    r32 = birkhoff.sinkhorn(x.astype(np.float32), y.astype(np.float32), blur=0.5, warn=False)
    assert r32.f.dtype == np.float32 and r64.f.dtype == np.float64
    assert r32.loss == pytest.approx(r64.loss, rel=1e-5)
    np.testing.assert_allclose(r32.f, r64.f, rtol=1e-4, atol=1e-4)


@settings(max_examples=15, deadline=None)
@given(
    t=st.lists(st.floats(-2, 2), min_size=3, max_size=3),
    half=st.booleans(),
    blur=st.sampled_from([0.05, 0.2, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_divergence_to_a_translate_is_the_squared_shift(t, half, blur, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(64, 3))
    t = np.asarray(t)
    r = birkhoff.sinkhorn_divergence(
        x, x + t, blur=blur, half_cost=half, scaling=0.7, marginal_tol=1e-8
    )
    cs = 0.5 if half else 1.0
    assert r.loss == pytest.approx(cs * (t @ t), abs=1e-6 * (1 + t @ t))


def test_samples_loss_matches_the_half_cost_divergence_and_returns_potentials(rng):
    x = rng.normal(size=(100, 2))
    y = rng.normal(size=(80, 2)) + 1.0
    loss = birkhoff.SamplesLoss("sinkhorn", p=2, blur=0.1, scaling=0.8)
    r = birkhoff.sinkhorn_divergence(
        x, y, blur=0.1, scaling=0.8, half_cost=True, schedule="geomloss"
    )
    assert loss(x, y) == pytest.approx(r.loss, rel=1e-12)
    a, b = np.full(100, 0.01), np.full(80, 1 / 80)
    assert loss(a, x, b, y) == pytest.approx(r.loss, rel=1e-9)
    f, g = birkhoff.SamplesLoss(blur=0.1, scaling=0.8, potentials=True)(x, y)
    np.testing.assert_allclose(f, r.f - r.f_aa)
    assert g.shape == (80,)
    with pytest.raises(ValueError, match="p"):
        birkhoff.SamplesLoss(p=3)


def test_gradient_matches_finite_differences(rng):
    x = rng.normal(size=(15, 2))
    y = rng.normal(size=(12, 2)) + 0.5
    opts = dict(blur=0.8, iterations=5000, tol=1e-13)
    grad = birkhoff.sinkhorn(x, y, **opts).grad_x()
    h = 1e-6
    for i, k in [(0, 0), (3, 1), (14, 0)]:
        xp, xm = x.copy(), x.copy()
        xp[i, k] += h
        xm[i, k] -= h
        fd = (birkhoff.sinkhorn(xp, y, **opts).loss - birkhoff.sinkhorn(xm, y, **opts).loss) / (
            2 * h
        )
        assert grad[i, k] == pytest.approx(fd, abs=1e-6)


def test_plan_products_match_the_dense_plan(rng):
    x = rng.normal(size=(70, 4)).astype(np.float32)
    y = rng.normal(size=(50, 4)).astype(np.float32)
    r = birkhoff.sinkhorn(x, y, blur=0.5, warn=False)
    P = r.plan().astype(np.float64)
    v = rng.normal(size=(50, 3)).astype(np.float32)
    u = rng.normal(size=70).astype(np.float32)
    np.testing.assert_allclose(r.apply(v), P @ v, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(r.apply_transpose(u), P.T @ u, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(r.row_marginal(), P.sum(1), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(
        r.barycentric_map(), (P @ y) / P.sum(1, keepdims=True), rtol=1e-4, atol=1e-5
    )


def test_results_do_not_depend_on_the_thread_count(rng):
    x = rng.normal(size=(3000, 3)).astype(np.float32)  # large enough for two threads
    y = rng.normal(size=(2500, 3)).astype(np.float32)
    r1 = birkhoff.sinkhorn(x, y, num_threads=1, warn=False)
    r2 = birkhoff.sinkhorn(x, y, num_threads=2, warn=False)
    np.testing.assert_array_equal(r1.f, r2.f)
    assert r1.loss == r2.loss


def test_zero_weights_are_valid_and_produce_no_nan(rng):
    x = rng.normal(size=(40, 2))
    y = rng.normal(size=(30, 2))
    a = _weights(rng, 40, False)
    a[::3] = 0
    a /= a.sum()
    r = birkhoff.sinkhorn(x, y, a, blur=0.3, warn=False)
    assert np.isfinite(r.f).all() and np.isfinite(r.g).all() and np.isfinite(r.loss)
    assert np.all(r.grad_x()[::3] == 0)


def test_not_converged_warns_and_says_which_budget_ran_out(rng):
    x, y = rng.normal(size=(50, 2)), rng.normal(size=(40, 2)) * 2
    with pytest.warns(RuntimeWarning, match="not converged.*max_iter"):
        r = birkhoff.sinkhorn(x, y, blur=0.01, max_iter=3)
    assert not r.converged and r.marginal_error > 1e-3 and r.report["budget_exhausted"]
    with pytest.warns(RuntimeWarning, match="not converged.*GeomLoss schedule"):
        r = birkhoff.sinkhorn(x, y, blur=0.01, scaling=0.5, schedule="geomloss")
    assert not r.converged


def test_the_default_run_converges_to_its_tolerance(rng):
    x, y = rng.normal(size=(200, 3)), rng.normal(size=(150, 3)) + 1.0
    r = birkhoff.sinkhorn(x, y, blur=0.02)
    assert r.converged and r.marginal_error <= 1e-3
    assert r.report["schedule"] == "converge" and r.backend == "dense"
    u, v = rng.random((300, 2)), rng.random((250, 2)) + 0.3
    loose = birkhoff.sinkhorn(u, v, blur=0.05)
    tight = birkhoff.sinkhorn(u, v, blur=0.05, marginal_tol=1e-8)
    assert tight.converged and tight.marginal_error <= 1e-8
    assert loose.loss == pytest.approx(tight.loss, rel=1e-3)


def test_the_multiscale_backend_agrees_with_the_dense_one(rng):
    x, y = rng.random((1500, 2)), rng.random((1200, 2)) + 0.2
    dense = birkhoff.sinkhorn(x, y, blur=0.01, backend="dense", marginal_tol=1e-7)
    multi = birkhoff.sinkhorn(x, y, blur=0.01, backend="multiscale", marginal_tol=1e-7)
    assert multi.backend == "multiscale" and multi.converged
    assert 0 < multi.kept_fraction < 1
    assert multi.loss == pytest.approx(dense.loss, rel=1e-6)
    np.testing.assert_allclose(multi.f - multi.f.mean(), dense.f - dense.f.mean(), atol=1e-6)
    np.testing.assert_allclose(multi.barycentric_map(), dense.barycentric_map(), atol=1e-4)


def test_dlpack_tensors_are_accepted_without_copy():
    torch = pytest.importorskip("torch")
    x = torch.randn(30, 2)
    y = torch.randn(20, 2)
    r = birkhoff.sinkhorn(x, y, blur=0.5, warn=False)
    assert r.f.shape == (30,)


def test_ctrl_c_interrupts_a_long_solve(interrupted):
    code = (
        "import sys, numpy as np, birkhoff\n"
        "x = np.random.default_rng(0).random((20000, 3), dtype=np.float32)\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    birkhoff.sinkhorn(x, x[::-1].copy(), blur=0.01, iterations=100000, warn=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(7)\n"
    )
    returncode, out = interrupted(code)
    assert returncode == 7 and "interrupted" in out


def test_a_warm_start_from_converged_potentials_stops_at_once(rng):
    x = rng.random((400, 2))
    y = rng.random((300, 2)) + 0.2
    cold = birkhoff.sinkhorn(x, y, blur=0.05, marginal_tol=1e-6)
    warm = birkhoff.sinkhorn(x, y, blur=0.05, marginal_tol=1e-6, init=(cold.f, cold.g))
    assert cold.converged and warm.converged
    assert warm.iterations <= 3 < cold.iterations
    assert warm.loss == pytest.approx(cold.loss, rel=1e-6)
    # A nearby problem (a gradient-flow step) starts closer than the annealing does.
    moved = x + 0.005 * rng.normal(size=x.shape)
    fresh = birkhoff.sinkhorn(moved, y, blur=0.05, marginal_tol=1e-6)
    resumed = birkhoff.sinkhorn(moved, y, blur=0.05, marginal_tol=1e-6, init=(cold.f, cold.g))
    assert resumed.converged and resumed.iterations < fresh.iterations
    assert resumed.loss == pytest.approx(fresh.loss, rel=1e-5)
    with pytest.raises(ValueError, match="^init:"):
        birkhoff.sinkhorn(x, y, init=(cold.f[:5], cold.g))
    with pytest.raises(ValueError, match="^init: f must be 1-D"):
        birkhoff.sinkhorn(x, y, init=(cold.f[:, None], cold.g))
    with pytest.raises(TypeError, match="^init:"):
        birkhoff.sinkhorn(x, y, init=cold.f)


def test_torch_warm_start_stops_at_once_and_keeps_the_gradient(rng):
    torch = pytest.importorskip("torch")
    bt = pytest.importorskip("birkhoff.torch")
    x = torch.from_numpy(rng.random((400, 2)))
    y = torch.from_numpy(rng.random((300, 2)) + 0.2)
    cold = bt.sinkhorn(x, y, blur=0.05, marginal_tol=1e-6)
    xg = x.clone().requires_grad_(True)
    warm = bt.sinkhorn(xg, y, blur=0.05, marginal_tol=1e-6, init=(cold.f, cold.g))
    assert warm.converged and warm.iterations <= 3 < cold.iterations
    assert float(warm.loss) == pytest.approx(float(cold.loss), rel=1e-6)
    (g,) = torch.autograd.grad(warm.loss, xg)
    ref = birkhoff.sinkhorn(x.numpy(), y.numpy(), blur=0.05, marginal_tol=1e-6).gradients()[0]
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-4, atol=1e-9)
    with pytest.raises(ValueError, match="^init:"):
        bt.sinkhorn(x, y, init=(cold.f[:5], cold.g))


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_warm_start_from_a_previous_output(rng, tmp_path):
    np.save(tmp_path / "x.npy", rng.random((400, 2)))
    np.save(tmp_path / "y.npy", rng.random((300, 2)) + 0.2)
    np.save(tmp_path / "y_small.npy", rng.random((30, 2)))
    common = ["--blur", "0.05", "--marginal-tol", "1e-6", "--json"]

    def run(*args):
        return subprocess.run(
            ["birkhoff", "transport", *map(str, args)], capture_output=True, text=True
        )

    out = run(tmp_path / "x.npy", tmp_path / "y.npy", *common, "--output", tmp_path / "p.npz")
    assert out.returncode == 0, out.stderr
    cold = json.loads(out.stdout)
    out = run(tmp_path / "x.npy", tmp_path / "y.npy", *common, "--init", tmp_path / "p.npz")
    assert out.returncode == 0, out.stderr
    warm = json.loads(out.stdout)
    assert warm["converged"] and warm["iterations"] <= 3 < cold["iterations"]
    assert warm["loss"] == pytest.approx(cold["loss"], rel=1e-6)
    for bad, needle in [
        ([tmp_path / "y_small.npy", "--init", tmp_path / "p.npz"], "--init"),
        ([tmp_path / "y.npy", "--init", tmp_path / "missing.npz"], "--init"),
        ([tmp_path / "y.npy", "--init", tmp_path / "x.npy"], "--init"),
    ]:
        out = run(tmp_path / "x.npy", *bad, *common)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(f"birkhoff: error: {needle}"), out.stderr


@pytest.mark.parametrize("scale", [1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0])
def test_float32_agrees_with_float64_wherever_it_says_converged(rng, scale):
    # Blur from 10^-2 to 10^3 times the data's diameter: the loss, the divergence and the
    # transport cost in float32 are within 1e-3 of float64 whenever converged is reported
    # (far above the costs float32 potentials lose their digits: the solve moves to float64).
    x, y = rng.random((300, 3)), rng.random((250, 3)) + 0.1
    blur = scale * np.sqrt(3.1)
    r64 = birkhoff.sinkhorn(x, y, blur=blur, warn=False)
    r32 = birkhoff.sinkhorn(x.astype(np.float32), y.astype(np.float32), blur=blur, warn=False)
    assert r64.converged
    if r32.converged:
        assert r32.loss == pytest.approx(r64.loss, rel=1e-3)
        assert r32.transport_cost == pytest.approx(r64.transport_cost, rel=1e-3)
    d64 = birkhoff.sinkhorn_divergence(x, y, blur=blur)
    d32 = birkhoff.sinkhorn_divergence(x.astype(np.float32), y.astype(np.float32), blur=blur)
    if d32.converged:
        assert d32.loss == pytest.approx(d64.loss, rel=1e-3)
    if scale >= 100:
        assert r32.report["working_dtype"].startswith("float64") and r32.converged


@pytest.mark.parametrize("scale", [1e-3, 3e-3, 1e-2])
def test_float32_matches_float64_down_to_a_thousandth_of_the_diameter(rng, scale):
    # Below float32's floor (1e-3 here) the problem is solved in float64; above it, where
    # float32's rounding would leave more than the tolerance, float64 iterations finish a
    # float32 solve. Either way the answer is float64's and the report says so. (A tolerance of
    # 1e-4 keeps two converged transport costs within 1e-4; at 1e-3 the diameter float64 needs
    # more than max_iter iterations for it, so the default tolerance.)
    x, y = rng.random((400, 2)), rng.random((300, 2)) + 0.1
    tol = 1e-3 if scale < 2e-3 else 1e-4
    kw = dict(blur=scale * np.sqrt(2 * 1.1**2), marginal_tol=tol, warn=False)
    r64 = birkhoff.sinkhorn(x, y, **kw)
    r32 = birkhoff.sinkhorn(x.astype(np.float32), y.astype(np.float32), **kw)
    assert r64.converged and r32.converged
    assert r32.report["working_dtype"].startswith("float64 ("), r32.report["working_dtype"]
    assert r32.transport_cost == pytest.approx(r64.transport_cost, rel=1e-4)
    assert r32.loss == pytest.approx(r64.loss, rel=1e-6)


def test_a_float32_result_solved_in_float64_reads_its_plan_in_float64():
    # Below float32's floor the potentials are returned rounded to float32, which no longer
    # resolve the plan at this epsilon (their marginals were 8 times the tolerance off); the
    # marginals, map and gradients are those of the float64 solution.
    rng = np.random.default_rng(1)
    x = rng.random((300, 2)).astype(np.float32)
    y = (rng.random((200, 2)) + 0.2).astype(np.float32)
    r = birkhoff.sinkhorn(x, y, blur=1e-3, warn=False)
    r64 = birkhoff.sinkhorn(x.astype(np.float64), y.astype(np.float64), blur=1e-3, warn=False)
    assert r.converged and r.report["working_dtype"].startswith("float64 (epsilon ")
    assert np.abs(r.row_marginal() - 1 / 300).sum() <= 1e-3 * (1 + 1e-4)
    assert np.abs(r.col_marginal() - 1 / 200).sum() <= 1e-3 * (1 + 1e-4)
    gx, gx64 = r.gradients()[0], r64.gradients()[0]
    assert np.abs(gx - gx64).max() <= 1e-4 * np.abs(gx64).max()
    assert np.abs(r.barycentric_map() - r64.barycentric_map()).max() <= 1e-5


def test_a_float32_solve_finished_in_float64_is_as_accurate_as_a_float64_solve():
    # The float32 stage stops at the fixed point of its perturbed kernel; the float64 stage
    # iterates to a quarter of the tolerance, so the answer's gradient and map are no further
    # from the exact solution's than a float64 solve's to the tolerance (before: 1.4 % against
    # 0.12 % on the gradient).
    rng = np.random.default_rng(1)
    x = rng.random((300, 2)).astype(np.float32)
    y = (rng.random((200, 2)) + 0.2).astype(np.float32)
    wide = [v.astype(np.float64) for v in (x, y)]
    exact = birkhoff.sinkhorn(*wide, blur=0.01, marginal_tol=1e-5)
    r32 = birkhoff.sinkhorn(x, y, blur=0.01)
    r64 = birkhoff.sinkhorn(*wide, blur=0.01)
    assert r32.report["working_dtype"].startswith("float64 (finished from a float32 solve")
    assert r32.converged and r64.converged and exact.converged
    scale = np.abs(exact.gradients()[0]).max()
    for what in (lambda r: r.gradients()[0], lambda r: r.barycentric_map()):
        error32 = np.abs(what(r32) - what(exact)).max()
        error64 = np.abs(what(r64) - what(exact)).max()
        assert error32 <= max(error64, 1e-4 * scale)


def test_a_blur_beyond_float64_is_refused_not_answered(rng):
    # blur 1e7 on data of diameter ~10: float64 potentials would be off by ~4e-2 in the loss.
    x, y = rng.standard_normal((50, 3)), rng.standard_normal((60, 3)) + 0.3
    for dtype in (np.float64, np.float32):
        for solve in (birkhoff.sinkhorn, birkhoff.sinkhorn_divergence):
            with pytest.raises(ValueError, match="^blur:.*too large"):
                solve(x.astype(dtype), y.astype(dtype), blur=1e7)
    with pytest.raises(ValueError, match="^blur:"):
        birkhoff.sinkhorn_divergence(x.astype(np.float32), y.astype(np.float32), blur=1e23)
