"""PyG graphs in and out of coarsen and align, without importing torch_geometric eagerly."""

from __future__ import annotations

import numpy as np

__all__ = ["coarse_data", "is_data", "unpack"]

_MASKS = ("train_mask", "val_mask", "test_mask")


def is_data(obj) -> bool:
    """Whether ``obj`` is a PyG graph (a ``Data`` or anything with x and edge_index tensors)."""
    return hasattr(obj, "edge_index") and hasattr(obj, "x") and hasattr(obj, "num_nodes")


def _numpy(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def unpack(data, name: str):
    """(x as float32 numpy (N, D), edge_index int64 (2, E), edge_weight or None, N) of a Data.

    A graph without features (``x`` None) gets one constant feature per node, as NOPE's
    authors do for featureless graphs.
    """
    if data.edge_index is None:
        raise ValueError(f"{name}: the Data has no edge_index")
    n = int(data.num_nodes)
    if data.x is None:
        x = np.ones((n, 1), np.float32)
    else:
        x = np.ascontiguousarray(_numpy(data.x), dtype=np.float32)
        if x.ndim == 1:
            x = x.reshape(-1, 1)
    edge_index = np.ascontiguousarray(_numpy(data.edge_index), dtype=np.int64)
    weight = getattr(data, "edge_weight", None)
    return x, edge_index, None if weight is None else _numpy(weight), n


def coarse_data(data, result):
    """The coarse graph of ``result`` (a Coarsening of ``data``) as a ``Data``.

    x (K, D) float32: mean member features; edge_index (2, E_c) and edge_weight (E_c,) float
    (original edges between the two super-nodes); y (K,): the most frequent member label, for
    integer node labels of shape (N,) (ties to the smallest label); masks (K,): a super-node is
    in ``train_mask`` / ``val_mask`` / ``test_mask`` when any member is; ``assignment`` (N,):
    the super-node of every original node (for lifting predictions back).
    """
    import torch
    from torch_geometric.data import Data

    out = Data(
        x=torch.from_numpy(np.ascontiguousarray(result.features)),
        edge_index=torch.from_numpy(np.ascontiguousarray(result.edge_index)),
        num_nodes=result.num_super_nodes,
    )
    if result.edge_weight is not None:  # None when coarsened with edge_weights=False
        out.edge_weight = torch.from_numpy(result.edge_weight.astype(np.float32))
    y = getattr(data, "y", None)
    if y is not None:
        labels = _numpy(y)
        if labels.ndim == 1 and labels.shape[0] == result.num_nodes and labels.dtype.kind in "iu":
            classes = int(labels.max()) + 1 if labels.size else 0
            votes = np.zeros((result.num_super_nodes, max(classes, 1)), np.int64)
            np.add.at(votes, (result.assignment, labels), 1)
            out.y = torch.from_numpy(np.argmax(votes, axis=1))
    for mask in _MASKS:
        m = getattr(data, mask, None)
        if m is not None and m.shape[0] == result.num_nodes:
            pooled = np.zeros(result.num_super_nodes, bool)
            np.logical_or.at(pooled, result.assignment, _numpy(m).astype(bool))
            out[mask] = torch.from_numpy(pooled)
    out.assignment = torch.from_numpy(result.assignment)
    return out
