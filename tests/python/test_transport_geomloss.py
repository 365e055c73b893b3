"""Parity with GeomLoss (optional: needs torch and geomloss, which CI does not install)."""

import numpy as np
import pytest

import birkhoff

torch = pytest.importorskip("torch")
geomloss = pytest.importorskip("geomloss")


@pytest.mark.parametrize("debias", [True, False])
@pytest.mark.parametrize("reach", [None, 1.0])
@pytest.mark.parametrize("blur,scaling", [(0.05, 0.5), (0.2, 0.8)])
def test_samples_loss_matches_geomloss_tensorized(debias, reach, blur, scaling):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(150, 3))
    y = rng.normal(size=(120, 3)) + 0.5
    a = rng.uniform(0.1, 1.1, 150)
    b = rng.uniform(0.1, 1.1, 120)
    a, b = a / a.sum(), b / b.sum()
    ours = birkhoff.SamplesLoss(
        "sinkhorn", p=2, blur=blur, scaling=scaling, debias=debias, reach=reach
    )(a, x, b, y)
    theirs = geomloss.SamplesLoss(
        "sinkhorn",
        p=2,
        blur=blur,
        scaling=scaling,
        debias=debias,
        reach=reach,
        backend="tensorized",
    )(*(torch.from_numpy(v) for v in (a, x, b, y)))
    assert ours == pytest.approx(float(theirs), rel=1e-7, abs=1e-10)


def test_potentials_match_geomloss():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(100, 2))
    y = rng.normal(size=(90, 2))
    f, g = birkhoff.SamplesLoss(blur=0.1, potentials=True)(x, y)
    ft, gt = geomloss.SamplesLoss("sinkhorn", p=2, blur=0.1, potentials=True, backend="tensorized")(
        torch.from_numpy(x), torch.from_numpy(y)
    )
    np.testing.assert_allclose(f, ft.numpy().ravel(), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(g, gt.numpy().ravel(), rtol=1e-7, atol=1e-10)
