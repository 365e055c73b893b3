"""Each result class declares the fields the engine returns for it (the annotations a type
checker and the API reference read): the declarations and the native dicts must agree."""

import numpy as np

import birkhoff
from birkhoff._described import declared_fields


def _public(result):
    return {k for k in vars(result) if not k.startswith("_")}


def test_declared_fields_are_the_engine_fields(rng):
    x, y = rng.random((30, 2)), rng.random((25, 3))
    cases = [
        birkhoff.barycenter([x, y[:, :2]], blur=0.3),
        birkhoff.fixed_support_barycenter(x, [x, y[:, :2]], blur=0.3),
        birkhoff.gromov_wasserstein(x, y),
        birkhoff.sliced_wasserstein(x, y[:, :2]),
        birkhoff.graph_gromov_wasserstein(np.array([[0, 1], [1, 2]]), np.array([[0], [1]])),
    ]
    for result in cases:
        assert _public(result) == declared_fields(type(result)), type(result).__name__
    e = rng.integers(0, 30, (2, 60))
    res = birkhoff.coarsen(x.astype(np.float32), np.concatenate([e, e[::-1]], 1), ratio=0.5)
    # `data` is a class default (None) unless the input was a torch_geometric Data.
    assert _public(res) | {"data"} == declared_fields(type(res))
    assert res.data is None
