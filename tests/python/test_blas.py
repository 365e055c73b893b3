"""The OpenBLAS kernel choice made before the native module loads (birkhoff._blas)."""

import os
import pathlib

import pytest

from birkhoff._blas import name_openblas_kernels


def test_a_users_choice_is_kept(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Zen")
    name_openblas_kernels()
    assert os.environ["OPENBLAS_CORETYPE"] == "Zen"


def test_kernels_follow_the_cpu_flags(monkeypatch):
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        pytest.skip("no /proc/cpuinfo on this platform: the choice is left to OpenBLAS")
    flags = next(
        (
            line.split(":", 1)[1].split()
            for line in cpuinfo.read_text().splitlines()
            if line.startswith("flags")
        ),
        [],
    )
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    name_openblas_kernels()
    expected = (
        "SkylakeX"
        if "avx512f" in flags
        else "Haswell"
        if "avx2" in flags and "fma" in flags
        else None
    )
    assert os.environ.get("OPENBLAS_CORETYPE") == expected
