"""PyTorch Geometric in and out: graphs as ``torch_geometric.data.Data``.

``birkhoff.coarsen(data, ratio=...)`` and ``birkhoff.align(data1, data2, ...)`` accept a
``Data`` (its ``x``, ``edge_index``, ``edge_weight``, ``y`` and masks) as well as arrays; a
coarsening of a ``Data`` carries the coarse graph as a ``Data`` (``result.data``: mean
features, edge weights, majority labels, pooled masks, ``assignment``) and lifts coarse-graph
tensors back to the original nodes (``result.lift``, differentiable). :class:`Coarsen` is the
same as a ``torch_geometric`` transform. torch_geometric is an optional dependency
(``pip install birkhoff[pyg]``); the numpy API does not need it.
"""

from __future__ import annotations

try:
    from torch_geometric.transforms import BaseTransform
except ImportError as e:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "birkhoff.pyg needs PyTorch Geometric, which is not installed: pip install birkhoff[pyg]"
    ) from e

from ._pyg_inputs import coarse_data

__all__ = ["Coarsen", "coarse_data"]


class Coarsen(BaseTransform):
    """A ``torch_geometric`` transform: ``Coarsen(ratio=0.1, method="nope_star")(data)``.

    Returns the coarse ``Data`` of :func:`coarse_data`, whose ``assignment`` (N,) lifts
    predictions back: ``pred[coarse.assignment]``. Keyword arguments are
    :func:`birkhoff.coarsen`'s.

    Source: [bai2026nope].
    """

    def __init__(self, ratio: float = 0.5, method: str = "nope", **kwargs):
        self.ratio, self.method, self.kwargs = ratio, method, kwargs

    def forward(self, data):
        """The coarse graph of ``data`` (a ``Data``)."""
        from .coarsen import coarsen

        return coarsen(data, ratio=self.ratio, method=self.method, **self.kwargs).data

    def __repr__(self):
        return f"Coarsen(ratio={self.ratio}, method={self.method!r})"
