"""Bad input: the same error, naming the argument, from Python and from the CLI."""

import json
import shutil
import subprocess

import numpy as np
import pytest

import birkhoff

CLI = shutil.which("birkhoff")


def good(n=6, m=5, d=2, dtype=np.float64):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(m, d)).astype(dtype)


CASES = [
    ("empty x", lambda x, y: (x[:0], y, None, None, {}), ValueError, "x"),
    ("d mismatch", lambda x, y: (x, y[:, :1].copy(), None, None, {}), ValueError, "y"),
    ("a wrong length", lambda x, y: (x, y, np.ones(5) / 5, None, {}), ValueError, "a"),
    ("nan in x", lambda x, y: (np.where(x > 1, np.nan, x), y, None, None, {}), ValueError, "x"),
    ("inf in y", lambda x, y: (x, np.full_like(y, np.inf), None, None, {}), ValueError, "y"),
    (
        "nan weight",
        lambda x, y: (x, y, np.array([np.nan, 1, 1, 1, 1, 1.0]) / 6, None, {}),
        ValueError,
        "a",
    ),
    (
        "negative weight",
        lambda x, y: (x, y, None, np.array([-0.1, 0.3, 0.3, 0.3, 0.2]), {}),
        ValueError,
        "b",
    ),
    ("zero mass", lambda x, y: (x, y, np.zeros(6), None, {}), ValueError, "a"),
    ("unequal masses", lambda x, y: (x, y, np.ones(6), None, {}), ValueError, "b"),
    ("blur zero", lambda x, y: (x, y, None, None, {"blur": 0.0}), ValueError, "blur"),
    ("blur nan", lambda x, y: (x, y, None, None, {"blur": float("nan")}), ValueError, "blur"),
    ("scaling 1", lambda x, y: (x, y, None, None, {"scaling": 1.0}), ValueError, "scaling"),
    ("int points", lambda x, y: (x.astype(np.int64), y, None, None, {}), TypeError, "x"),
    ("mixed dtypes", lambda x, y: (x, y.astype(np.float32), None, None, {}), TypeError, "y"),
    (
        "list and bad y",
        lambda x, y: (x.tolist(), y.astype(np.int32), None, None, {}),
        TypeError,
        "y",
    ),
    ("3-d array", lambda x, y: (x[None], y, None, None, {}), ValueError, "x"),
    ("bad update", lambda x, y: (x, y, None, None, {"update": "sideways"}), ValueError, "update"),
    ("bool blur", lambda x, y: (x, y, None, None, {"blur": np.bool_(True)}), TypeError, "blur"),
    ("1-d blur", lambda x, y: (x, y, None, None, {"blur": np.array([0.2])}), TypeError, "blur"),
]


def test_a_numpy_scalar_or_0d_array_is_a_number():
    x, y = good(30, 20, 2)
    want = birkhoff.sinkhorn(x, y, blur=0.2)
    for blur in (np.float32(0.2), np.array(0.2), np.array(0.2, dtype=np.float32)):
        got = birkhoff.sinkhorn(x, y, blur=blur)
        assert got.loss == pytest.approx(want.loss, rel=1e-6)
    r = birkhoff.partial_sinkhorn(x, y, mass=np.array(0.5), blur=0.2)
    assert r.row_marginal().sum() == pytest.approx(0.5, rel=1e-3)


def test_a_stalled_float64_solve_is_not_told_to_use_float64():
    x, y = good(100, 80, 2)
    with pytest.warns(RuntimeWarning, match="stopped improving") as record:
        birkhoff.sinkhorn(x, y, blur=0.3, marginal_tol=0.0)
    assert "float64 points" not in str(record[0].message)


@pytest.mark.parametrize("name,make,exc,argument", CASES, ids=[c[0] for c in CASES])
def test_python_raises_naming_the_argument(name, make, exc, argument):
    x, y, a, b, kw = make(*good())
    with pytest.raises(exc, match=rf"^{argument}\b"):
        birkhoff.sinkhorn(x, y, a, b, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_list_takes_the_dtype_of_the_other_cloud(dtype):
    x, y = good(30, 20, 2, dtype)
    want = birkhoff.sinkhorn(x, y, blur=0.2)
    for args in [(x.tolist(), y), (x, y.tolist()), (tuple(map(tuple, x)), y)]:
        got = birkhoff.sinkhorn(*args, blur=0.2)
        assert got.f.dtype == dtype
        np.testing.assert_array_equal(got.f, want.f)
    both = birkhoff.sinkhorn(x.tolist(), y.tolist(), blur=0.2)
    assert both.f.dtype == np.float64


@pytest.mark.skipif(CLI is None, reason="the birkhoff command is not installed (pip install .)")
class TestCli:
    def run(self, *args):
        return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)

    def test_json_matches_the_python_result(self, tmp_path):
        x, y = good(200, 150, 3, np.float32)
        np.save(tmp_path / "x.npy", x)
        np.save(tmp_path / "y.npy", y)
        p = self.run(
            "transport",
            tmp_path / "x.npy",
            tmp_path / "y.npy",
            "--blur",
            0.5,
            "--json",
            "--output",
            tmp_path / "out.npz",
            "--map",
            "--gradient",
        )
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        for key in [
            "loss",
            "transport_cost",
            "epsilon",
            "iterations",
            "converged",
            "marginal_error",
            "seconds",
            "peak_rss_mb",
        ]:
            assert key in out
        r = birkhoff.sinkhorn(x, y, blur=0.5, warn=False)
        assert out["loss"] == pytest.approx(r.loss, rel=1e-6)
        npz = np.load(tmp_path / "out.npz")
        np.testing.assert_array_equal(npz["f"], r.f)
        np.testing.assert_allclose(npz["barycentric_map"], r.barycentric_map(), rtol=1e-6)
        assert npz["grad_x"].shape == (200, 3)

    @pytest.mark.parametrize(
        "problem,argument",
        [
            ("missing", "SOURCE"),
            ("int64", "SOURCE"),
            ("garbage", "SOURCE"),
            ("nan", "SOURCE"),
            ("mismatch", "TARGET"),
            ("blur", "blur"),
        ],
    )
    def test_bad_input_exits_non_zero_naming_the_argument(self, tmp_path, problem, argument):
        x, y = good()
        xs = tmp_path / "x.npy"
        np.save(xs, x)
        np.save(tmp_path / "y.npy", y)
        extra = []
        if problem == "missing":
            xs = tmp_path / "nope.npy"
        elif problem == "int64":
            np.save(xs, np.arange(12).reshape(6, 2))
        elif problem == "garbage":
            xs.write_text("not an array")
        elif problem == "nan":
            x[0, 0] = np.nan
            np.save(xs, x)
        elif problem == "mismatch":
            np.save(tmp_path / "y.npy", y[:, :1].copy())
        elif problem == "blur":
            extra = ["--blur", "-1"]
        p = self.run("transport", xs, tmp_path / "y.npy", *extra)
        assert p.returncode != 0
        assert argument in p.stderr, p.stderr


@pytest.mark.parametrize(
    "kw,exc,argument",
    [
        ({"iterations": 2**31}, ValueError, "iterations"),
        ({"iterations": 1.7}, TypeError, "iterations"),
        ({"blur": None}, TypeError, "blur"),
        ({"blur": 1e-200}, ValueError, "blur"),
        ({"reach": 1e200}, ValueError, "reach_a"),
        ({"scaling": 0.9999999999999999}, ValueError, "scaling"),
        ({"tol": 1e-3}, ValueError, "tol"),
        ({"progress": "yes"}, TypeError, "progress"),
    ],
    ids=lambda v: str(v),
)
def test_options_out_of_range_name_the_option(kw, exc, argument):
    x, y = good()
    with pytest.raises(exc, match=rf"^{argument}\b"):
        birkhoff.sinkhorn(x, y, **kw)


def test_float32_below_its_resolution_is_solved_in_float64_not_refused():
    # blur 1e-3 is below what float32 logits resolve on this data: the float64 problem of the
    # same numbers is solved instead, and the report says why.
    x, y = good(dtype=np.float32)
    r = birkhoff.sinkhorn(x, y, blur=1e-3, warn=False)
    assert r.report["working_dtype"].startswith("float64 (epsilon "), r.report["working_dtype"]
    assert r.f.dtype == np.float32
    r64 = birkhoff.sinkhorn(x.astype(np.float64), y.astype(np.float64), blur=1e-3, warn=False)
    assert r.converged == r64.converged
    assert r.loss == pytest.approx(r64.loss, rel=1e-6)
    # float64's own floor is still an error naming blur.
    with pytest.raises(ValueError, match="^blur: .*float64"):
        birkhoff.sinkhorn(x, y, blur=1e-9)


def test_self_potentials_are_none_without_debias():
    x, y = good()
    r = birkhoff.sinkhorn(x, y, blur=0.5, warn=False)
    assert r.f_aa is None and r.g_bb is None


def test_fortran_ordered_and_strided_inputs_are_accepted(rng):
    x, y = rng.random((40, 3)), rng.random((30, 3))
    ref = birkhoff.sinkhorn(x, y, blur=0.3).loss
    assert birkhoff.sinkhorn(np.asfortranarray(x), y, blur=0.3).loss == ref
    wide = np.hstack([y, y])
    assert (
        birkhoff.sinkhorn(x, wide[:, ::2], blur=0.3).loss
        == birkhoff.sinkhorn(x, np.ascontiguousarray(wide[:, ::2]), blur=0.3).loss
    )
    assert birkhoff.sliced_wasserstein(np.asfortranarray(x), y).loss == (
        birkhoff.sliced_wasserstein(x, y).loss
    )
    got = birkhoff.barycenter([np.asfortranarray(x), y[:, ::-1]], blur=0.5, n_support=10)
    assert got.points.flags.c_contiguous
    feats = np.asfortranarray(rng.random((40, 4), dtype=np.float32))
    e = rng.integers(0, 40, (2, 80))
    edges = np.concatenate([e, e[::-1]], 1)
    a = birkhoff.coarsen(feats, edges, ratio=0.5).assignment
    np.testing.assert_array_equal(
        a, birkhoff.coarsen(np.ascontiguousarray(feats), edges, ratio=0.5).assignment
    )


def test_empty_weights_are_refused_not_read_as_uniform(rng):
    x, y = rng.random((20, 2)), rng.random((15, 2))
    for call in (
        lambda: birkhoff.sinkhorn(x, y, a=np.zeros(0), blur=0.3),
        lambda: birkhoff.sliced_wasserstein(x, y, b=np.zeros(0)),
        lambda: birkhoff.gromov_wasserstein(x, y, a=np.zeros(0)),
        lambda: birkhoff.barycenter([x, y], cloud_weights=[np.zeros(0), None], blur=0.3),
        lambda: birkhoff.barycenter([x, y], weights=[], blur=0.3),
    ):
        with pytest.raises(ValueError, match="no entries"):
            call()
    with pytest.raises(ValueError, match="^init"):
        birkhoff.gromov_wasserstein(x, y, init=np.zeros((0, 0)))


def test_non_native_byte_order_is_accepted(rng):
    x, y = rng.random((20, 2)), rng.random((15, 2))
    ref = birkhoff.sinkhorn(x, y, blur=0.3)
    r = birkhoff.sinkhorn(x.astype(">f8"), y.astype(">f8"), blur=0.3)
    assert r.loss == ref.loss
    v = rng.random(15)
    np.testing.assert_array_equal(ref.apply(v.astype(">f8")), ref.apply(v))
    feats = rng.random((20, 3)).astype(">f4")
    e = np.array([[0, 1, 2, 3], [1, 2, 3, 4]])
    np.testing.assert_array_equal(
        birkhoff.coarsen(feats, e, ratio=0.5).assignment,
        birkhoff.coarsen(feats.astype(np.float32), e, ratio=0.5).assignment,
    )
