"""birkhoff.sinkhorn(..., comm=MPI.COMM_WORLD) under mpirun -np 1, 2, 3 (mpi_ranks.py)."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
MPIRUN = shutil.which("mpirun")
SCRIPT = pathlib.Path(__file__).with_name("mpi_ranks.py")
# Root in CI containers, more ranks than cores, no shared-memory single copy (it needs ptrace).
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMP_NUM_THREADS="1",
)


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun (scripts/setup.sh installs Open MPI)")
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_ranks_give_the_single_process_bits(ranks):
    p = subprocess.run(
        [MPIRUN, "-np", str(ranks), sys.executable, str(SCRIPT)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    # Every rank says ok (mpirun may interleave their lines).
    for r in range(ranks):
        assert f"ok rank {r} of {ranks}" in p.stdout, p.stdout
