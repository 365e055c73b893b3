"""Partial OT: parity with POT, the balanced and unregularised limits, constraints, errors."""

import json
import shutil
import subprocess

import numpy as np
import ot
import pytest

import birkhoff

CLI = shutil.which("birkhoff")
TIGHT = {"marginal_tol": 1e-10, "max_iter": 200_000}


def clouds(n=30, m=25, d=2, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d)) + shift


def pot_plan(x, y, a, b, eps, mass):
    """POT's entropic partial plan for our problem: its regulariser is sum P log P, ours
    KL(P | a x b); the two agree when the cost absorbs -eps log(a_i b_j)."""
    cost = ot.dist(x, y) - eps * np.log(np.outer(a, b))
    return ot.partial.entropic_partial_wasserstein(
        a, b, cost, eps, m=mass, numItermax=200_000, stopThr=1e-15
    )


@pytest.mark.parametrize("mass", [0.2, 0.5, 0.9])
def test_uniform_weights_match_pot_entropic_partial_wasserstein(mass):
    x, y = clouds()
    eps = 0.25
    r = birkhoff.partial_sinkhorn(x, y, mass=mass, blur=np.sqrt(eps), **TIGHT)
    assert r.converged
    a, b = np.full(30, 1 / 30), np.full(25, 1 / 25)
    # With uniform weights POT's own problem is ours (the reference measure is a constant).
    want = ot.partial.entropic_partial_wasserstein(
        a, b, ot.dist(x, y), eps, m=mass, numItermax=200_000, stopThr=1e-15
    )
    np.testing.assert_allclose(r.plan(), want, atol=1e-4 * want.max(), rtol=0)
    assert r.transport_cost == pytest.approx(np.sum(want * ot.dist(x, y)), abs=1e-4)


def test_random_weights_match_pot_with_the_reference_in_the_cost():
    x, y = clouds(seed=1)
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.1, 1, 30), rng.uniform(0.1, 1, 25)
    a, b = a / a.sum(), 0.8 * b / b.sum()
    eps, mass = 0.3, 0.6
    r = birkhoff.partial_sinkhorn(x, y, a, b, mass=mass, blur=np.sqrt(eps), **TIGHT)
    want = pot_plan(x, y, a, b, eps, mass)
    np.testing.assert_allclose(r.plan(), want, atol=1e-6 * want.max(), rtol=0)
    assert r.transport_cost == pytest.approx(np.sum(want * ot.dist(x, y)), rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_constraints_hold_and_the_mass_is_moved(dtype):
    x, y = clouds(60, 50, 3, seed=3, shift=2.0)
    rng = np.random.default_rng(4)
    a = rng.uniform(0.1, 1, 60).astype(dtype)
    b = rng.uniform(0.1, 1, 50).astype(dtype)
    a /= a.sum()
    b /= b.sum()
    tol = 1e-4 if dtype == np.float32 else 1e-9
    r = birkhoff.partial_sinkhorn(
        x.astype(dtype), y.astype(dtype), a, b, mass=0.3, blur=0.4, marginal_tol=tol
    )
    assert r.converged
    rows, cols = r.row_marginal(), r.col_marginal()
    assert rows.dtype == dtype and rows.shape == (60,) and cols.shape == (50,)
    assert np.all(rows <= a * (1 + 10 * tol) + 1e-12)
    assert np.all(cols <= b * (1 + 10 * tol) + 1e-12)
    assert rows.sum() == pytest.approx(0.3, rel=10 * tol)
    assert cols.sum() == pytest.approx(0.3, rel=10 * tol)
    # The moved mass comes from the sides facing each other: x's points nearest to y's cloud.
    toward = (x - x.mean(0)) @ (y.mean(0) - x.mean(0))
    near, far = toward > np.quantile(toward, 0.7), toward < np.quantile(toward, 0.3)
    assert (rows / a)[near].mean() > 5 * (rows / a)[far].mean()


def test_full_mass_of_equal_measures_is_balanced_ot():
    x, y = clouds(seed=5)
    p = birkhoff.partial_sinkhorn(x, y, mass_fraction=1.0, blur=0.4, **TIGHT)
    q = birkhoff.sinkhorn(x, y, blur=0.4, **TIGHT)
    np.testing.assert_allclose(p.plan(), q.plan(), atol=1e-9)
    assert p.loss == pytest.approx(q.loss, abs=1e-8)


def test_small_blur_tends_to_the_exact_partial_wasserstein():
    x, y = clouds(40, 40, 2, seed=6, shift=1.5)
    a, b = np.full(40, 1 / 40), np.full(40, 1 / 40)
    exact = np.sum(ot.partial.partial_wasserstein(a, b, ot.dist(x, y), m=0.5) * ot.dist(x, y))
    gaps = []
    for blur in [0.3, 0.1, 0.03]:
        r = birkhoff.partial_sinkhorn(
            x, y, mass=0.5, blur=blur, marginal_tol=1e-5, max_iter=100_000
        )
        assert r.converged, blur
        gaps.append(abs(r.transport_cost - exact))
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-3 * exact


def test_gradients_and_multiplier():
    x, y = clouds(15, 12, 2, seed=7)
    r = birkhoff.partial_sinkhorn(x, y, mass=0.5, blur=0.7, **TIGHT)
    gx, gy, ga, gb = r.gradients()
    assert gx.shape == (15, 2) and gy.shape == (12, 2) and ga.shape == (15,) and gb.shape == (12,)
    h = 1e-5
    up = birkhoff.partial_sinkhorn(x, y, mass=0.5 + h, blur=0.7, **TIGHT).loss
    down = birkhoff.partial_sinkhorn(x, y, mass=0.5 - h, blur=0.7, **TIGHT).loss
    assert r.multiplier + 0.7**2 == pytest.approx((up - down) / (2 * h), abs=1e-6)
    x2 = x.copy()
    x2[3, 1] += h
    x3 = x.copy()
    x3[3, 1] -= h
    fd = (
        birkhoff.partial_sinkhorn(x2, y, mass=0.5, blur=0.7, **TIGHT).loss
        - birkhoff.partial_sinkhorn(x3, y, mass=0.5, blur=0.7, **TIGHT).loss
    ) / (2 * h)
    assert gx[3, 1] == pytest.approx(fd, abs=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_multiscale_backend_moves_the_dense_backends_mass(dtype):
    # 2000 x 1800 points of the unit square at blur 0.02: the block-sparse plan keeps a small
    # fraction of the pairs and matches the dense one wherever the tolerance reaches.
    rng = np.random.default_rng(11)
    x = rng.random((2000, 2)).astype(dtype)
    y = (rng.random((1800, 2)) + 0.3).astype(dtype)
    kw = {"mass_fraction": 0.5, "blur": 0.02, "marginal_tol": 1e-6}
    dense = birkhoff.partial_sinkhorn(x, y, backend="dense", **kw)
    multi = birkhoff.partial_sinkhorn(x, y, backend="multiscale", **kw)
    assert dense.converged and multi.converged
    assert multi.backend == "multiscale" and multi.kept_fraction < 0.5
    assert multi.loss == pytest.approx(dense.loss, rel=1e-5)
    assert multi.multiplier == pytest.approx(dense.multiplier, rel=1e-5)
    rows, cols = multi.row_marginal(), multi.col_marginal()
    assert rows.sum() == pytest.approx(0.5, rel=1e-5)
    np.testing.assert_allclose(rows, dense.row_marginal(), atol=1e-5 / 2000)
    np.testing.assert_allclose(cols, dense.col_marginal(), atol=1e-5 / 1800)
    assert np.all(rows <= 1 / 2000 * (1 + 1e-5))


BAD = [
    ({"mass": 0.0}, "mass"),
    ({"mass": -0.5}, "mass"),
    ({"mass": float("nan")}, "mass"),
    ({"mass": 1.5}, "mass"),
    ({}, "mass"),
    ({"mass": 0.5, "mass_fraction": 0.5}, "mass"),
    ({"mass_fraction": 0.0}, "mass_fraction"),
    ({"mass_fraction": 1.2}, "mass_fraction"),
    ({"mass": 0.5, "reach": 1.0}, "mass"),
    ({"mass": 0.5, "debias": True}, "mass"),
]


@pytest.mark.parametrize("kw,argument", BAD, ids=[str(k) for k, _ in BAD])
def test_bad_mass_is_a_value_error_naming_it(kw, argument):
    x, y = clouds(6, 5)
    with pytest.raises(ValueError, match=rf"^{argument}\b"):
        birkhoff.partial_sinkhorn(x, y, **kw)


def test_mass_above_the_smaller_total_is_refused():
    x, y = clouds(6, 5)
    b = np.full(5, 0.1)
    with pytest.raises(ValueError, match=r"^mass\b.*0\.5"):
        birkhoff.partial_sinkhorn(x, y, None, b, mass=0.6)
    r = birkhoff.partial_sinkhorn(x, y, None, b, mass_fraction=1.0, blur=0.5)
    assert r.row_marginal().sum() == pytest.approx(0.5, rel=1e-3)


@pytest.mark.skipif(CLI is None, reason="the birkhoff command is not installed (pip install .)")
class TestCli:
    def run(self, *args):
        return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)

    @pytest.mark.parametrize("backend", ["dense", "multiscale"])
    def test_mass_matches_python(self, tmp_path, backend):
        x, y = clouds(40, 30, 3, seed=8)
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "y.npy", y)
        out = tmp_path / "o.npz"
        p = self.run(
            "transport",
            tmp_path / "x.npy",
            tmp_path / "y.npy",
            "--mass",
            0.4,
            "--blur",
            0.5,
            "--backend",
            backend,
            "--json",
            "--output",
            out,
        )
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        assert got["backend"] == backend
        r = birkhoff.partial_sinkhorn(x, y, mass=0.4, blur=0.5, backend=backend)
        assert got["loss"] == pytest.approx(r.loss, rel=1e-9)
        assert got["multiplier"] == pytest.approx(r.multiplier, rel=1e-9)
        npz = np.load(out)
        np.testing.assert_allclose(npz["row_marginal"], r.row_marginal(), rtol=1e-9)
        assert npz["col_marginal"].sum() == pytest.approx(0.4, rel=1e-3)

    @pytest.mark.parametrize("mass", ["0", "-1", "nan", "1.5"])
    def test_bad_mass_exits_2_naming_it(self, tmp_path, mass):
        x, y = clouds(6, 5)
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "y.npy", y)
        p = self.run("transport", tmp_path / "x.npy", tmp_path / "y.npy", "--mass", mass)
        assert p.returncode == 2, p.stderr
        assert "--mass" in p.stderr, p.stderr
