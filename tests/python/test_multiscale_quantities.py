"""Every quantity on the multiscale backend: the divergence, SamplesLoss, gradients, warm
starts, against the dense backend and GeomLoss (docs/transport.md, "Backends")."""

import numpy as np
import pytest

import birkhoff


def plane(rng, n=1400, m=1200):
    x, y = rng.random((n, 2)), rng.random((m, 2)) + 0.2
    a, b = rng.uniform(0.2, 1.0, n), rng.uniform(0.2, 1.0, m)
    return x, y, a / a.sum(), b / b.sum()


def test_the_divergence_and_its_gradients_agree_with_the_dense_backend(rng):
    x, y, a, b = plane(rng)
    opts = dict(blur=0.02, marginal_tol=1e-7, block_size=16)
    dense = birkhoff.sinkhorn_divergence(x, y, a, b, backend="dense", **opts)
    multi = birkhoff.sinkhorn_divergence(x, y, a, b, backend="multiscale", **opts)
    assert multi.backend == "multiscale" and multi.converged
    assert 0 < multi.kept_fraction < 0.5
    assert multi.loss == pytest.approx(dense.loss, rel=1e-5)
    gd, gm = dense.gradients(), multi.gradients()
    for k in (0, 1):
        np.testing.assert_allclose(gm[k], gd[k], atol=1e-4 * np.abs(gd[k]).max())


def test_the_multiscale_plan_is_read_by_products_and_gradients(rng):
    x, y, a, b = plane(rng)
    opts = dict(blur=0.02, marginal_tol=1e-7, block_size=16)
    dense = birkhoff.sinkhorn(x, y, a, b, backend="dense", **opts)
    multi = birkhoff.sinkhorn(x, y, a, b, backend="multiscale", **opts)
    v = rng.normal(size=(y.shape[0], 4))
    np.testing.assert_allclose(
        multi.apply(v), dense.apply(v), atol=1e-5 * np.abs(dense.apply(v)).max()
    )
    np.testing.assert_allclose(multi.row_marginal(), a, atol=1e-6 * a.max())
    gd, gm = dense.gradients(), multi.gradients()
    np.testing.assert_allclose(gm[0], gd[0], atol=1e-4 * np.abs(gd[0]).max())


def test_a_warm_start_on_multiscale_stops_at_once(rng):
    x, y, a, b = plane(rng)
    cold = birkhoff.sinkhorn(x, y, a, b, blur=0.02, backend="multiscale", block_size=16)
    warm = birkhoff.sinkhorn(
        x, y, a, b, blur=0.02, backend="multiscale", block_size=16, init=(cold.f, cold.g)
    )
    assert warm.converged and warm.backend == "multiscale"
    assert warm.report["iterations"] <= 3 < cold.report["iterations"]
    assert warm.loss == pytest.approx(cold.loss, rel=1e-6)


def test_a_fixed_iteration_run_on_multiscale_is_refused_by_name(rng):
    x, y, _, _ = plane(rng, 200, 150)
    with pytest.raises(ValueError, match="^backend: .*iterations"):
        birkhoff.sinkhorn(x, y, blur=0.02, backend="multiscale", iterations=10)


def test_torch_samplesloss_honours_the_multiscale_backend_forward_and_backward():
    torch = pytest.importorskip("torch")
    bt = pytest.importorskip("birkhoff.torch")
    gen = torch.Generator().manual_seed(3)
    x = torch.rand(1400, 2, generator=gen, dtype=torch.float64)
    y = torch.rand(1200, 2, generator=gen, dtype=torch.float64) + 0.2
    grads, values = {}, {}
    for backend in ("online", "multiscale"):
        xr = x.clone().requires_grad_(True)
        loss = bt.SamplesLoss("sinkhorn", p=2, blur=0.02, scaling=0.9, backend=backend)(xr, y)
        (grads[backend],) = torch.autograd.grad(loss, xr)
        values[backend] = float(loss.detach())
    # The converged divergence: the multiscale value lies within the dense schedule's own
    # error of the dense one.
    exact = birkhoff.sinkhorn_divergence(
        x.numpy(), y.numpy(), blur=0.02, half_cost=True, marginal_tol=1e-7, backend="dense"
    )
    own_error = abs(values["online"] - exact.loss)
    assert values["multiscale"] == pytest.approx(exact.loss, rel=1e-4)
    assert abs(values["multiscale"] - values["online"]) <= own_error + 1e-4 * exact.loss
    scale = float(grads["online"].abs().max())
    assert float((grads["multiscale"] - grads["online"]).abs().max()) <= 0.1 * scale
    r = bt.sinkhorn(x, y, blur=0.02, backend="multiscale")
    assert r.backend == "multiscale" and r.report["kept_fraction"] == r.kept_fraction < 0.5


def test_samplesloss_matches_geomloss_where_both_solve_the_same_problem():
    torch = pytest.importorskip("torch")
    bt = pytest.importorskip("birkhoff.torch")
    geomloss = pytest.importorskip("geomloss")
    gen = torch.Generator().manual_seed(5)
    x = torch.rand(600, 2, generator=gen, dtype=torch.float64)
    y = torch.rand(500, 2, generator=gen, dtype=torch.float64) + 0.2
    # Many small steps make GeomLoss's annealed value close to the converged divergence,
    # which the multiscale backend computes.
    ref = geomloss.SamplesLoss("sinkhorn", p=2, blur=0.03, scaling=0.99, backend="tensorized")
    ours = bt.SamplesLoss("sinkhorn", p=2, blur=0.03, scaling=0.99, backend="multiscale")
    assert float(ours(x, y)) == pytest.approx(float(ref(x, y)), rel=2e-3)
