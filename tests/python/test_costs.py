"""Ground costs beyond sqeuclidean: parity with POT and GeomLoss, gradients, c-transform, errors."""

import importlib

import numpy as np
import pytest

import birkhoff

ot = pytest.importorskip("ot")

# (birkhoff's cost keywords, the matrix POT is given, the blur -> epsilon exponent)
COSTS = {
    "euclidean": ({"cost": "euclidean"}, lambda x, y: ot.dist(x, y, metric="euclidean"), 1),
    "euclidean-p1.5": (
        {"cost": "euclidean", "p": 1.5},
        lambda x, y: ot.dist(x, y, metric="euclidean") ** 1.5,
        1.5,
    ),
    "euclidean-p3": (
        {"cost": "euclidean", "p": 3},
        lambda x, y: ot.dist(x, y, metric="euclidean") ** 3,
        3,
    ),
    "cosine": ({"cost": "cosine"}, lambda x, y: ot.dist(x, y, metric="cosine"), 2),
    "sqeuclidean": ({}, lambda x, y: ot.dist(x, y), 2),
}


def _clouds(rng, n=110, m=90, d=3):
    x = rng.uniform(0, 1, (n, d))
    y = rng.uniform(0, 1, (m, d)) + 0.2
    a = rng.uniform(0.2, 1.0, n)
    b = rng.uniform(0.2, 1.0, m)
    return x, y, a / a.sum(), b / b.sum()


@pytest.mark.parametrize("name", list(COSTS))
def test_transport_cost_matches_pot_sinkhorn_log(rng, name):
    kw, pot_cost, p = COSTS[name]
    x, y, a, b = _clouds(rng)
    blur = 0.3
    eps = blur**p
    M = pot_cost(x, y)
    P = ot.sinkhorn(a, b, M, eps, method="sinkhorn_log", numItermax=200000, stopThr=1e-14)
    r = birkhoff.sinkhorn(x, y, a, b, blur=blur, marginal_tol=1e-10, **kw)
    assert r.converged
    assert r.epsilon == pytest.approx(eps, rel=1e-12)
    assert r.transport_cost == pytest.approx(float((P * M).sum()), rel=1e-6)
    np.testing.assert_allclose(r.plan(), P, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("name", ["euclidean", "cosine"])
def test_float32_agrees_with_float64(rng, name):
    kw = COSTS[name][0]
    x, y, _, _ = _clouds(rng, 400, 300, 5)
    r64 = birkhoff.sinkhorn(x, y, blur=0.2, **kw)
    r32 = birkhoff.sinkhorn(x.astype(np.float32), y.astype(np.float32), blur=0.2, **kw)
    assert r32.converged and r64.converged
    assert r32.loss == pytest.approx(r64.loss, rel=1e-4)


@pytest.mark.parametrize("name", ["euclidean", "euclidean-p1.5", "cosine"])
@pytest.mark.parametrize("debias", [False, True], ids=["ot", "divergence"])
def test_point_gradients_match_finite_differences(rng, name, debias):
    kw = COSTS[name][0]
    x, y, a, b = _clouds(rng, 40, 30, 3)

    def loss(xx, yy):
        return birkhoff.sinkhorn(
            xx, yy, a, b, blur=0.3, debias=debias, marginal_tol=1e-12, warn=False, **kw
        ).loss

    gx, gy, _, _ = birkhoff.sinkhorn(
        x, y, a, b, blur=0.3, debias=debias, marginal_tol=1e-12, **kw
    ).gradients()
    h = 1e-6
    for pts, grad, which in ((x, gx, 0), (y, gy, 1)):
        for i, k in ((0, 0), (3, 1), (7, 2)):
            plus, minus = pts.copy(), pts.copy()
            plus[i, k] += h
            minus[i, k] -= h
            args_p = (plus, y) if which == 0 else (x, plus)
            args_m = (minus, y) if which == 0 else (x, minus)
            fd = (loss(*args_p) - loss(*args_m)) / (2 * h)
            assert grad[i, k] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_cosine_is_scale_invariant_and_maps_to_the_raw_points(rng):
    x, y, a, b = _clouds(rng, 60, 50, 4)
    r = birkhoff.sinkhorn(x, y, a, b, blur=0.2, cost="cosine", marginal_tol=1e-10)
    s = birkhoff.sinkhorn(3.0 * x, 0.5 * y, a, b, blur=0.2, cost="cosine", marginal_tol=1e-10)
    assert s.loss == pytest.approx(r.loss, rel=1e-9)
    P = r.plan()
    np.testing.assert_allclose(
        r.barycentric_map(), (P @ y) / P.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-9
    )


@pytest.mark.parametrize("name", ["euclidean", "euclidean-p3", "cosine"])
def test_c_transform_matches_brute_force(rng, name):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    kw, pot_cost, _ = COSTS[name]
    x, y, _, _ = _clouds(rng, 70, 60, 3)
    g = rng.normal(size=60) * 0.1
    c, argmin, value = bt.c_transform(
        torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(g), **kw
    )
    full = pot_cost(x, y) - g[None, :]
    np.testing.assert_allclose(c.numpy(), full.min(axis=1), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(argmin.numpy(), full.argmin(axis=1))
    assert float(value) == pytest.approx(full.min(axis=1).mean() + g.mean(), rel=1e-10)


@pytest.mark.parametrize("debias", [False, True], ids=["ot", "divergence"])
def test_samples_loss_p1_matches_geomloss_value_and_gradient(rng, monkeypatch, debias):
    torch = pytest.importorskip("torch")
    geomloss = pytest.importorskip("geomloss")
    import birkhoff.torch as bt

    # GeomLoss's tensorized |x - y| is sqrt(max(|x - y|^2, 1e-8)): a coincident pair of the
    # self terms costs 1e-4 there, 0 in its KeOps backend and here. Clamping at 1e-30 instead
    # gives the exact cost (and finite gradients) from the same code.
    samples = importlib.import_module("geomloss._legacy.sinkhorn_samples")
    monkeypatch.setattr(
        samples,
        "distances",
        lambda x, y: torch.sqrt(torch.clamp_min(samples.squared_distances(x, y), 1e-30)),
    )
    x0 = torch.from_numpy(rng.uniform(0, 1, (150, 3)))
    y0 = torch.from_numpy(rng.uniform(0, 1, (120, 3)) + 0.3)
    values, grads = [], []
    for loss_of in (
        geomloss.SamplesLoss(
            "sinkhorn", p=1, blur=0.05, scaling=0.7, debias=debias, backend="tensorized"
        ),
        bt.SamplesLoss("sinkhorn", p=1, blur=0.05, scaling=0.7, debias=debias),
    ):
        x = x0.clone().requires_grad_(True)
        loss = loss_of(x, y0)
        (gx,) = torch.autograd.grad(loss, [x])
        values.append(float(loss.detach()))
        grads.append(gx.numpy())
    assert values[1] == pytest.approx(values[0], rel=1e-6)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-9)
    numpy_loss = birkhoff.SamplesLoss("sinkhorn", p=1, blur=0.05, scaling=0.7, debias=debias)
    assert numpy_loss(x0.numpy(), y0.numpy()) == pytest.approx(values[0], rel=1e-6)


def test_torch_gradients_of_each_cost_match_finite_differences(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x0, y0, a, b = _clouds(rng, 30, 25, 2)
    for kw in (COSTS["euclidean"][0], COSTS["cosine"][0], COSTS["euclidean-p3"][0]):
        x = torch.from_numpy(x0).requires_grad_(True)
        y = torch.from_numpy(y0).requires_grad_(True)
        loss = bt.sinkhorn(x, y, a, b, blur=0.3, marginal_tol=1e-12, **kw).loss
        gx, gy = torch.autograd.grad(loss, [x, y])

        def value(xx, yy, kw=kw):
            return float(
                bt.sinkhorn(
                    torch.from_numpy(xx),
                    torch.from_numpy(yy),
                    a,
                    b,
                    blur=0.3,
                    marginal_tol=1e-12,
                    **kw,
                ).loss
            )

        h = 1e-6
        xp, xm = x0.copy(), x0.copy()
        xp[2, 1] += h
        xm[2, 1] -= h
        assert float(gx[2, 1]) == pytest.approx((value(xp, y0) - value(xm, y0)) / (2 * h), rel=1e-5)
        yp, ym = y0.copy(), y0.copy()
        yp[4, 0] += h
        ym[4, 0] -= h
        assert float(gy[4, 0]) == pytest.approx((value(x0, yp) - value(x0, ym)) / (2 * h), rel=1e-5)


def test_bad_costs_are_refused_by_name(rng):
    x, y, _, _ = _clouds(rng, 20, 20, 2)
    with pytest.raises(ValueError, match="cost"):
        birkhoff.sinkhorn(x, y, cost="manhattan")
    with pytest.raises(ValueError, match="^p"):
        birkhoff.sinkhorn(x, y, cost="euclidean", p=0.5)
    with pytest.raises(ValueError, match="^p"):
        birkhoff.sinkhorn(x, y, cost="cosine", p=2)
    with pytest.raises(ValueError, match="half_cost"):
        birkhoff.sinkhorn(x, y, cost="euclidean", half_cost=True)
    zero = x.copy()
    zero[3] = 0
    with pytest.raises(ValueError, match="^x.*row 3"):
        birkhoff.sinkhorn(zero, y, cost="cosine")
    with pytest.raises(ValueError, match="backend"):
        birkhoff.sinkhorn(x, y, cost="euclidean", backend="multiscale")
    with pytest.raises(TypeError, match="cost"):
        birkhoff.sinkhorn(x, y, cost=2)
    with pytest.raises(ValueError, match="^p"):
        birkhoff.SamplesLoss("sinkhorn", p=3)


def test_second_order_products_refuse_other_costs(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x0, y0, _, _ = _clouds(rng, 20, 20, 2)
    x = torch.from_numpy(x0).requires_grad_(True)
    loss = bt.sinkhorn(x, torch.from_numpy(y0), blur=0.3, cost="euclidean").loss
    (gx,) = torch.autograd.grad(loss, [x], create_graph=True)
    with pytest.raises(ValueError, match="cost"):
        torch.autograd.grad(gx.sum(), [x])


def test_torch_samples_loss_uses_or_refuses_every_argument(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    for name, value in (("truncate", 3), ("cluster_scale", 0.1), ("verbose", True)):
        with pytest.raises(ValueError, match=f"^{name}"):
            bt.SamplesLoss("sinkhorn", **{name: value})
    x = torch.from_numpy(rng.uniform(0, 1, (50, 2)))
    y = torch.from_numpy(rng.uniform(0, 1, (40, 2)))
    # backend="multiscale": p = 1 is refused by name, and the p = 2 loss is the converged
    # divergence.
    with pytest.raises(ValueError, match="^backend:.*p=2 only"):
        bt.SamplesLoss("sinkhorn", p=1, backend="multiscale")
    exact = birkhoff.sinkhorn_divergence(
        x.numpy(), y.numpy(), blur=0.05, half_cost=True, marginal_tol=1e-9
    )
    multi = bt.SamplesLoss("sinkhorn", backend="multiscale")(x, y)
    assert float(multi) == pytest.approx(exact.loss, rel=1e-3)
    dense = bt.SamplesLoss("sinkhorn", backend="online", debias=False)(x, y)
    assert float(dense) == pytest.approx(
        float(bt.SamplesLoss("sinkhorn", backend="tensorized", debias=False)(x, y)), rel=1e-12
    )


def test_samples_loss_p1_unbalanced_matches_geomloss(rng):
    # GeomLoss's unbalanced penalty is rho = reach**p.
    torch = pytest.importorskip("torch")
    geomloss = pytest.importorskip("geomloss")
    import birkhoff.torch as bt

    x = torch.from_numpy(rng.uniform(0, 1, (80, 2)))
    y = torch.from_numpy(rng.uniform(0, 1, (60, 2)) + 0.3)
    kw = dict(p=1, blur=0.05, scaling=0.7, reach=0.5, debias=False)
    want = float(geomloss.SamplesLoss("sinkhorn", backend="tensorized", **kw)(x, y))
    assert float(bt.SamplesLoss("sinkhorn", **kw)(x, y)) == pytest.approx(want, rel=1e-6)
    assert birkhoff.SamplesLoss("sinkhorn", **kw)(x.numpy(), y.numpy()) == pytest.approx(
        want, rel=1e-6
    )


def test_p_zero_is_refused_not_read_as_the_default(rng):
    x, y, _, _ = _clouds(rng, 10, 10, 2)
    for cost in ("euclidean", "cosine", "sqeuclidean"):
        with pytest.raises(ValueError, match="^p"):
            birkhoff.sinkhorn(x, y, cost=cost, p=0)
