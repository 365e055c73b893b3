"""Graph (fused) Gromov-Wasserstein: parity with POT on both inner costs, PyG, errors."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

import birkhoff

ot = pytest.importorskip("ot")


def _graph(rng, n, extra):
    """A connected undirected graph: a path through all nodes plus random edges."""
    src = list(range(n - 1)) + list(rng.integers(0, n, extra))
    dst = list(range(1, n)) + list(rng.integers(0, n, extra))
    e = np.array([src, dst])
    e = e[:, e[0] != e[1]]
    adj = np.zeros((n, n))
    adj[e[0], e[1]] = adj[e[1], e[0]] = 1
    return e, adj


def _pot(c1, c2, a, b, epsilon, iterations, m=None, alpha=0.5):
    kw = dict(tol=0, log=True, numItermax=100_000, stopThr=1e-13, max_iter=iterations)
    if m is None:
        return ot.gromov.entropic_gromov_wasserstein(c1, c2, a, b, epsilon=epsilon, **kw)
    return ot.gromov.entropic_fused_gromov_wasserstein(
        m, c1, c2, a, b, epsilon=epsilon, alpha=alpha, **kw
    )


@pytest.mark.parametrize("structure", ["adjacency", "shortest_path"])
def test_matches_pot(rng, structure):
    e1, adj1 = _graph(rng, 40, 30)
    e2, adj2 = _graph(rng, 32, 25)
    a = rng.uniform(0.5, 1, 40)
    b = rng.uniform(0.5, 1, 32)
    a, b = a / a.sum(), b / b.sum()
    if structure == "adjacency":
        c1, c2, eps = adj1, adj2, 0.01
    else:
        c1 = shortest_path(csr_matrix(adj1), directed=False)
        c2 = shortest_path(csr_matrix(adj2), directed=False)
        eps = 0.5
    plan, log = _pot(c1, c2, a, b, eps, 5)
    r = birkhoff.graph_gromov_wasserstein(
        e1,
        e2,
        a=a,
        b=b,
        structure=structure,
        epsilon=eps,
        max_iter=5,
        tol=0,
        marginal_tol=1e-12,
    )
    assert r.iterations == 5
    assert r.loss == pytest.approx(log["gw_dist"], rel=1e-6)
    np.testing.assert_allclose(r.plan, plan, atol=1e-9)
    np.testing.assert_array_equal(r.matching, plan.argmax(1))
    # The plan is informative (far from a b^T), so the parity means something.
    assert np.abs(r.plan - np.outer(a, b)).sum() > 0.3


def test_fused_matches_pot_and_accepts_pyg_data(rng):
    e1, adj1 = _graph(rng, 30, 20)
    e2, adj2 = _graph(rng, 26, 20)
    x1 = rng.normal(size=(30, 5)).astype(np.float32)
    x2 = rng.normal(size=(26, 5)).astype(np.float32)
    m = ot.dist(x1.astype(np.float64), x2.astype(np.float64))
    a, b = ot.unif(30), ot.unif(26)
    plan, log = _pot(adj1, adj2, a, b, 0.05, 4, m=m, alpha=0.3)
    r = birkhoff.graph_gromov_wasserstein(
        e1, e2, x1, x2, alpha=0.3, epsilon=0.05, max_iter=4, tol=0, marginal_tol=1e-12
    )
    assert r.loss == pytest.approx(log["fgw_dist"], rel=1e-6)
    np.testing.assert_allclose(r.plan, plan, atol=1e-9)
    assert r.loss == pytest.approx(0.3 * r.gw_loss + 0.7 * r.feature_loss, rel=1e-12)
    # The dense adjacency and a PyG Data give the same answer as the edge list.
    dense = birkhoff.graph_gromov_wasserstein(
        None,
        None,
        x1,
        x2,
        adjacency1=adj1,
        adjacency2=adj2,
        alpha=0.3,
        epsilon=0.05,
        max_iter=4,
        tol=0,
        marginal_tol=1e-12,
    )
    np.testing.assert_array_equal(dense.plan, r.plan)
    torch = pytest.importorskip("torch")
    data = pytest.importorskip("torch_geometric.data")
    d1 = data.Data(x=torch.from_numpy(x1), edge_index=torch.from_numpy(e1), num_nodes=30)
    d2 = data.Data(x=torch.from_numpy(x2), edge_index=torch.from_numpy(e2), num_nodes=26)
    via_pyg = birkhoff.graph_gromov_wasserstein(
        d1, d2, alpha=0.3, epsilon=0.05, max_iter=4, tol=0, marginal_tol=1e-12
    )
    np.testing.assert_array_equal(via_pyg.plan, r.plan)


def test_recovers_a_relabelled_graph(rng):
    """GW between a graph and a relabelled copy: the matching is the relabelling."""
    n = 60
    e, _ = _graph(rng, n, 90)
    perm = rng.permutation(n)
    x1 = rng.normal(size=(n, 4)).astype(np.float32)
    r = birkhoff.graph_gromov_wasserstein(
        e, perm[e], x1, x1[np.argsort(perm)], alpha=0.5, epsilon=1e-3, max_iter=50
    )
    assert r.converged
    np.testing.assert_array_equal(r.matching, perm)
    assert r.gw_loss < 1e-6


def test_bad_inputs_are_refused(rng):
    e, _ = _graph(rng, 10, 5)
    x = np.zeros((10, 2), np.float32)
    with pytest.raises(ValueError, match="x2: fused GW needs features on both"):
        birkhoff.graph_gromov_wasserstein(e, e, x1=x)
    with pytest.raises(ValueError, match="structure: must be"):
        birkhoff.graph_gromov_wasserstein(e, e, structure="geodesic")
    with pytest.raises(ValueError, match="epsilon"):
        birkhoff.graph_gromov_wasserstein(e, e, epsilon=-1)
    with pytest.raises(ValueError, match="edge_index1"):
        birkhoff.graph_gromov_wasserstein(e + 20, e, num_nodes1=10)
    with pytest.raises(ValueError, match="b: .*equal masses|equal masses"):
        birkhoff.graph_gromov_wasserstein(e, e, b=np.ones(10))
    with pytest.raises(ValueError, match="init: must have shape"):
        birkhoff.graph_gromov_wasserstein(e, e, init=np.ones((10, 9)))
    with pytest.raises(ValueError, match="shortest paths read the edge weights as lengths"):
        birkhoff.graph_gromov_wasserstein(
            e, e, edge_weight1=-np.ones(e.shape[1]), structure="shortest_path"
        )
    with pytest.raises(ValueError, match="exceeds the limit of 100000000"):
        birkhoff.graph_gromov_wasserstein(
            np.zeros((2, 0), np.int64),
            np.zeros((2, 0), np.int64),
            num_nodes1=20_000,
            num_nodes2=10_000,
        )
    # Refused before the graphs are built (an int32-sized node count would take gigabytes).
    with pytest.raises(ValueError, match="exceeds the limit"):
        birkhoff.graph_gromov_wasserstein(e, e, num_nodes1=2**31 - 2, num_nodes2=1)
    with pytest.raises(ValueError, match="epsilon: the Sinkhorn solve lost the marginals"):
        birkhoff.graph_gromov_wasserstein(e, e, edge_weight1=np.full(e.shape[1], 1e10))
    with pytest.raises(TypeError, match="x1"):
        birkhoff.graph_gromov_wasserstein(e, e, x.astype(np.int64), x)


@pytest.mark.skipif(shutil.which("birkhoff") is None, reason="the birkhoff command is not on PATH")
def test_cli_writes_what_python_returns(rng, tmp_path):
    e1, _ = _graph(rng, 25, 20)
    e2, _ = _graph(rng, 20, 15)
    x1 = rng.normal(size=(25, 3)).astype(np.float32)
    x2 = rng.normal(size=(20, 3)).astype(np.float32)
    for k, (e, x) in enumerate([(e1, x1), (e2, x2)], 1):
        (tmp_path / f"g{k}").mkdir()
        np.save(tmp_path / f"g{k}" / "edge_index.npy", e.astype(np.int32))
        np.save(tmp_path / f"g{k}" / "features.npy", x)
    out = subprocess.run(
        ["birkhoff", "gw-graph", tmp_path / "g1", tmp_path / "g2", "--alpha", "0.4",
         "--epsilon", "0.05", "--structure", "shortest_path", "--output", tmp_path / "o.npz",
         "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    r = birkhoff.graph_gromov_wasserstein(
        e1, e2, x1, x2, alpha=0.4, epsilon=0.05, structure="shortest_path"
    )
    assert report["fused"] and report["loss"] == r.loss
    assert report["iterations"] == r.iterations
    saved = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(saved["plan"], r.plan)
    np.testing.assert_array_equal(saved["matching"], r.matching)
    plain = subprocess.run(
        ["birkhoff", "gw-graph", tmp_path / "g1", tmp_path / "g2", "--structure-only", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["loss"] == birkhoff.graph_gromov_wasserstein(e1, e2).loss
    bad = subprocess.run(
        ["birkhoff", "gw-graph", tmp_path / "g1", tmp_path / "g2", "--epsilon", "0"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "birkhoff: error: --epsilon (epsilon): must be positive" in bad.stderr
    missing = subprocess.run(
        ["birkhoff", "gw-graph", tmp_path / "nowhere", tmp_path / "g2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.startswith("birkhoff: error: G1_DIR")
