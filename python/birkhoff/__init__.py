"""birkhoff: optimal transport, graph coarsening and graph alignment at scale, in linear memory.

The native core is C++ (streamed, SIMD, OpenMP); this package gives it the signatures users
know from POT, GeomLoss and PyTorch Geometric, with numpy arrays in and out without copies.
"""

from ._blas import name_openblas_kernels

name_openblas_kernels()

from . import _birkhoff, datasets  # noqa: E402 (the native module loads OpenBLAS)
from .align import Alignment, align  # noqa: E402
from .align import score as align_score  # noqa: E402
from .barycenter import (  # noqa: E402
    BarycenterResult,
    FixedBarycenterResult,
    barycenter,
    fixed_support_barycenter,
)
from .c_transform import CTransformResult, c_transform  # noqa: E402
from .coarsen import Coarsening, coarsen  # noqa: E402
from .gromov import (  # noqa: E402
    GraphGromovResult,
    GromovResult,
    fused_gromov_wasserstein,
    graph_gromov_wasserstein,
    gromov_wasserstein,
)
from .sliced import (  # noqa: E402
    SlicedResult,
    max_sliced_wasserstein,
    sliced_wasserstein,
)
from .transport import (  # noqa: E402
    SamplesLoss,
    SinkhornResult,
    partial_sinkhorn,
    sinkhorn,
    sinkhorn_divergence,
)

__all__ = [
    "Alignment",
    "BarycenterResult",
    "CTransformResult",
    "align",
    "align_score",
    "barycenter",
    "c_transform",
    "datasets",
    "Coarsening",
    "FixedBarycenterResult",
    "GraphGromovResult",
    "GromovResult",
    "SamplesLoss",
    "SinkhornResult",
    "SlicedResult",
    "coarsen",
    "fixed_support_barycenter",
    "fused_gromov_wasserstein",
    "graph_gromov_wasserstein",
    "gromov_wasserstein",
    "max_sliced_wasserstein",
    "partial_sinkhorn",
    "sinkhorn",
    "sinkhorn_divergence",
    "sliced_wasserstein",
]
#: The version of the C++ core this package was built with (CMakeLists.txt's project()).
__version__ = _birkhoff.__version__


def __getattr__(name):
    # birkhoff.torch is imported on first use only, so that `import birkhoff` works without
    # PyTorch (and stays fast with it).
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'birkhoff' has no attribute {name!r}")
