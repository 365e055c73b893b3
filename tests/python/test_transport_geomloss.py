"""Parity with GeomLoss (needs torch and geomloss; scripts/setup.sh installs both)."""

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


def test_float32_in_64_dimensions_at_a_training_blur_is_answered_as_geomloss_answers_it():
    # PyTorch's default dtype at a blur GeomLoss users train with: 600 x 500 standard normal
    # points in 64-d, blur 0.05. The bounding box's diagonal (about 55) put epsilon below
    # float32's floor and the call was refused; the logits' terms reach only the cost at the
    # clouds' radii (about 200 here), so float32 answers it in float32: the value within 1e-6
    # of float64 and of GeomLoss's float32 value, the gradient within 1e-3 of float64's
    # (measured 6.6e-4) and no further from it than GeomLoss's float32 gradient (1.2e-3).
    import birkhoff.torch as bt

    rng = np.random.default_rng(5)
    x32 = rng.standard_normal((600, 64)).astype(np.float32)
    y32 = rng.standard_normal((500, 64)).astype(np.float32)
    r = birkhoff.sinkhorn(x32, y32, blur=0.05, half_cost=True, schedule="geomloss", warn=False)
    assert r.report["working_dtype"] == "float32"

    def value_and_gradient(loss, x, y):
        x = x.clone().requires_grad_(True)
        v = loss(x, y)
        (g,) = torch.autograd.grad(v, x)
        return float(v.detach()), g.double()

    x, y = torch.from_numpy(x32), torch.from_numpy(y32)
    ours = bt.SamplesLoss("sinkhorn", p=2, blur=0.05)
    theirs = geomloss.SamplesLoss("sinkhorn", p=2, blur=0.05, backend="tensorized")
    v32, g32 = value_and_gradient(ours, x, y)
    v64, g64 = value_and_gradient(ours, x.double(), y.double())
    w32, h32 = value_and_gradient(theirs, x, y)
    assert v32 == pytest.approx(v64, rel=1e-6)
    assert v32 == pytest.approx(w32, rel=1e-6)
    ours_error = float((g32 - g64).abs().max())
    assert ours_error <= 1e-3 * float(g64.abs().max())
    assert ours_error <= float((h32 - g64).abs().max())
