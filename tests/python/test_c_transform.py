"""birkhoff.c_transform (numpy): brute force over every pair, Danskin's gradients, the semi-dual
bound, the torch front end's numbers, accepted layouts and errors."""

import numpy as np
import pytest

import birkhoff


def _cost(x, y, cost, p, half_cost):
    diff = x[:, None, :] - y[None, :, :]
    if cost == "sqeuclidean":
        return (0.5 if half_cost else 1.0) * (diff**2).sum(-1)
    return np.sqrt((diff**2).sum(-1)) ** p


@pytest.mark.parametrize(
    "cost,p,half_cost",
    [
        ("sqeuclidean", None, False),
        ("sqeuclidean", None, True),
        ("euclidean", 1.0, False),
        ("euclidean", 1.5, False),
    ],
)
def test_equals_brute_force_with_danskin_gradients(cost, p, half_cost):
    rng = np.random.default_rng(0)
    x, y = rng.random((70, 3)), rng.random((50, 3))
    g = rng.random(50)
    a = rng.uniform(0.1, 1, 70)
    a /= a.sum()
    b = rng.uniform(0.1, 1, 50)
    b /= b.sum()
    r = birkhoff.c_transform(x, y, g, a, b, cost=cost, p=p, half_cost=half_cost)
    shifted = _cost(x, y, cost, p or 1.0, half_cost) - g
    assert np.allclose(r.values, shifted.min(1), rtol=0, atol=1e-12)
    assert np.array_equal(r.argmin, shifted.argmin(1))
    assert r.value == pytest.approx(a @ r.values + b @ g, rel=1e-12)
    # Danskin: only the argmin pair moves the minimum.
    grad_g = b - np.bincount(r.argmin, weights=a, minlength=50)
    assert np.allclose(r.grad_g, grad_g, atol=1e-12)
    h = 1e-6
    direction = rng.standard_normal(x.shape)
    up = birkhoff.c_transform(x + h * direction, y, g, a, b, cost=cost, p=p, half_cost=half_cost)
    down = birkhoff.c_transform(x - h * direction, y, g, a, b, cost=cost, p=p, half_cost=half_cost)
    assert (r.grad_x * direction).sum() == pytest.approx(
        (up.value - down.value) / (2 * h), rel=1e-5
    )


def test_the_semi_dual_bounds_the_transport_cost_from_below():
    # <a, g^c> + <b, g> <= <P, C> for any g and any coupling P; at the entropic solution's g
    # (blur small) it comes close to the entropic plan's cost.
    rng = np.random.default_rng(1)
    x, y = rng.random((200, 2)), rng.random((150, 2)) + 0.2
    s = birkhoff.sinkhorn(x, y, blur=0.01, warn=False)
    for g in (rng.standard_normal(150), s.g):
        assert birkhoff.c_transform(x, y, g).value <= s.transport_cost + 1e-9
    assert birkhoff.c_transform(x, y, s.g).value == pytest.approx(s.transport_cost, rel=2e-2)


def test_equals_the_torch_front_end():
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    rng = np.random.default_rng(2)
    x, y, g = rng.random((60, 4)), rng.random((45, 4)), rng.random(45)
    ours = birkhoff.c_transform(x, y, g)
    c, argmin, value = bt.c_transform(*(torch.from_numpy(v) for v in (x, y, g)))
    assert np.array_equal(ours.values, c.numpy()) and np.array_equal(ours.argmin, argmin.numpy())
    assert ours.value == float(value)


def test_layouts_and_dtypes_are_accepted():
    rng = np.random.default_rng(3)
    x, y = rng.random((30, 2)), rng.random((20, 2))
    g = rng.integers(0, 3, 20)  # any real dtype for g
    ref = birkhoff.c_transform(x, y, g.astype(np.float64))
    fortran = birkhoff.c_transform(np.asfortranarray(x), y, g)
    assert np.array_equal(fortran.values, ref.values)
    r32 = birkhoff.c_transform(x.astype(np.float32), y.astype(np.float32), g)
    assert r32.values.dtype == np.float32
    assert np.allclose(r32.values, ref.values, atol=1e-5)


@pytest.mark.parametrize(
    "kwargs,exc,name",
    [
        (dict(g=np.ones(3)), ValueError, "g"),
        (dict(g=np.full(20, np.nan)), ValueError, "g"),
        (dict(g=None), TypeError, "g"),
        (dict(g=np.ones(20), a=np.ones(5)), ValueError, "a"),
        (dict(g=np.ones(20), b=-np.ones(20)), ValueError, "b"),
        (dict(g=np.ones(20), cost="manhattan"), ValueError, "cost"),
        (dict(g=np.ones(20), y=np.ones((20, 3))), ValueError, "y"),
        (dict(g=np.ones(20), y=np.ones((20, 2), np.float32)), TypeError, "y"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, exc, name):
    rng = np.random.default_rng(4)
    args = dict(x=rng.random((30, 2)), y=rng.random((20, 2)))
    args.update(kwargs)
    with pytest.raises(exc, match=rf"^{name}\b"):
        birkhoff.c_transform(args.pop("x"), args.pop("y"), **args)
