"""birkhoff: optimal transport, graph coarsening and graph alignment at scale, in linear memory.

The native core is C++ (streamed, SIMD, OpenMP); this package gives it the signatures users
know from POT, GeomLoss and PyTorch Geometric, with numpy arrays in and out without copies.
"""

from ._blas import name_openblas_kernels

name_openblas_kernels()

from . import datasets  # noqa: E402 (the native module loads OpenBLAS)
from .align import Alignment, align  # noqa: E402
from .align import score as align_score  # noqa: E402
from .coarsen import Coarsening, coarsen  # noqa: E402
from .transport import SamplesLoss, SinkhornResult, sinkhorn, sinkhorn_divergence  # noqa: E402

__all__ = [
    "Alignment",
    "align",
    "align_score",
    "datasets",
    "Coarsening",
    "SamplesLoss",
    "SinkhornResult",
    "coarsen",
    "sinkhorn",
    "sinkhorn_divergence",
]
__version__ = "0.1.0"
