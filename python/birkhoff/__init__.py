"""birkhoff: optimal transport, graph coarsening and graph alignment at scale, in linear memory.

The native core is C++ (streamed, SIMD, OpenMP); this package gives it the signatures users
know from POT, GeomLoss and PyTorch Geometric, with numpy arrays in and out without copies.
"""

from . import datasets
from .align import Alignment, align
from .coarsen import Coarsening, coarsen
from .transport import SamplesLoss, SinkhornResult, sinkhorn, sinkhorn_divergence

__all__ = [
    "Alignment",
    "align",
    "datasets",
    "Coarsening",
    "SamplesLoss",
    "SinkhornResult",
    "coarsen",
    "sinkhorn",
    "sinkhorn_divergence",
]
__version__ = "0.1.0"
