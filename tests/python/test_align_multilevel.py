"""Multilevel alignment (birkhoff.align(method="multilevel")) and its planted power-law pairs:
accuracy against dense QPAlign, a refinement that never raises the objective, the generator's
degrees and edge correlation, the CLI, and bad input."""

import json
import subprocess

import numpy as np
import pytest

import birkhoff
from birkhoff import datasets


def _pair(n, seed=1, **kw):
    inst = datasets.correlated_power_law(n, d=16, avg_degree=10, s=0.8, r=0.6, seed=seed, **kw)
    args = (inst["edge_index1"], inst["edge_index2"])
    kwargs = dict(x1=inst["x1"], x2=inst["x2"], truth=inst["truth"], num_nodes1=n, num_nodes2=n)
    return inst, args, kwargs


def test_generator_has_power_law_degrees_and_correlated_edges():
    n = 20000
    inst = datasets.correlated_power_law(n, avg_degree=10, s=0.8, seed=3)
    e1, e2, perm = inst["edge_index1"], inst["edge_index2"], inst["perm"]
    assert e1.dtype == np.int64 and e1.shape[0] == 2
    assert np.all(e1[0] < e1[1]), "one orientation per edge, no self-loops"
    deg = np.bincount(e1.ravel(), minlength=n)
    assert abs(deg.mean() - 10) < 1.0
    # P(deg > k) ~ k^-2: doubling k divides the tail by about 4.
    tail = [np.mean(deg > k) for k in (20, 40)]
    assert 2.5 < tail[0] / tail[1] < 6
    assert deg.max() > 20 * deg.mean()
    # G2's edges are G1's parent edges relabelled: the fraction of G1's edges kept in G2 is s.
    key = lambda u, v: np.minimum(u, v) * n + np.maximum(u, v)  # noqa: E731
    shared = np.isin(key(perm[e1[0]], perm[e1[1]]), key(e2[0], e2[1])).mean()
    assert abs(shared - 0.8) < 0.02
    x1, x2 = inst["x1"], inst["x2"][perm]
    corr = np.mean([np.corrcoef(x1[:, c], x2[:, c])[0, 1] for c in range(x1.shape[1])])
    assert abs(corr - 0.6) < 0.02
    again = datasets.correlated_power_law(n, avg_degree=10, s=0.8, seed=3)
    np.testing.assert_array_equal(again["edge_index2"], e2)


@pytest.mark.slow
def test_multilevel_is_within_two_points_of_dense_at_2000():
    _, args, kwargs = _pair(2000)
    common = dict(preset="gaussian", max_iter=150, **kwargs)
    dense = birkhoff.align(*args, method="dense", **common)
    multi = birkhoff.align(*args, method="multilevel", **common)
    assert dense.method == "dense" and multi.method == "multilevel"
    assert multi.coarse_nodes == 500
    assert multi.metrics["overlap"] >= dense.metrics["overlap"] - 0.02
    assert multi.metrics["overlap"] > 0.7
    f = multi.refine_objective
    assert f.shape[0] >= 2 and np.all(np.diff(f) < 0), "every kept round lowers F"


def test_refinement_never_raises_the_objective_and_auto_chooses_by_size():
    _, args, kwargs = _pair(600, seed=4)
    small = dict(preset="none", max_iter=60, coarse_nodes=100, **kwargs)
    r = birkhoff.align(*args, dense_max_nodes=500, **small)
    assert r.method == "multilevel" and r.coarse_nodes == 100
    assert np.all(np.diff(r.refine_objective) <= 0)
    assert sorted(r.perm) == list(range(600))
    np.testing.assert_array_equal(r.topk[:, 0], r.perm)
    d = birkhoff.align(*args, **small)
    assert d.method == "dense" and d.refine_objective.shape == (0,)


def test_multilevel_keeps_seeds():
    inst, args, kwargs = _pair(500, seed=6)
    seeds = inst["truth"][:20]
    r = birkhoff.align(
        *args,
        seeds=seeds,
        method="multilevel",
        preset="none",
        max_iter=60,
        coarse_nodes=80,
        **kwargs,
    )
    np.testing.assert_array_equal(r.perm[seeds[:, 0]], seeds[:, 1])


def test_multilevel_bad_input():
    inst, args, kwargs = _pair(300)
    with pytest.raises(ValueError, match="method"):
        birkhoff.align(*args, method="sparse", **kwargs)
    with pytest.raises(TypeError, match="method"):
        birkhoff.align(*args, method=3, **kwargs)
    with pytest.raises(ValueError, match="coarse_nodes"):
        birkhoff.align(*args, method="multilevel", coarse_nodes=0, **kwargs)
    with pytest.raises(ValueError, match="return_soft"):
        birkhoff.align(*args, method="multilevel", return_soft=True, **kwargs)
    with pytest.raises(ValueError, match="features"):
        birkhoff.align(*args, method="multilevel", num_nodes1=300, num_nodes2=300)
    with pytest.raises(ValueError, match="undirected"):
        birkhoff.align(*args, method="multilevel", directed=True, **kwargs)
    with pytest.raises(ValueError, match="s: must lie"):
        datasets.correlated_power_law(100, s=0)


def test_cli_method_multilevel(tmp_path):
    inst, _, _ = _pair(800, seed=2)
    for k in "12":
        (tmp_path / f"g{k}").mkdir()
        np.save(tmp_path / f"g{k}" / "edge_index.npy", inst[f"edge_index{k}"])
        np.save(tmp_path / f"g{k}" / "features.npy", inst[f"x{k}"])
    np.save(tmp_path / "truth.npy", inst["truth"])
    cmd = ["birkhoff", "align", str(tmp_path / "g1"), str(tmp_path / "g2")]
    common = ["--truth", str(tmp_path / "truth.npy"), "--preset", "none", "--iters", "60"]
    out = subprocess.run(
        [
            *cmd,
            *common,
            "--method",
            "multilevel",
            "--coarse-nodes",
            "100",
            "--json",
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    j = json.loads(out.stdout)
    assert j["method"] == "multilevel" and j["coarse_nodes"] == 100
    assert j["refine_objective"] == sorted(j["refine_objective"], reverse=True)
    assert j["overlap"] > 0.5
    np.testing.assert_array_equal(
        np.load(tmp_path / "out" / "refine_objective.npy"), j["refine_objective"]
    )
    bad = subprocess.run(
        [*cmd, "--method", "multilevel", "--coarse-top-k", "0"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "birkhoff: error: --coarse-top-k" in bad.stderr
