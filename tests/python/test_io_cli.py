"""Files prepared the way numpy users prepare them, passed through the `birkhoff` command.

Each case writes a folder or array in a layout the .npy reader used to refuse (Fortran order,
int32/uint16 ids, big-endian data, empty arrays) and checks that the command gives the same
outputs as for the canonical layout, and reports the conversions it made.
"""

import json
import shutil
import subprocess
import zipfile

import numpy as np
import pytest

CLI = shutil.which("birkhoff")
pytestmark = pytest.mark.skipif(CLI is None, reason="the birkhoff command is not on PATH")

COARSEN_OUTPUTS = [
    "merges",
    "keys",
    "roots",
    "assignment",
    "sizes",
    "features",
    "edge_index",
    "edge_weight",
]


def run(*args, check=True):
    out = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def graph(rng, n=40, d=5, e=90):
    x = rng.standard_normal((n, d)).astype(np.float32)
    edges = rng.integers(0, n, size=(2, e))
    return x, edges


def save_folder(path, **arrays):
    path.mkdir(parents=True, exist_ok=True)
    for name, a in arrays.items():
        np.save(path / f"{name}.npy", a)
    return path


def coarsen(folder, out, *flags):
    summary = json.loads(
        run("coarsen", folder, "--ratio", "0.5", "--output", out, "--json", *flags).stdout
    )
    return summary, {name: np.load(out / f"{name}.npy") for name in COARSEN_OUTPUTS}


def assert_same_outputs(a, b):
    for name in COARSEN_OUTPUTS:
        assert a[name].dtype == b[name].dtype, name
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("method", ["nope", "nope-star"])
def test_coarsen_reads_int32_fortran_edge_index_as_int64(tmp_path, rng, method):
    x, e = graph(rng)
    base = save_folder(tmp_path / "base", features=x, edge_index=e)
    fortran = np.asfortranarray(e.astype(np.int32))
    assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
    other = save_folder(tmp_path / "f32", features=x, edge_index=fortran)
    _, want = coarsen(base, tmp_path / "out_base", "--method", method)
    summary, got = coarsen(other, tmp_path / "out_f", "--method", method)
    assert_same_outputs(want, got)
    assert summary["converted"] == {"edge_index": "int32->int64"}


def test_coarsen_reads_column_sliced_edge_lists(tmp_path, rng):
    # A transposed (E, 2) list of pairs, pairs.T, is Fortran-ordered, and np.save keeps that.
    x, e = graph(rng)
    pairs = np.ascontiguousarray(e.T)
    base = save_folder(tmp_path / "base", features=x, edge_index=e)
    other = save_folder(tmp_path / "t", features=x, edge_index=pairs.T)
    _, want = coarsen(base, tmp_path / "o1")
    summary, got = coarsen(other, tmp_path / "o2")
    assert_same_outputs(want, got)
    assert summary["converted"] == {}


@pytest.mark.parametrize("dtype", [">f4", ">f8", "<f8"])
def test_coarsen_reads_big_endian_and_float64_features(tmp_path, rng, dtype):
    x, e = graph(rng)
    base = save_folder(tmp_path / "base", features=x, edge_index=e)
    other = save_folder(tmp_path / "other", features=x.astype(dtype), edge_index=e)
    _, want = coarsen(base, tmp_path / "o1")
    summary, got = coarsen(other, tmp_path / "o2")
    assert_same_outputs(want, got)
    expected = {} if dtype == ">f4" else {"features": "float64->float32"}
    assert summary["converted"] == expected
    text = run("coarsen", other, "--ratio", "0.5", "--quiet")
    assert ("converted features float64->float32" in text.stderr) == (dtype != ">f4")


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.uint8, ">i4", np.uint64])
def test_coarsen_reads_every_integer_edge_dtype(tmp_path, rng, dtype):
    x, e = graph(rng, n=200)
    if np.dtype(dtype).itemsize == 1:
        e = e % 200
    base = save_folder(tmp_path / "base", features=x, edge_index=e)
    other = save_folder(tmp_path / "other", features=x, edge_index=e.astype(dtype))
    _, want = coarsen(base, tmp_path / "o1")
    summary, got = coarsen(other, tmp_path / "o2")
    assert_same_outputs(want, got)
    assert summary["converted"]["edge_index"] == f"{np.dtype(dtype).name}->int64"


def test_coarsen_of_an_edgeless_graph_is_trivial(tmp_path, rng):
    x = rng.standard_normal((6, 3)).astype(np.float32)
    folder = save_folder(tmp_path / "g", features=x, edge_index=np.zeros((2, 0), np.int64))
    out = run("coarsen", folder, "--ratio", "0.5", "--output", tmp_path / "o", "--json")
    summary = json.loads(out.stdout)
    assert summary["edges_before"] == 0 and summary["merges"] == 0
    assert summary["nodes_after"] == 6 and not summary["reached_target"]
    assert "not reachable" in out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "assignment.npy"), np.arange(6))
    assert np.load(tmp_path / "o" / "edge_index.npy").shape == (2, 0)
    summary = json.loads(run("coarsen", folder, "--ratio", "1.0", "--json").stdout)
    assert summary["reached_target"] and summary["nodes_after"] == 6


def test_coarsen_without_features_says_what_is_missing_and_what_works(tmp_path):
    folder = save_folder(
        tmp_path / "pubmed_like", edge_index=np.array([[0, 1], [1, 2]]), labels=np.array([0, 1, 0])
    )
    out = run("coarsen", folder, check=False)
    assert out.returncode == 2
    assert out.stderr.startswith("birkhoff: error: GRAPH_DIR: ")
    assert "has no features.npy (it holds edge_index.npy, labels.npy)" in out.stderr
    assert "np.ones((N, 1), np.float32)" in out.stderr
    # ... and that advice works.
    np.save(folder / "features.npy", np.ones((3, 1), np.float32))
    assert json.loads(run("coarsen", folder, "--json").stdout)["nodes_after"] == 2


def test_coarsen_names_the_file_when_ids_do_not_fit(tmp_path, rng):
    x, _ = graph(rng)
    e = np.array([[0, 2**63], [1, 2]], np.uint64)
    folder = save_folder(tmp_path / "g", features=x, edge_index=e)
    out = run("coarsen", folder, check=False)
    assert out.returncode == 2
    assert "edge_index.npy: value 9223372036854775808 is outside the range of int64" in out.stderr
    np.save(folder / "edge_index.npy", np.zeros((2, 3)))
    out = run("coarsen", folder, check=False)
    assert out.returncode == 2 and "edge_index.npy: expected int64" in out.stderr


def transport(x_path, y_path, out, *flags):
    summary = json.loads(
        run(
            "transport",
            x_path,
            y_path,
            "--blur",
            "0.1",
            "--output",
            out,
            "--map",
            "--json",
            "--quiet",
            *flags,
        ).stdout
    )
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files}
    return summary, arrays


def test_transport_reads_fortran_ordered_float64_points(tmp_path, rng):
    x = rng.standard_normal((3, 150)).T  # a transposed array: Fortran-ordered when saved
    y = rng.standard_normal((120, 3)) + 0.5
    assert x.flags.f_contiguous and not x.flags.c_contiguous
    np.save(tmp_path / "xf.npy", x)
    np.save(tmp_path / "xc.npy", np.ascontiguousarray(x))
    np.save(tmp_path / "y.npy", np.asfortranarray(y))
    np.save(tmp_path / "yc.npy", y)
    want_summary, want = transport(tmp_path / "xc.npy", tmp_path / "yc.npy", tmp_path / "c.npz")
    summary, got = transport(tmp_path / "xf.npy", tmp_path / "y.npy", tmp_path / "f.npz")
    assert summary["dtype"] == "float64" and summary["converted"] == {}
    assert summary["loss"] == want_summary["loss"]
    assert set(got) == {"f", "g", "barycentric_map"}
    for k in got:
        np.testing.assert_array_equal(got[k], want[k])


def test_transport_output_is_a_stored_npz_that_numpy_reads(tmp_path, rng):
    np.save(tmp_path / "x.npy", rng.random((50, 2), dtype=np.float32))
    np.save(tmp_path / "y.npy", rng.random((40, 2), dtype=np.float32))
    _, arrays = transport(tmp_path / "x.npy", tmp_path / "y.npy", tmp_path / "o.npz", "--gradient")
    assert arrays["f"].shape == (50,) and arrays["grad_y"].shape == (40, 2)
    assert arrays["f"].dtype == np.float32
    with zipfile.ZipFile(tmp_path / "o.npz") as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == [
            "f.npy",
            "g.npy",
            "barycentric_map.npy",
            "grad_x.npy",
            "grad_y.npy",
        ]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert z.testzip() is None


def test_transport_solves_mixed_dtypes_in_float64_and_says_so(tmp_path, rng):
    x = rng.random((60, 2))
    y = rng.random((50, 2))
    np.save(tmp_path / "x32.npy", x.astype(np.float32))
    np.save(tmp_path / "x64.npy", x.astype(np.float32).astype(np.float64))
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "a.npy", np.full(60, 5, np.int32))  # integer weights of equal masses
    np.save(tmp_path / "b.npy", np.full(50, 6, np.uint8))
    want_summary, want = transport(tmp_path / "x64.npy", tmp_path / "y.npy", tmp_path / "w.npz")
    summary, got = transport(tmp_path / "x32.npy", tmp_path / "y.npy", tmp_path / "m.npz")
    assert summary["dtype"] == "float64"
    assert summary["converted"] == {"SOURCE": "float32->float64"}
    np.testing.assert_array_equal(got["f"], want["f"])
    summary, _ = transport(
        tmp_path / "x64.npy",
        tmp_path / "y.npy",
        tmp_path / "a.npz",
        "--weights-a",
        tmp_path / "a.npy",
        "--weights-b",
        tmp_path / "b.npy",
    )
    assert summary["converted"] == {
        "--weights-a": "int32->float64",
        "--weights-b": "uint8->float64",
    }


def test_align_reads_int32_fortran_edges_and_float64_features(tmp_path):
    run("generate", "wigner", tmp_path / "pair", "--n", "40", "--d", "6", "--seed", "2")
    pair = tmp_path / "pair"
    base = json.loads(
        run(
            "align",
            pair / "g1",
            pair / "g2",
            "--truth",
            pair / "truth.npy",
            "--output",
            tmp_path / "a",
            "--json",
            "--quiet",
        ).stdout
    )
    g1 = pair / "g1"
    e = np.load(g1 / "edge_index.npy")
    np.save(g1 / "edge_index.npy", np.asfortranarray(e.astype(np.int32)))
    np.save(g1 / "features.npy", np.load(g1 / "features.npy").astype(">f8"))
    np.save(pair / "truth.npy", np.load(pair / "truth.npy").astype(np.uint16))
    other = json.loads(
        run(
            "align",
            pair / "g1",
            pair / "g2",
            "--truth",
            pair / "truth.npy",
            "--output",
            tmp_path / "b",
            "--json",
            "--quiet",
        ).stdout
    )
    np.testing.assert_array_equal(
        np.load(tmp_path / "a" / "perm.npy"), np.load(tmp_path / "b" / "perm.npy")
    )
    assert other["overlap"] == base["overlap"]
    assert other["converted"] == {
        "edge_index1": "int32->int64",
        "features1": "float64->float32",
        "truth": "uint16->int64",
    }


def test_align_of_edgeless_graphs_is_trivial(tmp_path, rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    for g in ("g1", "g2"):
        save_folder(tmp_path / g, features=x, edge_index=np.zeros((2, 0), np.int64))
    out = run(
        "align", tmp_path / "g1", tmp_path / "g2", "--output", tmp_path / "o", "--json", "--quiet"
    )
    assert json.loads(out.stdout)["n1"] == 5
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "perm.npy"), np.arange(5))
