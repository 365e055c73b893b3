"""PyTorch Geometric in and out: coarsen and align take a Data, the coarse graph is a Data."""

import warnings

import numpy as np
import pytest

import birkhoff

torch = pytest.importorskip("torch")
pyg_data = pytest.importorskip("torch_geometric.data")


def _graph(rng, n=120, d=6, classes=3):
    e = rng.integers(0, n, (2, 400))
    e = e[:, e[0] != e[1]]
    edge_index = np.concatenate([e, e[::-1]], axis=1)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = rng.integers(0, classes, n)
    train = rng.uniform(size=n) < 0.3
    data = pyg_data.Data(
        x=torch.from_numpy(x),
        edge_index=torch.from_numpy(edge_index),
        y=torch.from_numpy(y),
        train_mask=torch.from_numpy(train),
    )
    return data, x, edge_index, y, train


def test_coarsen_of_a_data_is_that_of_its_arrays(rng):
    data, x, edge_index, y, train = _graph(rng)
    r = birkhoff.coarsen(data, ratio=0.3, method="nope_star")
    ref = birkhoff.coarsen(x, edge_index, ratio=0.3, method="nope_star")
    np.testing.assert_array_equal(r.assignment, ref.assignment)
    coarse = r.data
    assert coarse.num_nodes == ref.num_super_nodes
    np.testing.assert_array_equal(coarse.x.numpy(), ref.features)
    np.testing.assert_array_equal(coarse.edge_index.numpy(), ref.edge_index)
    np.testing.assert_array_equal(coarse.edge_weight.numpy(), ref.edge_weight.astype(np.float32))
    np.testing.assert_array_equal(coarse.assignment.numpy(), ref.assignment)
    for k in range(ref.num_super_nodes):
        members = ref.assignment == k
        counts = np.bincount(y[members], minlength=3)
        assert coarse.y[k].item() == int(np.argmax(counts))
        assert coarse.train_mask[k].item() == bool(train[members].any())


def test_edge_weights_false_is_honoured(rng):
    data, *_ = _graph(rng)
    assert "edge_weight" not in birkhoff.coarsen(data, ratio=0.5, edge_weights=False).data


def test_lift_of_a_tensor_is_differentiable(rng):
    data, *_ = _graph(rng)
    r = birkhoff.coarsen(data, ratio=0.5)
    logits = torch.randn(r.num_super_nodes, 3, requires_grad=True)
    lifted = r.lift(logits)
    assert lifted.shape == (data.num_nodes, 3)
    torch.testing.assert_close(lifted, logits[torch.from_numpy(r.assignment)])
    lifted.sum().backward()
    np.testing.assert_array_equal(logits.grad[:, 0].numpy(), r.sizes.astype(np.float32))


def test_the_transform_gives_the_coarse_data(rng):
    from birkhoff.pyg import Coarsen

    data, *_ = _graph(rng)
    coarse = Coarsen(ratio=0.25, method="nope_star")(data)
    ref = birkhoff.coarsen(data, ratio=0.25, method="nope_star").data
    for key in ("x", "edge_index", "edge_weight", "y", "train_mask", "assignment"):
        torch.testing.assert_close(coarse[key], ref[key])


def test_align_of_two_data_is_that_of_their_arrays(rng):
    inst = birkhoff.datasets.correlated_wigner(n=60, d=4, rho=0.9, r=0.9, seed=0)
    graphs = []
    for adjacency, x in [(inst.a, inst.x1), (inst.b, inst.x2)]:
        i, j = np.nonzero(adjacency)
        graphs.append(
            pyg_data.Data(
                x=torch.from_numpy(x),
                edge_index=torch.from_numpy(np.stack([i, j])),
                edge_weight=torch.from_numpy(adjacency[i, j]),
                num_nodes=60,
            )
        )
    got = birkhoff.align(graphs[0], graphs[1], max_iter=50)
    want = birkhoff.align(
        graphs[0].edge_index.numpy(),
        graphs[1].edge_index.numpy(),
        inst.x1,
        inst.x2,
        edge_weight1=graphs[0].edge_weight.numpy(),
        edge_weight2=graphs[1].edge_weight.numpy(),
        num_nodes1=60,
        num_nodes2=60,
        max_iter=50,
    )
    np.testing.assert_array_equal(got.perm, want.perm)


def test_mixing_a_data_with_arrays_is_refused(rng):
    data, x, edge_index, *_ = _graph(rng)
    with pytest.raises(TypeError, match="^edge_index:"):
        birkhoff.coarsen(data, edge_index)
    with pytest.raises(TypeError, match="^x1:"):
        birkhoff.align(data, data, x, x)
    weighted = data.clone()
    weighted.edge_weight = torch.ones(edge_index.shape[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        birkhoff.coarsen(weighted, ratio=0.5)
    assert any("edge_weight is not used" in str(w.message) for w in caught)
