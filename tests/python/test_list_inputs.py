"""Every array argument of the Python API takes a list, converted in the one way that
birkhoff._arrays documents, and a wrong dtype is refused naming the argument that is wrong."""

import re

import numpy as np
import pytest

import birkhoff
from birkhoff import datasets


def _cloud(rng, n, d=2, dtype=np.float64):
    return rng.random((n, d)).astype(dtype)


def _tolist(kwargs, name):
    out = dict(kwargs)
    out[name] = np.asarray(kwargs[name]).tolist()
    return out


# --- transport ----------------------------------------------------------------------------


def _transport_inputs(rng):
    x, y = _cloud(rng, 30), _cloud(rng, 20)
    a, b = rng.random(30) + 0.5, rng.random(20) + 0.5
    return dict(x=x, y=y, a=a / a.sum(), b=b / b.sum())


TRANSPORT_CALLS = {
    "sinkhorn": lambda kw: birkhoff.sinkhorn(**kw, blur=0.3).loss,
    "sinkhorn_divergence": lambda kw: birkhoff.sinkhorn_divergence(**kw, blur=0.3).loss,
    "partial_sinkhorn": lambda kw: (
        birkhoff.partial_sinkhorn(**kw, mass_fraction=0.5, blur=0.3).loss
    ),
    "SamplesLoss": lambda kw: birkhoff.SamplesLoss(blur=0.3)(kw["a"], kw["x"], kw["b"], kw["y"]),
}


@pytest.mark.parametrize("call", sorted(TRANSPORT_CALLS))
@pytest.mark.parametrize("arg", ["x", "y", "a", "b"])
def test_transport_list_argument_equals_array(rng, call, arg):
    kw = _transport_inputs(rng)
    expected = TRANSPORT_CALLS[call](kw)
    assert TRANSPORT_CALLS[call](_tolist(kw, arg)) == expected


@pytest.mark.parametrize("arg", ["x", "y"])
def test_a_list_cloud_takes_the_other_clouds_dtype(rng, arg):
    kw = _transport_inputs(rng)
    kw["x"], kw["y"] = kw["x"].astype(np.float32), kw["y"].astype(np.float32)
    r = birkhoff.sinkhorn(**_tolist(kw, arg), blur=0.3)
    assert r.f.dtype == np.float32 and r.loss == birkhoff.sinkhorn(**kw, blur=0.3).loss


@pytest.mark.parametrize("method", ["apply", "apply_transpose"])
def test_plan_operand_list_is_converted_to_the_problems_dtype(rng, method):
    kw = _transport_inputs(rng)
    kw["x"], kw["y"] = kw["x"].astype(np.float32), kw["y"].astype(np.float32)
    r = birkhoff.sinkhorn(kw["x"], kw["y"], blur=0.3)
    v = rng.random(20 if method == "apply" else 30).astype(np.float32)
    np.testing.assert_array_equal(getattr(r, method)(v.tolist()), getattr(r, method)(v))


# --- coarsen ------------------------------------------------------------------------------


def _graph(rng, n=40, e=80):
    pairs = rng.integers(0, n, (2, e))
    return rng.random((n, 3), dtype=np.float32), np.concatenate([pairs, pairs[::-1]], axis=1)


@pytest.mark.parametrize("arg", ["x", "edge_index"])
def test_coarsen_list_argument_equals_array(rng, arg):
    x, edge_index = _graph(rng)
    kw = dict(x=x, edge_index=edge_index)
    ref = birkhoff.coarsen(**kw, ratio=0.5, method="nope_star")
    res = birkhoff.coarsen(**_tolist(kw, arg), ratio=0.5, method="nope_star")
    np.testing.assert_array_equal(res.merges, ref.merges)
    np.testing.assert_array_equal(res.x, ref.x)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64])
def test_coarsen_edge_index_of_any_integer_dtype(rng, dtype):
    x, edge_index = _graph(rng)
    ref = birkhoff.coarsen(x, edge_index, ratio=0.5)
    res = birkhoff.coarsen(x, edge_index.astype(dtype), ratio=0.5)
    np.testing.assert_array_equal(res.merges, ref.merges)


@pytest.mark.parametrize("method", ["lift", "pool"])
def test_coarsening_values_list_equals_array(rng, method):
    x, edge_index = _graph(rng)
    res = birkhoff.coarsen(x, edge_index, ratio=0.5)
    rows = res.num_super_nodes if method == "lift" else res.assignment.shape[0]
    values = rng.random((rows, 2))
    np.testing.assert_array_equal(
        getattr(res, method)(values.tolist()), getattr(res, method)(values)
    )


# --- align --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair():
    inst = datasets.correlated_wigner(n=30, d=4, rho=0.9, r=0.9, seed=3)
    rng = np.random.default_rng(7)
    a = (inst.a > 0.5).astype(np.float64)
    b = (inst.b > 0.5).astype(np.float64)
    e1, e2 = np.stack(np.nonzero(np.triu(a))), np.stack(np.nonzero(np.triu(b)))  # each edge once
    truth = np.stack([np.arange(30), inst.perm], axis=1)
    return dict(
        edge_index1=e1,
        edge_index2=e2,
        x1=inst.x1,
        x2=inst.x2,
        seeds=truth[:3],
        truth=truth,
        edge_weight1=rng.random(e1.shape[1]) + 0.5,
        edge_weight2=rng.random(e2.shape[1]) + 0.5,
        adjacency1=inst.a,
        adjacency2=inst.b,
    )


ALIGN_EDGE_ARGS = ["edge_index1", "edge_index2", "x1", "x2", "seeds", "truth"]
ALIGN_EDGE_ARGS += ["edge_weight1", "edge_weight2"]


def _align(kw):
    return birkhoff.align(**kw, max_iter=30)


@pytest.mark.parametrize("arg", ALIGN_EDGE_ARGS + ["adjacency1", "adjacency2"])
def test_align_list_argument_equals_array(pair, arg):
    if arg.startswith("adjacency"):
        kw = {k: pair[k] for k in ("adjacency1", "adjacency2", "x1", "x2", "truth")}
    else:
        kw = {k: pair[k] for k in ALIGN_EDGE_ARGS}
    ref = _align(kw)
    res = _align(_tolist(kw, arg))
    np.testing.assert_array_equal(res.perm, ref.perm)
    np.testing.assert_array_equal(res.objective, ref.objective)
    assert res.metrics == ref.metrics


@pytest.mark.parametrize("arg", ["perm", "soft", "topk", "truth", "seeds"])
def test_score_list_argument_equals_array(pair, arg):
    res = birkhoff.align(**{k: pair[k] for k in ALIGN_EDGE_ARGS}, max_iter=30, return_soft=True)
    kw = dict(perm=res.perm, soft=res.soft, topk=res.topk, truth=pair["truth"], seeds=pair["seeds"])

    def score(kw, scores):
        return birkhoff.align_score(kw["perm"], kw[scores], kw["truth"], kw["seeds"])

    for scores in ("soft", "topk"):
        assert score(_tolist(kw, arg), scores) == score(kw, scores)


# --- errors name the argument that is wrong -----------------------------------------------


@pytest.fixture(scope="module")
def ctx(pair):
    rng = np.random.default_rng(0)
    x, edge_index = _graph(rng, 10, 10)
    x32 = rng.random((6, 2), dtype=np.float32)
    return dict(
        pair=pair,
        kw={k: pair[k] for k in ALIGN_EDGE_ARGS},
        x=x,
        edge_index=edge_index,
        x32=x32,
        coarse=birkhoff.coarsen(x, edge_index, ratio=0.5),
        r=birkhoff.sinkhorn(x32, x32, blur=0.5),
    )


def _align_with(c, name, value):
    return _align({**c["kw"], name: value})


BAD = {
    # transport: a list x takes y's dtype, so only the argument that is wrong is named
    "sinkhorn x float16": ("x", lambda c: birkhoff.sinkhorn(c["x32"].astype(np.float16), c["x32"])),
    "sinkhorn y float16": ("y", lambda c: birkhoff.sinkhorn(c["x32"], c["x32"].astype(np.float16))),
    "sinkhorn x list, y bool": (
        "y",
        lambda c: birkhoff.sinkhorn(c["x32"].tolist(), np.zeros((4, 2), bool)),
    ),
    "sinkhorn x ragged": ("x", lambda c: birkhoff.sinkhorn([[0.0, 1.0], [2.0]], c["x32"])),
    "sinkhorn a strings": ("a", lambda c: birkhoff.sinkhorn(c["x32"], c["x32"], a=["a"] * 6)),
    "sinkhorn b dict": ("b", lambda c: birkhoff.sinkhorn(c["x32"], c["x32"], b={"b": 1})),
    "apply v float64": ("v", lambda c: c["r"].apply(np.ones(6))),
    "apply_transpose u strings": ("u", lambda c: c["r"].apply_transpose(["u"] * 6)),
    # coarsen
    "coarsen x float64": (
        "x",
        lambda c: birkhoff.coarsen(c["x"].astype(np.float64), c["edge_index"]),
    ),
    "coarsen x None": ("x", lambda c: birkhoff.coarsen(None, c["edge_index"])),
    "coarsen x strings": ("x", lambda c: birkhoff.coarsen([["a", "b"]] * 10, c["edge_index"])),
    "coarsen edge_index float": (
        "edge_index",
        lambda c: birkhoff.coarsen(c["x"], c["edge_index"] * 1.0),
    ),
    "coarsen edge_index float list": (
        "edge_index",
        lambda c: birkhoff.coarsen(c["x"], (c["edge_index"] * 1.0).tolist()),
    ),
    "coarsen edge_index bool": (
        "edge_index",
        lambda c: birkhoff.coarsen(c["x"], c["edge_index"] > 0),
    ),
    "coarsen edge_index 1-D": ("edge_index", lambda c: birkhoff.coarsen(c["x"], [0, 1, 2])),
    "lift scalar": ("values", lambda c: c["coarse"].lift(3.0)),
    "pool strings": ("values", lambda c: c["coarse"].pool(["v"] * 10)),
    # align
    **{
        f"align {name} float": (
            name,
            lambda c, name=name: _align_with(c, name, np.asarray(c["kw"][name], float) + 0.5),
        )
        for name in ("edge_index1", "edge_index2", "seeds", "truth")
    },
    **{
        f"align {name} float64": (
            name,
            lambda c, name=name: _align_with(c, name, c["kw"][name].astype(np.float64)),
        )
        for name in ("x1", "x2")
    },
    "align edge_weight1 strings": (
        "edge_weight1",
        lambda c: _align_with(c, "edge_weight1", ["w"] * c["kw"]["edge_index1"].shape[1]),
    ),
    "align adjacency2 ragged": (
        "adjacency2",
        lambda c: birkhoff.align(
            adjacency1=c["pair"]["adjacency1"], adjacency2=[[0.0], [1.0, 0.0]]
        ),
    ),
    "align num_nodes1 float": ("num_nodes1", lambda c: _align_with(c, "num_nodes1", 30.5)),
    "score perm float": (
        "perm",
        lambda c: birkhoff.align_score(np.zeros(30), np.zeros((30, 30)), c["pair"]["truth"]),
    ),
    "score soft_or_topk strings": (
        "soft_or_topk",
        lambda c: birkhoff.align_score(np.zeros(30, int), [["s"] * 30] * 30, c["pair"]["truth"]),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_wrong_dtype_names_the_argument(ctx, case):
    name, call = BAD[case]
    with pytest.raises((TypeError, ValueError), match=rf"^{re.escape(name)}: "):
        call(ctx)


# --- birkhoff.torch: weights and labels may be lists; points must be tensors ---------------


def test_torch_weight_and_label_lists_equal_tensors(rng):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x, y = torch.from_numpy(_cloud(rng, 12)), torch.from_numpy(_cloud(rng, 10))
    a, b = (
        torch.full((12,), 1 / 12, dtype=torch.float64),
        torch.full((10,), 0.1, dtype=torch.float64),
    )
    xl, yl = torch.from_numpy(rng.integers(0, 3, 12)), torch.from_numpy(rng.integers(0, 3, 10))
    cost = torch.from_numpy(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]))
    kw = dict(blur=0.3, x_labels=xl, y_labels=yl, label_cost=cost)
    ref = bt.sinkhorn(x, y, a, b, **kw)
    for name in ("x_labels", "y_labels", "label_cost"):
        r = bt.sinkhorn(x, y, a, b, **{**kw, name: kw[name].tolist()})
        assert float(r.loss) == float(ref.loss), name
    r = bt.sinkhorn(x, y, a.tolist(), b.numpy(), **kw)
    assert float(r.loss) == float(ref.loss)


@pytest.mark.parametrize(
    "name, change",
    [
        ("x", lambda kw: {**kw, "x": kw["x"].tolist()}),
        ("x_labels", lambda kw: {**kw, "x_labels": [0.5] * 12}),
        ("y_labels", lambda kw: {**kw, "y_labels": None}),
        ("a", lambda kw: {**kw, "a": ["a"] * 12}),
    ],
)
def test_torch_wrong_input_names_the_argument(rng, name, change):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    kw = dict(
        x=torch.from_numpy(_cloud(rng, 12)),
        y=torch.from_numpy(_cloud(rng, 10)),
        x_labels=[0] * 12,
        y_labels=[0] * 10,
        label_cost=[[0.0]],
    )
    with pytest.raises((TypeError, ValueError), match=rf"^{name}: "):
        bt.sinkhorn(**change(kw), blur=0.3)


@pytest.mark.parametrize("name", ["x", "y", "v", "u"])
def test_torch_points_and_operands_must_be_tensors(rng, name):
    torch = pytest.importorskip("torch")
    import birkhoff.torch as bt

    x, y = torch.from_numpy(_cloud(rng, 12)), torch.from_numpy(_cloud(rng, 10))
    with pytest.raises(TypeError, match=rf"^{name}: expected a torch.Tensor"):
        if name in ("x", "y"):
            bt.SamplesLoss(blur=0.3)(*((x.tolist(), y) if name == "x" else (x, y.tolist())))
        else:
            r = bt.sinkhorn(x, y, blur=0.3)
            if name == "v":
                r.apply(np.ones(10).tolist())
            else:
                r.apply_transpose(np.ones(12).tolist())


def test_an_empty_edge_list_is_an_empty_id_array(rng):
    x = rng.random((5, 2), dtype=np.float32)
    with pytest.warns(RuntimeWarning, match="not reachable"):
        res = birkhoff.coarsen(x, [[], []], ratio=0.6)
    with pytest.warns(RuntimeWarning, match="not reachable"):
        ref = birkhoff.coarsen(x, np.zeros((2, 0), np.int64), ratio=0.6)
    np.testing.assert_array_equal(res.assignment, ref.assignment)
    assert res.num_super_nodes == 5


def test_a_cpu_tensor_numpy_cannot_hold_says_how_to_convert_it(rng):
    torch = pytest.importorskip("torch")
    x = torch.tensor(rng.random((20, 2)), dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"^x: .*convert it, x\.float\(\)$"):
        birkhoff.sinkhorn(x, rng.random((15, 2)), blur=0.5)
