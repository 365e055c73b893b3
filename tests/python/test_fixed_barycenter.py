"""Fixed-support barycenters: parity with POT's debiased and entropic barycenters, properties,
measures on their own clouds, the CLI, errors."""

import json
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff


def _grid_histograms():
    # Two bumps on a 1-D grid of 60 points in [0, 1] (embedded in 2-D), the POT example's shape.
    t = np.linspace(0, 1, 60)
    grid = np.stack([t, np.zeros_like(t)], axis=1)
    h1 = np.exp(-((t - 0.2) ** 2) / 0.003) + 1e-3
    h2 = np.exp(-((t - 0.75) ** 2) / 0.01) + 1e-3
    return grid, np.stack([h1 / h1.sum(), h2 / h2.sum()])


@pytest.mark.parametrize("debias", [True, False])
def test_matches_pot_on_histograms(debias):
    ot = pytest.importorskip("ot")
    grid, hist = _grid_histograms()
    lam = np.array([0.3, 0.7])
    # At blur small against the grid's spacing the iteration converges (see docs/barycenter.md).
    reg = 0.0005
    cost = ot.dist(grid, grid)  # squared Euclidean
    solve = ot.bregman.barycenter_debiased if debias else ot.bregman.barycenter
    ref = solve(hist.T, cost, reg, weights=lam, method="sinkhorn_log", numItermax=5000,
                stopThr=1e-9)  # fmt: skip
    r = birkhoff.fixed_support_barycenter(
        grid, cloud_weights=hist, weights=lam, blur=np.sqrt(reg), debias=debias, tol=1e-11,
        max_iter=20000,
    )  # fmt: skip
    assert r.converged
    np.testing.assert_allclose(r.weights, ref, atol=1e-8, rtol=1e-6)
    assert r.points is not None and r.points.shape == grid.shape
    # The loss is the weighted divergence (or OT_eps) from the barycenter to each histogram.
    q = r.weights / r.weights.sum()
    terms = [
        (birkhoff.sinkhorn_divergence if debias else birkhoff.sinkhorn)(
            grid, grid, a=q, b=h, blur=np.sqrt(reg), marginal_tol=1e-9
        )
        for h in hist
    ]
    losses = [t.loss for t in terms]
    np.testing.assert_allclose(r.losses, losses, rtol=1e-6, atol=1e-10)
    assert r.loss == pytest.approx(lam @ losses, rel=1e-6)


def test_measures_on_their_own_clouds_equal_their_histograms_on_the_support(rng):
    # A measure given as a cloud whose points are support points is the same measure as its
    # histogram on the support.
    grid, hist = _grid_histograms()
    idx = np.flatnonzero(hist[0] > 1e-3)
    cloud = grid[idx]
    w = hist[0][idx] / hist[0][idx].sum()
    full = np.zeros(len(grid))
    full[idx] = w
    on_clouds = birkhoff.fixed_support_barycenter(
        grid, [cloud, grid], cloud_weights=[w, hist[1]], blur=0.02, tol=1e-10
    )
    on_grid = birkhoff.fixed_support_barycenter(
        grid, cloud_weights=[full, hist[1]], blur=0.02, tol=1e-10
    )
    np.testing.assert_allclose(on_clouds.weights, on_grid.weights, atol=1e-9)


@pytest.mark.parametrize("cost, p", [("sqeuclidean", None), ("euclidean", 1), ("cosine", None)])
def test_one_measure_is_its_own_debiased_barycenter(rng, cost, p):
    support = rng.normal(size=(50, 3))
    a = rng.uniform(0.2, 1, 50)
    a /= a.sum()
    r = birkhoff.fixed_support_barycenter(
        support, cloud_weights=[a], blur=0.1, cost=cost, p=p, tol=1e-10, max_iter=50000
    )
    assert r.converged
    np.testing.assert_allclose(r.weights, a, atol=1e-6)
    assert abs(r.loss) < 1e-7


def test_float32_support_and_fortran_order(rng):
    grid, hist = _grid_histograms()
    r64 = birkhoff.fixed_support_barycenter(grid, cloud_weights=hist, blur=0.02)
    r32 = birkhoff.fixed_support_barycenter(
        np.asfortranarray(grid.astype(np.float32)), cloud_weights=hist.astype(np.float32), blur=0.02
    )
    assert r64.converged and r32.converged
    assert r32.weights.dtype == np.float32
    np.testing.assert_allclose(r32.weights, r64.weights, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"blur": 0}, ValueError, "^blur:"),
        ({"weights": [1.0]}, ValueError, "^weights:"),
        ({"weights": [1.0, -1.0]}, ValueError, "^weights:"),
        ({"cloud_weights": [np.ones(5) / 5, np.ones(4) / 4]}, ValueError, "^cloud_weights\\[0\\]:"),
        ({"cloud_weights": [np.ones(6) / 6, np.ones(6) / 3]}, ValueError, "^cloud_weights\\[1\\]:"),
        (
            {"cloud_weights": [np.ones(6) / 6, -np.ones(6) / 6]},
            ValueError,
            "^cloud_weights\\[1\\]:",
        ),
        ({"max_iter": 0}, ValueError, "^max_iter:"),
        ({"cost": "manhattan"}, ValueError, "cost"),
        ({"clouds": [np.zeros((3, 3))], "cloud_weights": None}, ValueError, "^support:"),
        ({"clouds": [np.zeros((3, 2), np.float32)], "cloud_weights": None}, TypeError, "clouds"),
        ({"cloud_weights": None}, TypeError, "^cloud_weights:"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, error, match):
    support = np.random.default_rng(0).normal(size=(6, 2))
    args = {"cloud_weights": [np.ones(6) / 6, np.ones(6) / 6]}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        birkhoff.fixed_support_barycenter(support, **args)


def test_bad_support():
    with pytest.raises(ValueError, match="^support:"):
        birkhoff.fixed_support_barycenter(np.full((4, 2), np.nan), cloud_weights=[np.ones(4) / 4])
    with pytest.raises(TypeError, match="^support:"):
        birkhoff.fixed_support_barycenter(np.zeros((4, 2), int), cloud_weights=[np.ones(4) / 4])


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_writes_what_python_returns(tmp_path):
    grid, hist = _grid_histograms()
    np.save(tmp_path / "grid.npy", grid)
    np.save(tmp_path / "hist.npy", hist)
    cloud = grid[::3] + 0.01
    np.save(tmp_path / "cloud.npy", cloud)
    common = ["--weights", "0.4,0.6", "--blur", "0.03", "--json", "--quiet"]
    out = subprocess.run(
        ["birkhoff", "fixed-support-barycenter", tmp_path / "grid.npy", "--histograms",
         tmp_path / "hist.npy", *common, "--output", tmp_path / "q.npz"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    r = birkhoff.fixed_support_barycenter(grid, cloud_weights=hist, weights=[0.4, 0.6], blur=0.03)
    assert report["converged"] == r.converged and report["iterations"] == r.iterations
    assert report["loss"] == pytest.approx(r.loss, rel=1e-12)
    np.testing.assert_allclose(np.load(tmp_path / "q.npz")["weights"], r.weights, rtol=1e-12)
    # Clouds as positionals, with uniform weights.
    out = subprocess.run(
        ["birkhoff", "fixed-support-barycenter", tmp_path / "grid.npy", tmp_path / "cloud.npy",
         tmp_path / "grid.npy", *common, "--no-debias"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    r = birkhoff.fixed_support_barycenter(
        grid, [cloud, grid], weights=[0.4, 0.6], blur=0.03, debias=False
    )
    assert json.loads(out.stdout)["loss"] == pytest.approx(r.loss, rel=1e-12)
    # Integer histograms (counts) are read as float64, as Python reads them.
    counts = np.rint(hist * 1000).astype(np.int64)
    for row in counts:  # equal totals: the measures' masses must agree
        row[np.argmax(row)] += 1000 - row.sum()
    np.save(tmp_path / "counts.npy", counts)
    out = subprocess.run(
        ["birkhoff", "fixed-support-barycenter", tmp_path / "grid.npy", "--histograms",
         tmp_path / "counts.npy", *common],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    r = birkhoff.fixed_support_barycenter(grid, cloud_weights=counts, weights=[0.4, 0.6], blur=0.03)
    assert json.loads(out.stdout)["loss"] == pytest.approx(r.loss, rel=1e-12)
    bad = subprocess.run(
        ["birkhoff", "fixed-support-barycenter", tmp_path / "grid.npy", "--histograms",
         tmp_path / "hist.npy", "--weights", "1,2,3"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith("birkhoff: error: --weights")
    none = subprocess.run(
        ["birkhoff", "fixed-support-barycenter", tmp_path / "grid.npy"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert none.returncode == 2
    assert none.stderr.startswith("birkhoff: error: ")


def test_errors_of_the_inner_geometry_name_the_barycenter_arguments(rng):
    support = rng.normal(size=(6, 3))
    support[0] = 0
    with pytest.raises(ValueError, match="^support:"):
        birkhoff.fixed_support_barycenter(support, cloud_weights=[np.ones(6) / 6], cost="cosine")
    cloud = rng.normal(size=(4, 3))
    cloud[3] = 0
    with pytest.raises(ValueError, match=r"^clouds\[1\]:"):
        birkhoff.fixed_support_barycenter(
            support[1:], [support[1:], cloud], cost="cosine", debias=False
        )


def test_a_stop_before_convergence_warns():
    grid, hist = _grid_histograms()
    with pytest.warns(RuntimeWarning, match="not converged in 3 iterations"):
        r = birkhoff.fixed_support_barycenter(grid, cloud_weights=hist, blur=0.02, max_iter=3)
    assert not r.converged
