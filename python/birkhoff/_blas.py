"""Kernel choice of the system OpenBLAS, made before the native module loads it.

Debian's OpenBLAS 0.3.21 does not recognise x86 CPUs newer than itself and then runs its
generic Prescott (SSE3) kernels: QPAlign's dense products were 3.5x slower on such a machine
(n = 1000: 0.54 s per iteration against 0.155 s with the AVX-512 kernels). OpenBLAS reads
OPENBLAS_CORETYPE once, when it loads, so the kernels matching the CPU's vector extensions are
named here unless the user chose already. The `birkhoff` command line does the same at start.
"""

from __future__ import annotations

import os
import pathlib


def name_openblas_kernels() -> None:
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        flags = next(
            line.split(":", 1)[1].split()
            for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("flags")
        )
    except (OSError, StopIteration):
        return
    if "avx512f" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif "avx2" in flags and "fma" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"
