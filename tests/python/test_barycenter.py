"""Free-support barycenters: parity with POT, closed forms, the CLI, errors."""

import json
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import birkhoff


def _clouds(rng):
    return [
        rng.normal(size=(80, 2)) + np.array([2.0, 0.0]),
        rng.normal(size=(60, 2)) * 0.5 - 1.0,
        rng.uniform(size=(70, 2)),
    ]


@pytest.mark.parametrize("iterations", [1, 5])
def test_matches_pot_free_support_sinkhorn_barycenter(rng, iterations):
    ot = pytest.importorskip("ot")
    clouds = _clouds(rng)
    a = [rng.uniform(0.5, 1, len(c)) for c in clouds]
    a = [w / w.sum() for w in a]
    lam = np.array([0.5, 0.3, 0.2])
    x0 = rng.normal(size=(40, 2))
    ref = ot.bregman.free_support_sinkhorn_barycenter(
        clouds, a, x0, 0.5, weights=lam, numItermax=iterations, numInnerItermax=100_000,
        stopThr=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tol 0 asks for exactly max_iter: no "not converged"
        r = birkhoff.barycenter(
            clouds, lam, cloud_weights=a, init=x0, blur=np.sqrt(0.5), max_iter=iterations,
            tol=0, marginal_tol=1e-10,
        )  # fmt: skip
    assert r.iterations == iterations
    np.testing.assert_allclose(r.points, ref, atol=1e-6)


def test_two_gaussians_meet_at_the_mccann_interpolant():
    # Diagonal Gaussians: the barycenter (weights 1/2) has the mean of the means and the mean
    # of the standard deviations per axis. Quantile samples keep the sampling noise small; the
    # entropic bias at blur 0.2 is below the 3 % the test allows.
    from statistics import NormalDist

    q = np.array([NormalDist().inv_cdf((i + 0.5) / 200) for i in range(200)])
    rng = np.random.default_rng(1)
    g1 = np.stack([q * 1.0 + 1.0, rng.permutation(q) * 0.5], axis=1)
    g2 = np.stack([q * 0.4 - 2.0, rng.permutation(q) * 1.5 + 3.0], axis=1)
    r = birkhoff.barycenter([g1, g2], blur=0.2, n_support=200, seed=0, tol=1e-4)
    assert r.converged
    np.testing.assert_allclose(r.points.mean(axis=0), [-0.5, 1.5], atol=0.02)
    np.testing.assert_allclose(r.points.std(axis=0), [0.7, 1.0], rtol=0.03)


def test_one_measure_is_its_own_barycenter_up_to_the_blur(rng):
    cloud = rng.uniform(size=(150, 2)) * 3
    r = birkhoff.barycenter([cloud], blur=0.01)
    assert r.converged
    assert np.abs(r.points - cloud).max() < 0.05


def test_float32_clouds(rng):
    clouds = [c.astype(np.float32) for c in _clouds(rng)]
    r = birkhoff.barycenter(clouds, n_support=30, blur=0.3)
    assert r.points.dtype == np.float32 and r.points.shape == (30, 2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"blur": 0}, ValueError, "^blur:"),
        ({"weights": [1.0]}, ValueError, "^weights:"),
        ({"weights": [1.0, -1.0]}, ValueError, "^weights:"),
        ({"cloud_weights": [np.ones(5), np.ones(4)]}, ValueError, "^cloud_weights\\[1\\]:"),
        ({"init": np.ones((3, 3))}, ValueError, "^init:"),
        ({"max_iter": 0}, ValueError, "^max_iter:"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, error, match):
    rng = np.random.default_rng(0)
    clouds = [rng.normal(size=(5, 2)), rng.normal(size=(4, 2))]
    with pytest.raises(error, match=match):
        birkhoff.barycenter(clouds, **kwargs)


def test_bad_clouds():
    with pytest.raises(ValueError, match="^clouds:"):
        birkhoff.barycenter([])
    with pytest.raises(TypeError, match="^clouds:"):
        birkhoff.barycenter(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="^clouds\\[1\\]:"):
        birkhoff.barycenter([np.zeros((3, 2)), np.zeros((3, 3))])


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_writes_what_python_returns(rng, tmp_path):
    clouds = _clouds(rng)
    paths = []
    for k, c in enumerate(clouds):
        paths.append(tmp_path / f"c{k}.npy")
        np.save(paths[-1], c)
    out = subprocess.run(
        ["birkhoff", "barycenter", *paths, "--weights", "0.5,0.3,0.2", "--blur", "0.3",
         "--n-support", "25", "--output", tmp_path / "b.npz", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    init = np.load(tmp_path / "b.npz")["init"]
    r = birkhoff.barycenter(clouds, [0.5, 0.3, 0.2], init=init, blur=0.3)
    assert report["loss"] == pytest.approx(r.loss, rel=1e-12)
    np.testing.assert_allclose(np.load(tmp_path / "b.npz")["points"], r.points, rtol=1e-12)
    # --tol 0 asks for exactly --max-iter iterations: no "not converged" warning.
    exact = subprocess.run(
        ["birkhoff", "barycenter", *paths, "--blur", "0.3", "--n-support", "25", "--tol", "0",
         "--max-iter", "3", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert exact.returncode == 0, exact.stderr
    assert json.loads(exact.stdout)["iterations"] == 3
    assert "not converged" not in exact.stderr
    bad = subprocess.run(
        ["birkhoff", "barycenter", paths[0], "--weights", "1,2"], capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("birkhoff: error: --weights")


def test_zero_weights_and_argument_names(rng):
    c1, c2 = rng.normal(size=(30, 2)), rng.normal(size=(40, 2))
    r = birkhoff.barycenter([c1, c2], init=c2[:4].copy(), support_weights=[0.5, 0.5, 0, 0])
    assert np.isfinite(r.points).all()
    np.testing.assert_array_equal(r.points[2:], c2[2:4])  # weightless points stay put
    half = np.r_[np.ones(15) / 15, np.zeros(15)]
    r = birkhoff.barycenter([c1, c2], cloud_weights=[half, np.ones(40) / 40])
    assert np.isfinite(r.points).all()
    with pytest.raises(ValueError, match="^clouds\\[0\\]: non-finite"):
        birkhoff.barycenter([c1 * np.nan, c2])
    with pytest.raises(ValueError, match="^init:"):
        birkhoff.barycenter([c1, c2], init=np.zeros((5, 3)))
    with pytest.raises(TypeError, match="^weights:"):
        birkhoff.barycenter([c1, c2], weights="ab")
