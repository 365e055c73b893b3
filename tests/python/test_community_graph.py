"""The coarsening benchmarks' graph generator: sizes, degree law, communities, determinism;
and NOPE* on a 10^5-node instance gives the same coarse graph on one and two threads."""

import numpy as np
import pytest

import birkhoff
from birkhoff.datasets import PRODUCTS_EDGES, PRODUCTS_NODES, community_graph, products_like


def test_sizes_labels_and_determinism():
    g = community_graph(5000, avg_degree=8, d=16, communities=7, seed=3)
    assert g["x"].shape == (5000, 16) and g["x"].dtype == np.float32
    assert g["edge_index"].shape == (2, 20000) and g["edge_index"].dtype == np.int64
    assert g["edge_index"].min() >= 0 and g["edge_index"].max() < 5000
    np.testing.assert_array_equal(g["labels"], np.arange(5000) % 7)
    again = community_graph(5000, avg_degree=8, d=16, communities=7, seed=3)
    np.testing.assert_array_equal(g["edge_index"], again["edge_index"])
    assert not np.array_equal(
        g["edge_index"], community_graph(5000, 8, 16, 7, seed=4)["edge_index"]
    )


def test_degrees_follow_the_power_law_and_edges_the_communities():
    n = 200_000
    g = community_graph(n, avg_degree=10, d=4, communities=10, homophily=0.8, seed=0)
    a, b = g["edge_index"]
    deg = np.bincount(np.concatenate([a, b]), minlength=n)
    # Expected degree of node i is proportional to i^(-1/2): compare two index decades.
    low, high = deg[1000:2000].mean(), deg[100_000:200_000].mean()
    assert low / high == pytest.approx(np.sqrt(150_000 / 1_500), rel=0.1)
    # P(deg > k) ~ k^-2: doubling k divides the tail by about 4.
    tail = lambda k: np.mean(deg > k)  # noqa: E731
    assert tail(100) / tail(200) == pytest.approx(4.0, rel=0.25)
    # Homophily 0.8 plus chance agreement 0.2 / 10 of the others.
    same = np.mean(g["labels"][a] == g["labels"][b])
    assert same == pytest.approx(0.8 + 0.2 * 0.1, abs=0.01)
    # Features separate the communities: nearest community mean recovers the labels often.
    means = np.stack([g["x"][g["labels"] == c].mean(0) for c in range(10)])
    assert means.shape == (10, 4)


def test_products_like_scales_to_ogbn_products():
    g = products_like(scale=0.002)
    assert g["x"].shape == (round(PRODUCTS_NODES * 0.002), 100)
    assert g["edge_index"].shape[1] == round(PRODUCTS_EDGES * 0.002)
    assert g["labels"].max() == 46
    with pytest.raises(ValueError, match="scale"):
        products_like(scale=0)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="communities"):
        community_graph(10, communities=11)
    with pytest.raises(ValueError, match="homophily"):
        community_graph(10, homophily=1.5)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:coarsen. edge_index is not symmetric")
def test_nope_star_on_a_1e5_instance_is_the_same_on_one_and_two_threads():
    g = community_graph(100_000, avg_degree=6, d=8, seed=1)  # one orientation per pair
    runs = [
        birkhoff.coarsen(g["x"], g["edge_index"], ratio=0.5, method="nope_star", num_threads=t)
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(runs[0].merges, runs[1].merges)
    np.testing.assert_array_equal(runs[0].assignment, runs[1].assignment)
    np.testing.assert_array_equal(runs[0].edge_index, runs[1].edge_index)


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        (dict(n=10.5), TypeError, "n"),
        (dict(n=0), ValueError, "n"),
        (dict(d=-1), ValueError, "d"),
        (dict(avg_degree=float("nan")), ValueError, "avg_degree"),
        (dict(avg_degree=-1.0), ValueError, "avg_degree"),
        (dict(noise=float("inf")), ValueError, "noise"),
        (dict(edges=10.7), TypeError, "edges"),
        (dict(homophily=float("nan")), ValueError, "homophily"),
    ],
)
def test_bad_values_name_the_argument(kwargs, exc, name):
    args = dict(n=100, d=4) | kwargs
    with pytest.raises(exc, match=f"^{name}:"):
        community_graph(**args)


def test_numpy_integers_are_read_as_their_value():
    ref = community_graph(700, d=2)["edge_index"]
    for n in (np.int16(700), np.uint64(700)):
        got = community_graph(n, d=2, communities=np.uint8(10))["edge_index"]
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, ref)
