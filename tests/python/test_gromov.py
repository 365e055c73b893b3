"""Entropic (fused) Gromov-Wasserstein: parity with POT, invariances, gradients, errors."""

import inspect
import json
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff

ot = pytest.importorskip("ot")


def _clouds(rng, n=40, m=30):
    return rng.normal(size=(n, 3)), rng.normal(size=(m, 2)) * 0.8


def _pot_gw(x, y, a, b, **kw):
    c1, c2 = ot.dist(x, x), ot.dist(y, y)
    # POT's inner Sinkhorn (not in the log domain) run to a tight tolerance, as ours.
    return ot.gromov.entropic_gromov_wasserstein(
        c1, c2, a, b, tol=0, log=True, numItermax=100_000, stopThr=1e-13, **kw
    )


@pytest.mark.parametrize("iterations", [1, 4, 25])
def test_matches_pot_from_the_product_plan(rng, iterations):
    x, y = _clouds(rng)
    a = rng.uniform(0.5, 1, 40)
    b = rng.uniform(0.5, 1, 30)
    a, b = a / a.sum(), b / b.sum()
    plan, log = _pot_gw(x, y, a, b, epsilon=0.5, max_iter=iterations)
    r = birkhoff.gromov_wasserstein(
        x, y, a, b, epsilon=0.5, max_iter=iterations, tol=0, marginal_tol=1e-10, return_plan=True
    )
    assert r.iterations == iterations
    assert r.loss == pytest.approx(log["gw_dist"], rel=1e-6)
    np.testing.assert_allclose(r.plan, plan, atol=1e-8)


def test_matches_pot_from_a_given_plan(rng):
    x, y = _clouds(rng)
    a, b = ot.unif(40), ot.unif(30)
    g0 = rng.uniform(size=(40, 30))
    for _ in range(200):  # a plan with marginals a, b (Sinkhorn-Knopp on a random matrix)
        g0 *= (a / g0.sum(1))[:, None]
        g0 *= (b / g0.sum(0))[None, :]
    plan, log = _pot_gw(x, y, a, b, epsilon=0.5, max_iter=3, G0=g0)
    r = birkhoff.gromov_wasserstein(
        x, y, epsilon=0.5, max_iter=3, tol=0, marginal_tol=1e-10, init=g0, return_plan=True
    )
    assert r.loss == pytest.approx(log["gw_dist"], rel=1e-6)
    np.testing.assert_allclose(r.plan, plan, atol=1e-8)


def test_fused_matches_pot(rng):
    x, y = _clouds(rng)
    fx, fy = rng.normal(size=(40, 4)), rng.normal(size=(30, 4))
    a, b = ot.unif(40), ot.unif(30)
    plan, log = ot.gromov.entropic_fused_gromov_wasserstein(
        ot.dist(fx, fy), ot.dist(x, x), ot.dist(y, y), a, b, epsilon=0.2, alpha=0.3,
        max_iter=10, tol=0, log=True, numItermax=100_000, stopThr=1e-13,
    )  # fmt: skip
    r = birkhoff.fused_gromov_wasserstein(
        x, y, fx, fy, alpha=0.3, epsilon=0.2, max_iter=10, tol=0, marginal_tol=1e-10,
        return_plan=True,
    )  # fmt: skip
    assert r.loss == pytest.approx(log["fgw_dist"], rel=1e-6)
    assert r.loss == pytest.approx(0.7 * r.feature_loss + 0.3 * r.gw_loss, rel=1e-12)
    np.testing.assert_allclose(r.plan, plan, atol=1e-8)


def test_rigid_motions_and_relabelling_change_nothing(rng):
    x, y = _clouds(rng, 35, 30)
    q, _ = np.linalg.qr(rng.normal(size=(2, 2)))
    moved = y @ q.T + np.array([3.0, -1.0])
    perm = rng.permutation(30)
    # The same outer iterations, each solved tightly: the same sequence of plans.
    opts = dict(epsilon=0.3, max_iter=20, tol=0, marginal_tol=1e-11, return_plan=True)
    base = birkhoff.gromov_wasserstein(x, y, **opts)
    same = birkhoff.gromov_wasserstein(x, moved[perm], **opts)
    assert max(base.marginal_error, same.marginal_error) < 1e-10
    assert same.loss == pytest.approx(base.loss, rel=1e-6)
    np.testing.assert_allclose(same.plan, base.plan[:, perm], atol=1e-9)


def test_small_epsilon_finds_the_isometry(rng):
    # A cloud against a rotated copy: the plan concentrates on the matching points and the
    # objective goes to the identity plan's, 0.
    x = rng.uniform(size=(25, 2)) * np.array([3.0, 1.0])
    q = np.array([[0.0, -1.0], [1.0, 0.0]])
    r = birkhoff.gromov_wasserstein(x, x @ q.T, epsilon=0.01, n_init=4, return_plan=True)
    assert np.mean(np.argmax(r.plan, axis=1) == np.arange(25)) > 0.95
    assert (
        r.loss
        < 1e-2 * birkhoff.gromov_wasserstein(x, x[::-1] * 0 + x.mean(0), epsilon=1).loss + 1e-3
    )


def test_gradients_are_those_of_the_entropic_objective(rng):
    # Envelope theorem: d/dx of GW(T*) + epsilon KL(T* | a b^T) at the converged plan.
    x, y = _clouds(rng, 12, 10)
    eps = 0.5
    opts = dict(epsilon=eps, tol=1e-14, max_iter=2000, marginal_tol=1e-13)

    def objective(xx, yy):
        r = birkhoff.gromov_wasserstein(xx, yy, return_plan=True, **opts)
        ab = np.outer(np.full(12, 1 / 12), np.full(10, 1 / 10))
        return r.loss + eps * np.sum(r.plan * np.log(r.plan / ab))

    r = birkhoff.gromov_wasserstein(x, y, gradients=True, **opts)
    h = 1e-5
    for i, k in [(0, 0), (3, 2), (11, 1)]:
        xp, xm = x.copy(), x.copy()
        xp[i, k] += h
        xm[i, k] -= h
        fd = (objective(xp, y) - objective(xm, y)) / (2 * h)
        assert fd == pytest.approx(r.grad_x[i, k], rel=1e-4, abs=1e-6)
    for j, k in [(0, 1), (9, 0)]:
        yp, ym = y.copy(), y.copy()
        yp[j, k] += h
        ym[j, k] -= h
        fd = (objective(x, yp) - objective(x, ym)) / (2 * h)
        assert fd == pytest.approx(r.grad_y[j, k], rel=1e-4, abs=1e-6)


def test_fused_gradients_match_pot_formula_at_the_fixed_plan(rng):
    x, y = _clouds(rng, 12, 10)
    fx, fy = rng.normal(size=(12, 2)), rng.normal(size=(10, 2))
    a, b = ot.unif(12), ot.unif(10)
    r = birkhoff.fused_gromov_wasserstein(
        x, y, fx, fy, alpha=0.4, epsilon=0.5, gradients=True, return_plan=True
    )

    def value(xx, gx):
        c, h1, h2 = ot.gromov.init_matrix(ot.dist(xx, xx), ot.dist(y, y), a, b, "square_loss")
        gw = ot.gromov.gwloss(c, h1, h2, r.plan)
        return 0.4 * gw + 0.6 * np.sum(ot.dist(gx, fy) * r.plan)

    h = 1e-6
    for i, k in [(0, 0), (5, 2)]:
        xp, xm = x.copy(), x.copy()
        xp[i, k] += h
        xm[i, k] -= h
        fd = (value(xp, fx) - value(xm, fx)) / (2 * h)
        assert fd == pytest.approx(r.grad_x[i, k], rel=1e-6, abs=1e-8)
    for i, k in [(2, 1), (11, 0)]:
        fp, fm = fx.copy(), fx.copy()
        fp[i, k] += h
        fm[i, k] -= h
        fd = (value(x, fp) - value(x, fm)) / (2 * h)
        assert fd == pytest.approx(r.grad_features_x[i, k], rel=1e-6, abs=1e-8)


def test_restarts_keep_the_best(rng):
    x, y = _clouds(rng, 30, 30)
    r = birkhoff.gromov_wasserstein(x, y, epsilon=0.05, n_init=5, seed=2)
    assert len(r.losses) == 5
    assert r.loss == min(r.losses) == r.losses[r.best_init]


def test_torch_gradients_and_values(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x, y = _clouds(rng, 12, 10)
    xt, yt = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    r = bt.gromov_wasserstein(xt, yt, epsilon=0.5)
    r.loss.backward()
    ref = birkhoff.gromov_wasserstein(x, y, epsilon=0.5, gradients=True)
    assert r.loss.item() == ref.loss
    np.testing.assert_array_equal(xt.grad.numpy(), ref.grad_x)
    np.testing.assert_array_equal(yt.grad.numpy(), ref.grad_y)
    fx = torch.tensor(rng.normal(size=(12, 2)), requires_grad=True)
    fy = torch.tensor(rng.normal(size=(10, 2)))
    bt.fused_gromov_wasserstein(xt.detach(), yt.detach(), fx, fy, epsilon=0.5).loss.backward()
    assert fx.grad.shape == (12, 2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"epsilon": 0}, ValueError, "^epsilon:"),
        ({"a": np.ones(3)}, ValueError, "^a:"),
        ({"b": np.full(5, 0.5)}, ValueError, "^b:"),
        ({"init": np.ones((4, 3))}, ValueError, "^init:"),
        ({"max_iter": 0}, ValueError, "^max_iter:"),
        ({"n_init": 0}, ValueError, "^n_init:"),
        ({"tol": -1.0}, ValueError, "^tol:"),
        ({"seed": "x"}, TypeError, "^seed:"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, error, match):
    x = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(error, match=match):
        birkhoff.gromov_wasserstein(x, x[:5, :2] + 1, **kwargs)


def test_fused_bad_features_and_alpha():
    x = np.random.default_rng(0).normal(size=(4, 2))
    with pytest.raises(ValueError, match="^features_x:"):
        birkhoff.fused_gromov_wasserstein(x, x, np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="^features_y:"):
        birkhoff.fused_gromov_wasserstein(x, x, np.ones((4, 2)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="^alpha:"):
        birkhoff.fused_gromov_wasserstein(x, x, np.ones((4, 2)), np.ones((4, 2)), alpha=2)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="^x: non-finite"):
        birkhoff.gromov_wasserstein(bad, x)


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_writes_what_python_returns(rng, tmp_path):
    x, y = _clouds(rng, 20, 15)
    fx, fy = rng.normal(size=(20, 2)), rng.normal(size=(15, 2))
    for name, v in {"x": x, "y": y, "fx": fx, "fy": fy}.items():
        np.save(tmp_path / f"{name}.npy", v)
    out = subprocess.run(
        ["birkhoff", "gw", tmp_path / "x.npy", tmp_path / "y.npy", "--features-x",
         tmp_path / "fx.npy", "--features-y", tmp_path / "fy.npy", "--alpha", "0.4",
         "--epsilon", "0.5", "--output", tmp_path / "o.npz", "--gradient", "--plan", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    r = birkhoff.fused_gromov_wasserstein(
        x, y, fx, fy, alpha=0.4, epsilon=0.5, gradients=True, return_plan=True
    )
    assert report["loss"] == r.loss and report["iterations"] == r.iterations
    saved = np.load(tmp_path / "o.npz")
    for name in ("grad_x", "grad_y", "grad_features_x", "grad_features_y", "plan"):
        np.testing.assert_array_equal(saved[name], getattr(r, name))
    params = inspect.signature(birkhoff.fused_gromov_wasserstein).parameters
    for option, value in report["options"].items():
        if option == "dtype":  # both follow the inputs' dtype by default
            assert params[option].default is None and value == "float64"
        elif option != "alpha":
            assert params[option].default == value, option
    bad = subprocess.run(
        ["birkhoff", "gw", tmp_path / "x.npy", tmp_path / "y.npy", "--init", tmp_path / "fx.npy"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith("birkhoff: error: --init")


def test_translations_and_units_change_nothing(rng):
    # Each cloud is centred and both scaled internally: far from the origin and in other
    # units (epsilon scaled as distance^4) the value is the same.
    x, y = _clouds(rng, 30, 25)
    base = birkhoff.gromov_wasserstein(x, y, epsilon=0.1)
    for shift, unit in [(1e3, 1.0), (1e6, 1.0), (0.0, 1e8), (5.0, 1e-8)]:
        r = birkhoff.gromov_wasserstein(
            (x + shift) * unit, (y - shift) * unit, epsilon=0.1 * unit**4
        )
        assert r.converged
        assert r.loss / unit**4 == pytest.approx(base.loss, rel=1e-7)
    with pytest.raises(ValueError, match="^init:"):
        birkhoff.gromov_wasserstein(x, y, init=-np.ones((30, 25)) / 750)
    # Clouds whose points all coincide (no length to scale by): GW is 0.
    assert birkhoff.gromov_wasserstein(np.ones((5, 2)), np.zeros((4, 3))).loss == 0
    assert birkhoff.gromov_wasserstein(np.ones((1, 2)), np.ones((1, 3))).loss == 0


def test_the_multiscale_inner_backend_gives_the_dense_answer(rng):
    # The inner solves and the linearisation's plan products on block-sparse passes.
    x = rng.uniform(size=(1500, 2))
    y = rng.uniform(size=(1400, 2)) * np.array([0.7, 1.3])
    opts = dict(epsilon=0.01, max_iter=4, tol=0, marginal_tol=1e-7)
    dense = birkhoff.gromov_wasserstein(x, y, backend="dense", **opts)
    multi = birkhoff.gromov_wasserstein(x, y, backend="multiscale", **opts)
    assert multi.loss == pytest.approx(dense.loss, rel=1e-5)
    assert (dense.backend, multi.backend) == ("dense", "multiscale")
    with pytest.raises(ValueError, match="^backend"):
        birkhoff.gromov_wasserstein(x, y, backend="gpu")


@pytest.mark.parametrize("backend", ["dense", "multiscale"])
def test_float32_inner_solves_give_the_float64_answer(rng, backend):
    # float32 logits resolve this epsilon to 1e-4 (no float64 finish): the objective and the
    # gradients move by about the inner tolerance, not by float32's rounding of the points.
    x = rng.uniform(size=(600, 3))
    y = rng.uniform(size=(500, 2)) * np.array([0.8, 1.2])
    opts = dict(epsilon=0.05, max_iter=5, tol=0, marginal_tol=1e-4, backend=backend)
    wide = birkhoff.gromov_wasserstein(x, y, gradients=True, **opts)
    narrow = birkhoff.gromov_wasserstein(x, y, gradients=True, dtype="float32", **opts)
    assert (wide.working_dtype, narrow.working_dtype) == ("float64", "float32")
    assert narrow.loss == pytest.approx(wide.loss, rel=1e-4)
    scale = np.abs(wide.grad_x).max()
    np.testing.assert_allclose(narrow.grad_x, wide.grad_x, atol=1e-3 * scale)
    assert narrow.marginal_error <= 1e-4
    # float32 points select float32 inner solves; dtype overrides either way.
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert birkhoff.gromov_wasserstein(x32, y32, **opts).working_dtype == "float32"
    assert birkhoff.gromov_wasserstein(x32, y, **opts).working_dtype == "float64"
    assert birkhoff.gromov_wasserstein(x32, y32, dtype="float64", **opts).working_dtype == (
        "float64"
    )


def test_float32_inner_solves_finish_in_float64_below_their_floor(rng):
    # At marginal_tol 1e-9 float32 logits cannot get there: each solve is finished in float64,
    # and says so, with the float64 answer to the rounding of the inner costs' features to
    # float32 (2^-24 relative).
    x, y = _clouds(rng)
    opts = dict(epsilon=0.5, max_iter=3, tol=0, marginal_tol=1e-9)
    wide = birkhoff.gromov_wasserstein(x, y, **opts)
    narrow = birkhoff.gromov_wasserstein(x, y, dtype="float32", return_plan=True, **opts)
    assert narrow.working_dtype.startswith("float64 (finished from a float32 solve")
    assert narrow.marginal_error <= 1e-9
    # The plan has the marginals reported (to the float32 rounding of its entries).
    p = narrow.plan
    error = np.abs(p.sum(1) - 1 / len(x)).sum() + np.abs(p.sum(0) - 1 / len(y)).sum()
    assert error <= 2 * narrow.marginal_error + 1e-6
    assert narrow.loss == pytest.approx(wide.loss, rel=1e-6)


def test_bad_dtype_is_named():
    x = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(ValueError, match="^dtype:"):
        birkhoff.gromov_wasserstein(x, x, dtype="float16")
    with pytest.raises(ValueError, match="^dtype:"):
        birkhoff.gromov_wasserstein(x, x, dtype=np.float16)
    with pytest.raises(TypeError, match="^dtype:"):
        birkhoff.gromov_wasserstein(x, x, dtype=32)


def test_dtype_objects_and_big_endian_float32_select_float32():
    x = np.random.default_rng(1).normal(size=(30, 3))
    opts = dict(epsilon=10.0, marginal_tol=1e-4)
    want = birkhoff.gromov_wasserstein(x, x, dtype="float32", **opts)
    assert want.working_dtype == "float32"
    for dtype in (np.float32, np.dtype("float32")):
        assert birkhoff.gromov_wasserstein(x, x, dtype=dtype, **opts).loss == want.loss
    little, big = x.astype("<f4"), x.astype(">f4")
    got = birkhoff.gromov_wasserstein(big, big, **opts)
    assert got.working_dtype == "float32"
    assert got.loss == birkhoff.gromov_wasserstein(little, little, **opts).loss


def test_torch_float32_tensors_solve_in_float32(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x, y = _clouds(rng, 30, 25)
    xt = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    opts = dict(epsilon=10.0, marginal_tol=1e-4)  # float32 logits reach this tolerance here
    r = bt.gromov_wasserstein(xt, torch.tensor(y, dtype=torch.float32), **opts)
    r.loss.backward()
    assert r.working_dtype == "float32" and r.loss.dtype == torch.float32
    ref = birkhoff.gromov_wasserstein(x, y, gradients=True, **opts)
    assert r.loss.item() == pytest.approx(ref.loss, rel=1e-4)
    np.testing.assert_allclose(xt.grad.numpy(), ref.grad_x, atol=1e-3 * np.abs(ref.grad_x).max())
