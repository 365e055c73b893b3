"""birkhoff.coarsen: parity with the authors' goldens, properties and bad input."""

import numpy as np
import pytest

import birkhoff


def toy():
    x = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=np.float32)
    e = np.array([[0, 0, 1, 2], [1, 2, 2, 3]], dtype=np.int64)
    return x, e


def test_toy_case_matches_the_reference():
    x, e = toy()
    r = birkhoff.coarsen(x, e, ratio=0.5, method="nope")
    assert r.merges.tolist() == [[4, 0, 1], [5, 2, 4]]
    np.testing.assert_allclose(r.keys, [0.999999995, 0.6666666644444444], rtol=1e-15)
    s = birkhoff.coarsen(x, e, ratio=0.5, method="nope_star")
    assert s.merges.tolist() == [[4, 0, 1], [5, 2, 3]]
    assert s.assignment.tolist() == [0, 0, 1, 1]
    np.testing.assert_array_equal(s.x, [[1, 0], [0, 1]])
    assert s.edge_index.tolist() == [[0, 1], [1, 0]]
    assert s.edge_weight.tolist() == [2, 2]


@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_nope_star_equals_the_goldens_and_cut_gives_the_larger_ratios(shared_data, name):
    x = np.load(shared_data / name / "features.npy")
    e = np.load(shared_data / name / "edge_index.npy")
    with pytest.warns(RuntimeWarning) if name == "citeseer" else _no_warning():
        run = birkhoff.coarsen(x, e, ratio=0.1, method="nope_star")
    for ratio in ("0.1", "0.3", "0.5"):
        gold = np.load(shared_data / name / "nope_golden" / f"nopestar_r{ratio}.npz")
        r = run.cut(float(ratio)) if ratio != "0.1" else run
        np.testing.assert_array_equal(r.merges, gold["merges"])
        np.testing.assert_array_equal(r.keys.astype(np.float32), gold["losses"].astype(np.float32))
        np.testing.assert_array_equal(r.roots, gold["final_node_ids"])


def test_scipy_adjacency_is_accepted(rng):
    import scipy.sparse as sp

    x = rng.standard_normal((30, 4)).astype(np.float32)
    e = rng.integers(0, 30, size=(2, 80))
    a = sp.coo_matrix((np.ones(80), (e[0], e[1])), shape=(30, 30)).tocsr()
    r1 = birkhoff.coarsen(x, e, 0.5, "nope", n_coarse=10)
    r2 = birkhoff.coarsen(x, a, 0.5, "nope", n_coarse=10)
    np.testing.assert_array_equal(r1.merges, r2.merges)


def test_assignment_is_onto_and_pool_lift_agree(rng):
    x = rng.standard_normal((200, 8)).astype(np.float32)
    e = rng.integers(0, 200, size=(2, 1500))
    r = birkhoff.coarsen(x, e, ratio=0.25, method="nope")
    assert r.num_super_nodes == 50 and r.reached_target
    assert np.array_equal(np.bincount(r.assignment), r.sizes)
    np.testing.assert_allclose(r.pool(x), r.x, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(r.lift(r.x), r.x[r.assignment])
    p = r.assignment_matrix(normalize=True)
    np.testing.assert_allclose(p.T @ x, r.x, rtol=1e-5, atol=1e-6)


def test_self_loops_and_duplicates_are_counted():
    x = np.zeros((3, 1), dtype=np.float32)
    e = np.array([[0, 1, 1, 2], [1, 0, 1, 2]])
    r = birkhoff.coarsen(x, e, ratio=1.0)
    assert (r.self_loops_dropped, r.duplicates_merged) == (2, 1)
    assert (r.one_way_pairs, r.two_way_pairs) == (0, 1)  # {0, 1} is listed both ways
    with pytest.warns(RuntimeWarning, match="edge_index is not symmetric: 1 node pairs"):
        r = birkhoff.coarsen(x, np.array([[0, 1, 1], [1, 0, 2]]), ratio=1.0)
    assert (r.one_way_pairs, r.two_way_pairs) == (1, 1)  # {1, 2} one way only
    with _no_warning():  # each edge once: an undirected encoding
        r = birkhoff.coarsen(x, np.array([[0, 1], [1, 2]]), ratio=1.0)
    assert (r.one_way_pairs, r.two_way_pairs) == (2, 0)


def test_trivial_graphs():
    r = birkhoff.coarsen(np.ones((1, 3), np.float32), np.zeros((2, 0), np.int64))
    assert r.num_super_nodes == 1 and r.reached_target
    r0 = birkhoff.coarsen(np.ones((0, 3), np.float32), np.zeros((2, 0), np.int64))
    assert r0.num_super_nodes == 0


@pytest.mark.parametrize(
    "x, e, kwargs, error, word",
    [
        (np.ones((3, 2), np.float32), np.array([[0, 1], [1, 3]]), {}, ValueError, "edge_index"),
        (np.ones((3, 2), np.float32), np.array([[0, -1], [1, 2]]), {}, ValueError, "edge_index"),
        (np.ones((3, 2), np.float32), np.array([[0, 1, 2]]), {}, ValueError, "edge_index"),
        (np.ones((3, 2), np.float32), np.array([[0.0], [1.0]]), {}, TypeError, "edge_index"),
        (np.array([[np.nan, 1]] * 3, np.float32), np.array([[0], [1]]), {}, ValueError, "x"),
        (np.ones((3, 2), np.float64), np.array([[0], [1]]), {}, TypeError, "x"),
        (np.ones((3, 2), np.float32), np.array([[0], [1]]), {"ratio": 0.0}, ValueError, "ratio"),
        (np.ones((3, 2), np.float32), np.array([[0], [1]]), {"ratio": 1.5}, ValueError, "ratio"),
        (np.ones((3, 2), np.float32), np.array([[0], [1]]), {"method": "x"}, ValueError, "method"),
    ],
)
def test_bad_input_raises_naming_the_argument(x, e, kwargs, error, word):
    with pytest.raises(error, match=word):
        birkhoff.coarsen(x, e, **kwargs)


class _no_warning:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *args):
        return self._cm.__exit__(*args)


def test_ctrl_c_interrupts_a_long_run_on_all_threads(interrupted):
    # NOPE to 0.01 on 2e5 nodes with random edges takes minutes on two threads, so the signal
    # arrives during the merges, while the helper threads take part in them.
    code = (
        "import sys, numpy as np, birkhoff\n"
        "rng = np.random.default_rng(0)\n"
        "n = 200000\n"
        "x = rng.standard_normal((n, 64), dtype=np.float32)\n"
        "e = rng.integers(0, n, size=(2, 5 * n))\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    birkhoff.coarsen(x, e, ratio=0.01, method='nope', num_threads=2)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(7)\n"
    )
    returncode, out = interrupted(code)
    assert returncode == 7 and "interrupted" in out
