"""Sliced Wasserstein: parity with POT, the 1-D closed form, torch gradients, CLI, errors."""

import json
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff

CLI = shutil.which("birkhoff")


def _clouds(rng, n=300, m=200, d=4):
    x = rng.normal(size=(n, d))
    y = rng.normal(size=(m, d)) * 0.7 + 0.3
    a = rng.uniform(0.1, 1.0, n)
    b = rng.uniform(0.1, 1.0, m)
    return x, y, a / a.sum(), b / b.sum()


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0])
def test_matches_pot_with_the_same_directions(rng, p):
    ot = pytest.importorskip("ot")
    x, y, a, b = _clouds(rng)
    directions = ot.sliced.get_random_projections(4, 25, seed=3)
    r = birkhoff.sliced_wasserstein(x, y, a, b, projections=directions, p=p)
    ref, log = ot.sliced_wasserstein_distance(x, y, a, b, projections=directions, p=p, log=True)
    assert r.loss == pytest.approx(ref, rel=1e-10)
    np.testing.assert_allclose(r.projected, log["projected_emds"], rtol=1e-10, atol=1e-14)
    top = birkhoff.max_sliced_wasserstein(x, y, a, b, projections=directions, p=p)
    ref_top = ot.max_sliced_wasserstein_distance(x, y, a, b, projections=directions, p=p)
    assert top.loss == pytest.approx(ref_top, rel=1e-10)


def test_one_dimension_is_the_exact_sorted_cost(rng):
    x = rng.normal(size=(50, 1))
    y = rng.normal(size=(50, 1)) + 1
    r = birkhoff.sliced_wasserstein(x, y, projections=[[1.0]], p=2)
    exact = np.mean((np.sort(x[:, 0]) - np.sort(y[:, 0])) ** 2)
    assert r.loss == pytest.approx(np.sqrt(exact), rel=1e-12)


def test_seeded_directions_are_reproducible_and_returned(rng):
    x, y, _, _ = _clouds(rng, 60, 40, 3)
    r1 = birkhoff.sliced_wasserstein(x, y, seed=7, n_projections=12)
    r2 = birkhoff.sliced_wasserstein(x, y, seed=7, n_projections=12)
    r3 = birkhoff.sliced_wasserstein(x, y, seed=8, n_projections=12)
    assert r1.loss == r2.loss != r3.loss
    assert r1.projections.shape == (3, 12)
    np.testing.assert_allclose(np.linalg.norm(r1.projections, axis=0), 1, rtol=1e-12)
    from birkhoff.sliced import random_directions

    np.testing.assert_array_equal(random_directions(3, 12, 7), r1.projections)
    same = birkhoff.sliced_wasserstein(x, y, projections=r1.projections)
    assert same.loss == r1.loss


def test_float32_and_list_inputs(rng):
    x, y, _, _ = _clouds(rng, 80, 70, 2)
    r64 = birkhoff.sliced_wasserstein(x, y)
    r32 = birkhoff.sliced_wasserstein(x.astype(np.float32), y.astype(np.float32))
    assert r32.projections.dtype == np.float32
    assert r32.loss == pytest.approx(r64.loss, rel=1e-5)
    assert birkhoff.sliced_wasserstein(x.tolist(), y).loss == r64.loss


def test_torch_gradients_match_finite_differences(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x, y, a, b = _clouds(rng, 12, 9, 3)
    for p, max_sliced in [(2.0, False), (1.5, False), (2.0, True)]:
        options = {"n_projections": 6, "p": p, "max_sliced": max_sliced}
        inputs = [torch.tensor(v, requires_grad=True) for v in (x, y)]
        at, bw = (torch.tensor(v, requires_grad=True) for v in (a, b))
        assert torch.autograd.gradcheck(
            lambda xt, yt, o=options: bt.sliced_wasserstein(xt, yt, a, b, **o).loss, inputs
        )
        bt.sliced_wasserstein(*inputs, at, bw, **options).loss.backward()
        # The weights enter through the potentials: perturb them along the simplex.
        direction = np.zeros_like(a)
        direction[0], direction[1] = 1, -1
        h = 1e-6
        plus, minus = (
            bt.sliced_wasserstein(x_, y_, a + s * h * direction, b, **options).loss.item()
            for x_, y_, s in [
                (*[t.detach() for t in inputs], 1),
                (*[t.detach() for t in inputs], -1),
            ]
        )
        fd = (plus - minus) / (2 * h)
        assert fd == pytest.approx(at.grad.numpy() @ direction, rel=1e-5, abs=1e-8)
        assert bw.grad.shape == (9,)


def test_torch_refuses_gradients_keyword(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x = torch.zeros(3, 2)
    with pytest.raises(TypeError, match="gradients"):
        bt.sliced_wasserstein(x, x, gradients=True)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"p": 0.5}, ValueError, "^p:"),
        ({"n_projections": 0}, ValueError, "^n_projections:"),
        ({"projections": np.ones((2, 3))}, ValueError, "^projections:"),
        ({"projections": np.ones(3)}, ValueError, "^projections:"),
        ({"a": np.ones(5)}, ValueError, "^a:"),
        ({"b": np.full(4, 0.5)}, ValueError, "^b:"),
        ({"seed": 1.5}, TypeError, "^seed:"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, error, match):
    x = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(error, match=match):
        birkhoff.sliced_wasserstein(x, x + 1, **kwargs)


def test_non_finite_points_are_refused():
    x = np.zeros((3, 2))
    x[1, 1] = np.inf
    with pytest.raises(ValueError, match="^x: non-finite"):
        birkhoff.sliced_wasserstein(x, np.zeros((2, 2)))


@pytest.mark.skipif(CLI is None, reason="the birkhoff command is not on PATH")
def test_cli_writes_what_python_returns(rng, tmp_path):
    x, y, a, b = _clouds(rng, 40, 30, 3)
    for name, v in {"x": x, "y": y, "a": a, "b": b}.items():
        np.save(tmp_path / f"{name}.npy", v)
    out = subprocess.run(
        [CLI, "sliced", tmp_path / "x.npy", tmp_path / "y.npy", "--weights-a", tmp_path / "a.npy",
         "--weights-b", tmp_path / "b.npy", "--p", "1.5", "--seed", "4", "--n-projections", "9",
         "--output", tmp_path / "o.npz", "--gradient", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    r = birkhoff.sliced_wasserstein(x, y, a, b, p=1.5, seed=4, n_projections=9, gradients=True)
    assert report["loss"] == r.loss
    saved = np.load(tmp_path / "o.npz")
    for name in ("projected", "projections", "grad_x", "grad_y", "grad_a", "grad_b"):
        np.testing.assert_array_equal(saved[name], getattr(r, name))
    # The options have one name and one default in the CLI and in Python.
    import inspect

    params = inspect.signature(birkhoff.sliced_wasserstein).parameters
    for option, value in report["options"].items():
        if option not in ("n_projections", "seed", "p"):
            assert params[option].default == value, option
    bad = subprocess.run(
        [CLI, "sliced", tmp_path / "x.npy", tmp_path / "y.npy", "--weights-a", tmp_path / "b.npy"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith("birkhoff: error: --weights-a")
