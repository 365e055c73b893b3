"""birkhoff.align (QPAlign) and birkhoff.datasets: planted recovery, seeds, directed graphs,
unequal sizes, the CLI, and bad input from both front ends."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff
from birkhoff import datasets
from birkhoff.align import PRESETS


def _directed_pair(n=40, p=0.2, seed=5):
    rng = np.random.default_rng(seed)
    mask = (rng.random((n, n)) < p) & ~np.eye(n, dtype=bool)
    src, dst = np.nonzero(mask)
    w = 0.5 + rng.random(src.shape[0])
    perm = rng.permutation(n)
    while np.array_equal(np.argsort(perm), perm):
        perm = rng.permutation(n)
    e1 = np.stack([src, dst])
    e2 = np.stack([perm[src], perm[dst]])
    return e1, e2, w, perm


def test_generator_is_reproducible_and_planted():
    a = datasets.correlated_wigner(80, 8, 0.7, 0.5, seed=3)
    b = datasets.correlated_wigner(80, 8, 0.7, 0.5, seed=3)
    np.testing.assert_array_equal(a.perm, b.perm)
    np.testing.assert_array_equal(a.b, b.b)
    iu = np.triu_indices(80, 1)
    pa = a.a[iu]
    pb = a.b[np.ix_(a.perm, a.perm)][iu]
    assert abs(np.corrcoef(pa, pb)[0, 1] - 0.7) < 4 / np.sqrt(pa.size)
    assert a.x1.dtype == np.float32 and a.x2.shape == (80, 8)
    np.testing.assert_allclose(a.x1.mean(axis=0), 0, atol=1e-5)


def test_planted_far_above_threshold_is_recovered_exactly():
    inst = datasets.correlated_wigner(100, 16, 0.9, 0.9, seed=17)
    res = birkhoff.align(
        x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, truth=inst.truth
    )
    np.testing.assert_array_equal(res.perm, inst.perm)
    assert res.metrics["exact"] and res.overlap == 1.0
    assert res.metrics["mrr"] == 1.0
    assert res.topk.shape == (100, 10)
    np.testing.assert_array_equal(res.topk[:, 0], inst.perm)


def test_planted_far_below_threshold_stays_near_chance():
    inst = datasets.correlated_wigner(100, 16, 0.0, 0.0, seed=18)
    res = birkhoff.align(
        x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, truth=inst.truth
    )
    assert res.overlap < 0.06


def test_directed_graph_aligns_with_its_relabelled_copy():
    e1, e2, w, perm = _directed_pair()
    res = birkhoff.align(
        e1,
        e2,
        edge_weight1=w,
        edge_weight2=w,
        directed=True,
        lambda_edge=1.0,
        lambda_feature=0.0,
        init="barycenter",
    )
    np.testing.assert_array_equal(res.perm, perm)
    assert not np.array_equal(res.perm, np.argsort(perm))


def test_inputs_are_reported_and_mixed_orientations_warn():
    # Self-loops at 3 (twice) and 4, {0, 1} both ways, {1, 2} one way, (2, 3) twice one way.
    e = np.array([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 3, 3, 3, 3, 4]])
    x = np.random.default_rng(0).standard_normal((5, 2)).astype(np.float32)
    with pytest.warns(RuntimeWarning) as record:
        res = birkhoff.align(e, e, x1=x, x2=x, max_iter=3)
    messages = sorted(str(w.message) for w in record if "symmetric" in str(w.message))
    assert len(messages) == 2 and all("directed=True" in m for m in messages)
    assert "edge_index1 is not symmetric: 2 node pairs" in messages[0]
    assert "edge_index2 is not symmetric" in messages[1]
    assert res.graph1 == {
        "nodes": 5,
        "self_loops_used": 3,
        "duplicates_merged": 2,
        "one_way_pairs": 2,
        "two_way_pairs": 1,
        "directed": False,
    }
    assert res.graph2 == res.graph1 and "graph1" not in repr(res)
    res = birkhoff.align(e, e, x1=x, x2=x, max_iter=3, directed=True)
    assert (res.graph1["duplicates_merged"], res.graph1["one_way_pairs"]) == (1, 0)


def test_repr_is_one_short_line():
    e = np.array([[i for i in range(299)], [i + 1 for i in range(299)]])
    truth = np.stack([np.arange(300), np.arange(300)], axis=1)
    res = birkhoff.align(e, e, max_iter=3, truth=truth)
    text = repr(res)
    assert "\n" not in text and len(text) < 120, text
    assert text.startswith("Alignment(n1=300, top_k=10, iterations=")
    assert f"overlap={res.overlap:.4g}" in text


def test_seeds_are_honoured_exactly():
    inst = datasets.correlated_wigner(60, 4, 0.1, 0.1, seed=9)
    rows = np.array([0, 7, 13, 42, 59])
    seeds = np.stack([rows, inst.perm[(rows + 1) % 60]], axis=1)  # deliberately wrong
    res = birkhoff.align(
        x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, seeds=seeds, max_iter=30
    )
    np.testing.assert_array_equal(res.perm[rows], seeds[:, 1])
    assert len(set(res.perm.tolist())) == 60


def test_unequal_sizes_leave_extra_nodes_unmatched():
    # G1 = a planted 40-node graph plus 20 isolated nodes with unrelated features.
    inst = datasets.correlated_wigner(40, 16, 0.9, 0.9, seed=23)
    a = np.zeros((60, 60))
    a[:40, :40] = inst.a
    x1 = np.concatenate([inst.x1, np.random.default_rng(1).standard_normal((20, 16))])
    res = birkhoff.align(
        x1=x1.astype(np.float32),
        x2=inst.x2,
        adjacency1=a,
        adjacency2=inst.b,
        truth=inst.truth,
        return_soft=True,
    )
    assert (res.perm == -1).sum() == 20
    # Every true partner is ranked first; the LAP rounding may let an isolated extra row take a
    # real column (rounding-level sensitive, see docs/align.md), hence the bound on overlap.
    assert res.metrics["hits1"] == 1.0
    assert res.overlap >= 0.75
    assert res.soft.shape == (60, 40)


def test_patience_stops_once_the_matching_is_stable():
    inst = datasets.correlated_wigner(100, 16, 0.9, 0.9, seed=17)
    res = birkhoff.align(
        x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, truth=inst.truth, patience=10
    )
    assert res.stopped_by == "patience" and res.iterations < 400
    assert res.overlap == 1.0


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(edge_index1=np.array([[0, 1], [1, 9]])), ValueError, "edge_index1"),
        (dict(edge_index1=np.array([0, 1, 2])), ValueError, "edge_index1"),
        (dict(edge_weight2=np.array([1.0, np.nan])), ValueError, "edge_weight2"),
        (dict(x2=np.array([[1, np.nan]] * 3, dtype=np.float32)), ValueError, "x2"),
        (dict(x2=np.ones((3, 3), dtype=np.float32)), ValueError, "x2"),
        (dict(x2=np.ones((3, 2), dtype=np.float64)), TypeError, "x2"),
        (dict(seeds=np.array([[0, 3]])), ValueError, "seeds"),
        (dict(seeds=np.array([[0, 1], [2, 1]])), ValueError, "seeds"),
        (dict(seeds=np.array([[0.0, 1.0]])), TypeError, "seeds"),
        (dict(truth=np.array([[0, 0], [0, 1]])), ValueError, "truth"),
    ],
    ids=[
        "id_out_of_range",
        "wrong_shape",
        "nan_weight",
        "nan_features",
        "different_d",
        "float64_features",
        "seed_out_of_range",
        "seed_repeated",
        "float_seeds",
        "truth_repeated",
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, error, name):
    args = dict(
        edge_index1=np.array([[0, 1], [1, 2]]),
        edge_index2=np.array([[0, 1], [1, 2]]),
        x1=np.ones((3, 2), dtype=np.float32),
        x2=np.ones((3, 2), dtype=np.float32),
        edge_weight2=np.array([1.0, 2.0]),
    )
    args.update(kwargs)
    with pytest.raises(error, match=name):
        birkhoff.align(**args)


def test_douban_restricted_loader(shared_data):
    d = datasets.douban(shared_data / "douban", restricted=True)
    assert d["x1"].shape == (1118, 538) and d["x2"].shape == (1118, 538)
    assert d["edge_index2"].shape == (2, 2460) and d["seeds"].shape == (223, 2)
    # Every anchored pair has the same location.
    t = d["truth"]
    np.testing.assert_array_equal(d["x1"][t[:, 0]], d["x2"][t[:, 1]])


_CLI = shutil.which("birkhoff")


@pytest.mark.skipif(_CLI is None, reason="the birkhoff command is not on PATH")
def test_cli_generate_then_align_reports_overlap(tmp_path):
    subprocess.run(
        [
            _CLI,
            "generate",
            "wigner",
            str(tmp_path),
            "--n",
            "60",
            "--d",
            "16",
            "--rho",
            "0.9",
            "--r",
            "0.9",
            "--seed",
            "4",
        ],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [
            _CLI,
            "align",
            str(tmp_path / "g1"),
            str(tmp_path / "g2"),
            "--truth",
            str(tmp_path / "truth.npy"),
            "--output",
            str(tmp_path / "out"),
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    summary = json.loads(out.stdout)
    assert summary["overlap"] == 1.0 and summary["hits1"] == 1.0
    perm = np.load(tmp_path / "out" / "perm.npy")
    np.testing.assert_array_equal(perm, np.load(tmp_path / "perm.npy"))
    assert np.load(tmp_path / "out" / "topk.npy").shape == (60, 10)


@pytest.mark.skipif(_CLI is None, reason="the birkhoff command is not on PATH")
def test_cli_rejects_out_of_range_seeds(tmp_path):
    subprocess.run(
        [_CLI, "generate", "wigner", str(tmp_path), "--n", "10", "--d", "2"],
        check=True,
        capture_output=True,
    )
    np.save(tmp_path / "seeds.npy", np.array([[0, 10]], dtype=np.int64))
    out = subprocess.run(
        [
            _CLI,
            "align",
            str(tmp_path / "g1"),
            str(tmp_path / "g2"),
            "--seeds",
            str(tmp_path / "seeds.npy"),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "seeds" in out.stderr


@pytest.mark.skipif(_CLI is None, reason="the birkhoff command is not on PATH")
@pytest.mark.parametrize(
    "flag, value",
    [
        ("--max-iter", "-1"),
        ("--sinkhorn-sweeps", "0"),
        ("--step", "-1"),
        ("--top-k", "-2"),
        ("--lambda-edge", "-1"),
    ],
)
def test_cli_bad_option_names_the_flag(tmp_path, flag, value):
    subprocess.run(
        [_CLI, "generate", "wigner", str(tmp_path), "--n", "10", "--d", "2"],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [_CLI, "align", str(tmp_path / "g1"), str(tmp_path / "g2"), flag, value],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    # The flag, then the option's name where it differs ("--max-iter (max_iter): ...").
    assert re.search(rf"error: {re.escape(flag)}( \(\w+\))?:", out.stderr)


def test_preset_fills_in_only_the_arguments_not_passed():
    inst = datasets.correlated_wigner(30, 4, 0.9, 0.9, seed=2)
    args = dict(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, seed=1)
    res = birkhoff.align(**args, preset="douban", max_iter=3, tol=0.0, lambda_edge=0.5)
    assert res.iterations == 3 and res.objective.shape == (4,)
    assert res.lambda_edge == 0.5 and res.lambda_feature == 0.8  # 0.8 from the preset
    res = birkhoff.align(**args, preset="douban", max_iter=2, tol=0.0)
    assert res.iterations == 2 and (res.lambda_edge, res.lambda_feature) == (0.2, 0.8)
    res = birkhoff.align(**args, preset="none", max_iter=2, tol=0.0)
    assert (res.lambda_edge, res.lambda_feature) == (0.1, 0.9)  # no preset: "gaussian"
    assert res.preset == "none" and list(res.candidates) == ["none"]
    with pytest.raises(ValueError, match="preset"):
        birkhoff.align(**args, preset="nope")


def test_auto_keeps_the_most_likely_preset_run():
    inst = datasets.correlated_wigner(60, 4, 0.9, 0.9, seed=3)
    args = dict(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, truth=inst.truth)
    # No stopping rule: every preset runs (a converged run would end the search).
    res = birkhoff.align(**args, max_iter=40, tol=0.0, patience=0)
    assert list(res.candidates) == list(PRESETS)
    assert res.likelihood == max(res.candidates.values())
    assert res.candidates[res.preset] == res.likelihood
    # The run kept is that preset's run, bit for bit, and max_iter held in every run.
    alone = birkhoff.align(**args, max_iter=40, tol=0.0, patience=0, preset=res.preset)
    np.testing.assert_array_equal(alone.perm, res.perm)
    assert alone.likelihood == res.likelihood and res.options["max_iter"] == 40
    # The first preset converges on this easy pair: one run.
    assert list(birkhoff.align(**args).candidates) == ["gaussian"]
    # Every preset field given: one run.
    fixed = dict(lambda_edge=0.1, lambda_feature=0.9, gamma=0.1, max_iter=5, sinkhorn_sweeps=80,
                 step=1e-4, init="similarity")  # fmt: skip
    assert len(birkhoff.align(**args, **fixed).candidates) == 1


def test_stopping_by_max_iter_says_what_to_try():
    inst = datasets.correlated_wigner(40, 4, 0.5, 0.5, seed=3)
    args = dict(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, tol=0.0)
    with pytest.warns(RuntimeWarning, match="max_iter after 3 iterations.*preset auto"):
        birkhoff.align(**args, preset="none", max_iter=3, patience=0)


@pytest.mark.slow
def test_default_run_on_douban_reaches_the_authors_overlap(shared_data):
    # The bar: the default settings (no flags) on Douban restricted reach 0.75 overlap
    # (the gaussian settings alone: 0.14; the douban preset: 0.82).
    d = datasets.douban(shared_data / "douban", restricted=True)
    with pytest.warns(RuntimeWarning, match="max_iter"):
        res = birkhoff.align(d["edge_index1"], d["edge_index2"], d["x1"], d["x2"], truth=d["truth"])
    assert res.preset == "douban"
    assert res.overlap >= 0.75


def test_default_stops_on_the_stable_matching_at_n_1000():
    # The authors' synthetic settings at n = 1000: the matching is exact from iteration 3, but
    # the BB steps cycle, and the 400th iterate (the old default, patience 0) has overlap 0.70.
    inst = datasets.correlated_wigner(1000, 16, 0.9, 0.9, seed=1)
    res = birkhoff.align(
        x1=inst.x1,
        x2=inst.x2,
        adjacency1=inst.a,
        adjacency2=inst.b,
        truth=inst.truth,
        preset="gaussian",
    )
    assert res.stopped_by == "patience" and res.iterations < 50
    assert res.overlap == 1.0


def test_bb_negative_curvature_and_anderson_options():
    inst = datasets.correlated_wigner(60, 16, 0.9, 0.9, seed=4)
    args = dict(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, truth=inst.truth)
    for bb in ("maximum", "previous"):
        for anderson in (0, 10):
            res = birkhoff.align(**args, bb_negative_curvature=bb, sinkhorn_anderson=anderson)
            assert res.overlap == 1.0
    with pytest.raises(ValueError, match="bb_negative_curvature"):
        birkhoff.align(**args, bb_negative_curvature="min")
    with pytest.raises(ValueError, match="sinkhorn_anderson"):
        birkhoff.align(**args, sinkhorn_anderson=-1)


def test_score_reproduces_the_metrics_of_align_and_reads_top_k_lists():
    inst = datasets.correlated_wigner(n=60, d=8, rho=0.5, r=0.5, seed=3)
    truth = np.stack([np.arange(60), inst.perm], axis=1)
    seeds = truth[[4, 9]]
    r = birkhoff.align(
        adjacency1=inst.a,
        adjacency2=inst.b,
        x1=inst.x1,
        x2=inst.x2,
        seeds=seeds,
        truth=truth,
        return_soft=True,
        max_iter=20,
        top_k=3,
    )
    assert birkhoff.align_score(r.perm, r.soft, truth, seeds) == r.metrics
    from_top3 = birkhoff.align_score(r.perm, r.topk, truth, seeds)
    assert from_top3["overlap"] == r.metrics["overlap"]
    assert from_top3["hits1"] == pytest.approx(r.metrics["hits1"])
    assert np.isnan(from_top3["hits5"]) and np.isnan(from_top3["hits10"])
    with pytest.raises(ValueError, match="truth"):
        birkhoff.align_score(r.perm, r.soft, np.array([[0, 1], [0, 2]]))
    with pytest.raises(TypeError, match="soft_or_topk"):
        birkhoff.align_score(r.perm, r.soft.astype(str), truth)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_iter": "abc"}, TypeError, "^max_iter:"),
        ({"max_iter": 10.7}, TypeError, "^max_iter:"),
        ({"lambda_edge": "x"}, TypeError, "^lambda_edge:"),
        ({"sinkhorn_tol": None}, TypeError, "^sinkhorn_tol:"),
        ({"seed": -1}, ValueError, "^seed:"),
        ({"seed": "a"}, TypeError, "^seed:"),
        ({"init": 3}, TypeError, "^init:"),
        ({"mle_weights": (0.9,)}, TypeError, "^mle_weights:"),
        ({"mle_weights": (0.9, 0.9), "lambda_edge": 0.5}, TypeError, "^mle_weights:"),
    ],
)
def test_bad_option_values_name_the_option(kwargs, error, match):
    inst = datasets.correlated_wigner(10, 2, 0.9, 0.9, seed=2)
    with pytest.raises(error, match=match):
        birkhoff.align(x1=inst.x1, x2=inst.x2, adjacency1=inst.a, adjacency2=inst.b, **kwargs)
