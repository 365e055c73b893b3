"""birkhoff.torch.fixed_support_barycenter: the forward equals the numpy barycenter; the loss's
gradient (envelope theorem at the debiased barycenter) against finite differences of re-solved
barycenters, in the support, a cloud, histograms and the measures' weights; errors."""

import numpy as np
import pytest

import birkhoff

torch = pytest.importorskip("torch")
bt = pytest.importorskip("birkhoff.torch")

TIGHT = dict(blur=0.2, tol=1e-12, max_iter=50000)


def _problem():
    rng = np.random.default_rng(0)
    support = torch.tensor(rng.random((40, 2)), requires_grad=True)
    c1 = torch.tensor(rng.random((30, 2)) * 0.5, requires_grad=True)
    c2 = torch.tensor(rng.random((25, 2)) * 0.5 + 0.5)
    lam = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    return support, c1, c2, lam


def _loss(support, c1, c2, lam):
    return birkhoff.fixed_support_barycenter(support, [c1, c2], lam, **TIGHT).loss


def _directional(grad, direction):
    return float((grad * torch.as_tensor(direction)).sum())


def test_forward_is_the_numpy_barycenter_and_the_gradient_its_finite_differences():
    support, c1, c2, lam = _problem()
    r = bt.fixed_support_barycenter(support, [c1, c2], lam, **TIGHT)
    arrays = [t.detach().numpy() for t in (support, c1, c2, lam)]
    ref = birkhoff.fixed_support_barycenter(arrays[0], arrays[1:3], arrays[3], **TIGHT)
    assert r.converged and ref.converged
    assert np.array_equal(r.weights.detach().numpy(), ref.weights)
    assert float(r.loss) == pytest.approx(ref.loss, rel=1e-8)
    assert [float(t) for t in r.losses] == pytest.approx(ref.losses, rel=1e-8)
    g_support, g_cloud, g_lam = torch.autograd.grad(r.loss, [support, c1, lam])
    rng = np.random.default_rng(1)
    h = 1e-5
    for k, grad in enumerate((g_support, g_cloud, g_lam)):
        direction = rng.standard_normal(arrays[k if k < 2 else 3].shape)
        up, down = list(arrays), list(arrays)
        index = k if k < 2 else 3
        up[index] = arrays[index] + h * direction
        down[index] = arrays[index] - h * direction
        fd = (_loss(*up) - _loss(*down)) / (2 * h)
        assert _directional(grad, direction) == pytest.approx(fd, rel=1e-5, abs=1e-9), k


def test_histograms_on_the_support_get_their_gradient():
    # Two bumps on a 1-D grid as histograms (POT's setting); a mass-preserving change of the
    # first histogram against finite differences (balanced gradients are defined up to a
    # constant, so only such directions count).
    grid = torch.linspace(0, 1, 30, dtype=torch.float64).reshape(-1, 1)
    bumps = torch.exp(-((grid.ravel()[None, :] - torch.tensor([[0.25], [0.7]])) ** 2) / 0.01)
    hist = (bumps / bumps.sum(1, keepdim=True)).detach().requires_grad_(True)
    kw = dict(blur=0.05, tol=1e-12, max_iter=50000)
    r = bt.fixed_support_barycenter(grid, cloud_weights=hist, **kw)
    (g,) = torch.autograd.grad(r.loss, hist)
    direction = np.zeros((2, 30))
    direction[0, 6], direction[0, 9] = 1.0, -1.0
    h = 1e-6
    base = hist.detach().numpy()

    def loss(w):
        return birkhoff.fixed_support_barycenter(grid.numpy(), cloud_weights=w, **kw).loss

    fd = (loss(base + h * direction) - loss(base - h * direction)) / (2 * h)
    assert _directional(g, direction) == pytest.approx(fd, rel=1e-4)


def test_the_weights_refuse_a_gradient_and_the_entropic_barycenter_is_refused():
    support, c1, c2, lam = _problem()
    r = bt.fixed_support_barycenter(support, [c1, c2], lam, **TIGHT)
    with pytest.raises(RuntimeError, match="weights are not differentiable"):
        (r.weights * torch.arange(40.0, dtype=torch.float64)).sum().backward()
    with pytest.raises(ValueError, match="^debias"):
        bt.fixed_support_barycenter(support, [c1, c2], debias=False)
    with pytest.raises(TypeError, match="^debias"):
        bt.fixed_support_barycenter(support, [c1, c2], debias="no")


def test_bad_inputs_name_the_argument():
    support, c1, c2, _ = _problem()
    with pytest.raises(TypeError, match="^support"):
        bt.fixed_support_barycenter(support.detach().numpy(), [c1, c2])
    with pytest.raises(TypeError, match="^clouds"):
        bt.fixed_support_barycenter(support, c1)
    with pytest.raises(TypeError, match=r"^clouds\[1\]"):
        bt.fixed_support_barycenter(support, [c1, c2.numpy()])
    with pytest.raises(ValueError, match="^weights"):
        bt.fixed_support_barycenter(support, [c1, c2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="^cloud_weights"):
        bt.fixed_support_barycenter(support, [c1, c2], cloud_weights=[torch.ones(30) / 30])
    with pytest.raises(ValueError, match="^blur"):
        bt.fixed_support_barycenter(support, [c1, c2], blur=-1.0)
