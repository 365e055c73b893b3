"""Flags are booleans: a string such as "no" is a TypeError naming the flag, not True."""

import shutil
import subprocess

import numpy as np
import pytest

import birkhoff


def _graph():
    rng = np.random.default_rng(0)
    edges = np.array([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]])
    return rng.normal(size=(6, 3)).astype(np.float32), edges


@pytest.mark.parametrize(
    "name,call",
    [
        (
            "debias",
            lambda v: birkhoff.fixed_support_barycenter(
                np.zeros((4, 2)), cloud_weights=[np.ones(4) / 4], debias=v
            ),
        ),
        ("edge_weights", lambda v: birkhoff.coarsen(*_graph(), ratio=0.5, edge_weights=v)),
        (
            "clamp_interference",
            lambda v: birkhoff.coarsen(*_graph(), ratio=0.5, clamp_interference=v),
        ),
        (
            "directed",
            lambda v: birkhoff.align(
                _graph()[1], _graph()[1], num_nodes1=6, num_nodes2=6, directed=v
            ),
        ),
        (
            "return_soft",
            lambda v: birkhoff.align(
                _graph()[1], _graph()[1], num_nodes1=6, num_nodes2=6, return_soft=v
            ),
        ),
    ],
)
def test_a_string_flag_is_a_type_error_naming_it(name, call):
    with pytest.raises(TypeError, match=f"^{name}:"):
        call("no")


def test_torch_debias_flag_is_checked():
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x = torch.zeros(3, 2, dtype=torch.float64)
    with pytest.raises(TypeError, match="^debias:"):
        bt.sinkhorn(x, x + 1, blur=1.0, debias="no")


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_generate_refuses_a_negative_seed(tmp_path):
    p = subprocess.run(
        ["birkhoff", "generate", "wigner", tmp_path / "g", "--n", "20", "--seed", "-1"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.startswith("birkhoff: error: --seed: must be >= 0"), p.stderr
