"""One description per options and result struct: the CLI's flags and JSON, Python's keyword
arguments and result fields, and the output files carry the same names and defaults."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff
from birkhoff.align import PRESETS

CLI = shutil.which("birkhoff")
pytestmark = pytest.mark.skipif(CLI is None, reason="the birkhoff command is not on PATH")

# Python arguments that carry two described options at once.
COMBINED = {"mle_rho": ("mle_weights", -1.0), "mle_r": ("mle_weights", -1.0)}


def run_json(*args):
    out = subprocess.run([CLI, *map(str, args), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def python_default(function, name, presets=None):
    params = inspect.signature(function).parameters
    if name in COMBINED:
        combined, unset = COMBINED[name]
        assert params[combined].default is None
        return unset
    assert name in params, f"{function.__name__} has no keyword {name}"
    default = params[name].default
    if default is None and presets is not None and name in presets:
        return presets[name]
    return default


def align_folders(folder, **options):
    """birkhoff.align on the graph folders g1, g2 that `birkhoff generate` wrote."""
    g1, g2 = folder / "g1", folder / "g2"
    return birkhoff.align(
        np.load(g1 / "edge_index.npy"),
        np.load(g2 / "edge_index.npy"),
        np.load(g1 / "features.npy"),
        np.load(g2 / "features.npy"),
        edge_weight1=np.load(g1 / "edge_weight.npy"),
        edge_weight2=np.load(g2 / "edge_weight.npy"),
        **options,
    )


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planted")
    run_json("generate", "wigner", folder, "--n", 30, "--d", 4, "--seed", 1)
    return folder


def test_coarsen_options_have_one_name_and_one_default(planted):
    summary = run_json("coarsen", planted / "g1", "--quiet")
    options = summary["options"]
    assert set(options) >= {"method", "ratio", "n_coarse", "key_precision", "num_threads"}
    for name, value in options.items():
        assert python_default(birkhoff.coarsen, name) == value, name


def test_align_options_have_one_name_and_one_default(planted):
    summary = run_json("align", planted / "g1", planted / "g2", "--quiet")
    options = summary["options"]
    assert set(options) >= {"lambda_edge", "max_iter", "sinkhorn_anderson", "init", "patience"}
    for name, value in options.items():
        assert python_default(birkhoff.align, name, PRESETS["gaussian"]) == value, name


def test_coarsen_files_and_python_arrays_are_the_same_arrays(planted, tmp_path):
    out = tmp_path / "coarse"
    summary = run_json("coarsen", planted / "g1", "--ratio", 0.4, "--output", out, "--quiet")
    x = np.load(planted / "g1" / "features.npy")
    e = np.load(planted / "g1" / "edge_index.npy")
    r = birkhoff.coarsen(x, e, ratio=0.4)
    files = sorted(p.stem for p in out.glob("*.npy"))
    assert files == sorted(
        [
            "merges",
            "keys",
            "roots",
            "assignment",
            "sizes",
            "members_indptr",
            "members",
            "features",
            "edge_index",
            "edge_weight",
        ]
    )
    for name in files:
        np.testing.assert_array_equal(np.load(out / f"{name}.npy"), getattr(r, name), name)
    for name in ("num_nodes", "num_edges", "target", "reached_target", "heap_pushes"):
        assert summary[name] == getattr(r, name), name


def test_align_files_and_python_arrays_are_the_same_arrays(planted, tmp_path):
    out = tmp_path / "aligned"
    summary = run_json(
        "align", planted / "g1", planted / "g2", "--return-soft", "--output", out, "--quiet"
    )
    r = align_folders(planted, return_soft=True)
    files = sorted(p.stem for p in out.glob("*.npy"))
    assert files == sorted(["perm", "topk", "topk_scores", "objective", "soft", "refine_objective"])
    for name in files:
        np.testing.assert_array_equal(np.load(out / f"{name}.npy"), getattr(r, name), name)
    for name in ("iterations", "converged", "stopped_by", "nan_restarts", "lambda_edge"):
        assert summary[name] == getattr(r, name), name


@pytest.mark.parametrize(
    ("options", "stopped_by", "converged"),
    [
        ({"tol": 1e300, "patience": 0}, "tol", True),
        ({"tol": 0.0, "patience": 2}, "patience", True),
        ({"tol": 0.0, "patience": 0, "max_iter": 3}, "max_iter", False),
    ],
)
def test_align_says_which_stopping_rule_fired(planted, options, stopped_by, converged):
    flags = {"tol": "--tol", "patience": "--patience", "max_iter": "--max-iter"}
    args = [a for k, v in options.items() for a in (flags[k], v)]
    summary = run_json("align", planted / "g1", planted / "g2", *args, "--quiet")
    assert (summary["stopped_by"], summary["converged"]) == (stopped_by, converged)
    r = align_folders(planted, **options)
    assert (r.stopped_by, r.converged) == (stopped_by, converged)
    if stopped_by == "max_iter":
        assert r.iterations == options["max_iter"]


def test_align_with_every_node_seeded_has_nothing_to_iterate():
    e = np.array([[0, 1, 2], [1, 2, 0]])
    seeds = np.array([[0, 2], [1, 0], [2, 1]])
    r = birkhoff.align(e, e, seeds=seeds)
    assert (r.stopped_by, r.converged, r.iterations) == ("seeded", True, 0)
    np.testing.assert_array_equal(r.perm, [2, 0, 1])


def test_unknown_enum_spelling_names_the_keyword_in_python_and_the_cli(planted):
    with pytest.raises(ValueError, match="^method: must be one of 'nope', 'nope-star'"):
        birkhoff.coarsen(np.ones((3, 1), np.float32), np.array([[0, 1], [1, 2]]), method="x")
    out = subprocess.run(
        [CLI, "coarsen", str(planted / "g1"), "--method", "x"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "--method" in out.stderr


def test_transport_options_have_the_same_names_and_defaults_everywhere(tmp_path):
    # The CLI's JSON lists every described solver option with the C++ default; birkhoff.sinkhorn
    # and birkhoff.torch.sinkhorn take each as a keyword with that default.
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.random((20, 2)))
    np.save(tmp_path / "y.npy", rng.random((15, 2)))
    options = run_json("transport", tmp_path / "x.npy", tmp_path / "y.npy", "--quiet")["options"]
    assert len(options) >= 15
    functions = [birkhoff.sinkhorn]
    try:
        import birkhoff.torch as bt

        functions.append(bt.sinkhorn)
    except ImportError:
        pass
    for function in functions:
        for name, value in options.items():
            default = python_default(function, name)
            if value == []:  # an empty explicit schedule is None in Python
                value = None
            assert default == value, f"{function.__module__}.{function.__name__}: {name}"
