"""birkhoff.torch.barycenter: the forward equals the numpy barycenter; the support's implicit
gradient and the loss's gradient against finite differences of re-solved barycenters; errors."""

import numpy as np
import pytest

import birkhoff

torch = pytest.importorskip("torch")
bt = pytest.importorskip("birkhoff.torch")

LAM = [0.4, 0.6]
TIGHT = dict(blur=0.3, tol=1e-20, marginal_tol=1e-11, max_iter=2000)


def _problem():
    g = torch.Generator().manual_seed(0)
    c1 = torch.rand(30, 2, dtype=torch.float64, generator=g)
    c2 = torch.rand(25, 2, dtype=torch.float64, generator=g) + torch.tensor([1.0, 0.5]).double()
    init = torch.rand(12, 2, dtype=torch.float64, generator=g) * 1.5
    return c1, c2, init


def _numpy(c1, c2, init):
    return birkhoff.barycenter([c1.numpy(), c2.numpy()], LAM, init=init.numpy(), **TIGHT)


def test_forward_is_the_numpy_barycenter():
    c1, c2, init = _problem()
    r = bt.barycenter([c1, c2], LAM, init=init, **TIGHT)
    ref = _numpy(c1, c2, init)
    assert r.converged
    np.testing.assert_array_equal(r.points.detach().numpy(), ref.points)
    assert float(r.loss) == pytest.approx(ref.loss, rel=1e-9)


@pytest.mark.parametrize("which", [0, 1])
def test_support_gradient_matches_finite_differences(which):
    c1, c2, init = _problem()
    clouds = [c1.clone().requires_grad_(which == 0), c2.clone().requires_grad_(which == 1)]
    r = bt.barycenter(clouds, LAM, init=init, **TIGHT)
    v = torch.randn(r.points.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    (g,) = torch.autograd.grad((r.points * v).sum(), clouds[which])
    d = torch.randn(
        clouds[which].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2)
    )
    h = 1e-4  # the re-solved supports are exact to about 1e-10: a smaller h is noise
    moved = [[c1, c2], [c1, c2]]
    moved[0][which] = moved[0][which] + h * d
    moved[1][which] = moved[1][which] - h * d
    plus, minus = (_numpy(*m, init).points for m in moved)
    fd = float(((torch.from_numpy(plus - minus) / (2 * h)) * v).sum())
    assert float((g * d).sum()) == pytest.approx(fd, rel=1e-5)


def test_loss_gradient_matches_finite_differences():
    c1, c2, init = _problem()
    x = c1.clone().requires_grad_(True)
    r = bt.barycenter([x, c2], LAM, init=init, **TIGHT)
    (g,) = torch.autograd.grad(r.loss, x)
    d = torch.randn(c1.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    h = 1e-5
    fd = (_numpy(c1 + h * d, c2, init).loss - _numpy(c1 - h * d, c2, init).loss) / (2 * h)
    assert float((g * d).sum()) == pytest.approx(fd, rel=1e-6)


def test_points_refuse_a_gradient_in_the_cloud_weights():
    c1, c2, init = _problem()
    a1 = torch.full((30,), 1 / 30, dtype=torch.float64, requires_grad=True)
    r = bt.barycenter([c1, c2], LAM, cloud_weights=[a1, np.full(25, 1 / 25)], init=init, blur=0.3)
    (ga,) = torch.autograd.grad(r.loss, a1)  # the loss has it (envelope theorem)
    assert torch.isfinite(ga).all()
    with pytest.raises(RuntimeError, match="cloud_weights"):
        torch.autograd.grad(r.points.sum(), a1)


def test_float32_clouds_backpropagate_through_a_float64_solve():
    # The defaults on float32 clouds: the Hessian solve runs in float64, and the gradient
    # agrees with the float64 problem's.
    g = torch.Generator().manual_seed(4)
    a32 = torch.randn(20, 3, generator=g).requires_grad_(True)
    b32 = torch.randn(25, 3, generator=g)
    bt.barycenter([a32, b32]).points.sum().backward()
    a64 = a32.detach().double().requires_grad_(True)
    bt.barycenter([a64, b32.double()]).points.sum().backward()
    assert a32.grad.dtype == torch.float32
    np.testing.assert_allclose(a32.grad.numpy(), a64.grad.numpy(), atol=1e-3)


def test_bad_inputs():
    c1, c2, _ = _problem()
    with pytest.raises(TypeError, match="clouds"):
        bt.barycenter(c1)
    with pytest.raises(TypeError, match=r"clouds\[1\]"):
        bt.barycenter([c1, c2.numpy()])
    with pytest.raises(ValueError, match="cloud_weights"):
        bt.barycenter([c1, c2], cloud_weights=[np.ones(30) / 30])
    with pytest.raises(ValueError, match="^blur:"):
        bt.barycenter([c1, c2], blur=-1.0)
    with pytest.raises(ValueError, match=r"^clouds\[0\]:"):
        bt.barycenter([torch.zeros(0, 2, dtype=torch.float64)])
    with pytest.raises(ValueError, match=r"^clouds\[0\]:"):
        bt.barycenter([torch.ones(5, dtype=torch.float64)])
    with pytest.raises(ValueError, match="^init:"):
        bt.barycenter([c1], init=torch.zeros(0, 2, dtype=torch.float64))
    for bad in ({"hvp_rtol": -1.0}, {"hvp_rtol": float("nan")}, {"hvp_max_iter": 0}):
        with pytest.raises(ValueError, match="^hvp_"):
            bt.barycenter([c1, c2], **bad)
    with pytest.raises(TypeError, match="^hvp_rtol:"):
        bt.barycenter([c1, c2], hvp_rtol="a")
    with pytest.raises(ValueError, match="^weights:"):
        bt.barycenter([c1, c2], torch.tensor([0.3, 0.7], requires_grad=True))
    # Second derivatives through the support are refused, not silently detached.
    x = c1.clone().requires_grad_(True)
    r = bt.barycenter([x, c2], blur=0.3)
    (g,) = torch.autograd.grad(r.points.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()
