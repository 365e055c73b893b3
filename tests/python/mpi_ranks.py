"""Run by test_distributed.py under mpirun: sinkhorn(comm=) against the single process.

Every rank solves the same problems with and without the communicator and compares the bits
of the potentials and the report's numbers; then rank 1 is given other points and every rank
must raise ValueError. Prints "ok" per rank; exits 1 on a difference.
"""

import sys

import numpy as np
from mpi4py import MPI

import birkhoff

comm = MPI.COMM_WORLD
NUMBERS = ("loss", "marginal_error", "transport_cost", "iterations")


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check(dtype, n, m, d, **kwargs):
    rng = np.random.default_rng(n * m)
    x = rng.normal(size=(n, d)).astype(dtype)
    y = (rng.normal(size=(m, d)) + 0.3).astype(dtype)
    ref = birkhoff.sinkhorn(x, y, warn=False, **kwargs)
    got = birkhoff.sinkhorn(x, y, warn=False, comm=comm, **kwargs)
    assert same(np.asarray(got.f), np.asarray(ref.f)), ("f", dtype, kwargs)
    assert same(np.asarray(got.g), np.asarray(ref.g)), ("g", dtype, kwargs)
    for key in NUMBERS:
        assert getattr(got, key) == getattr(ref, key), (key, dtype, kwargs)


def main():
    check(np.float64, 37, 29, 3, blur=0.3)
    check(np.float32, 41, 34, 2, blur=0.5, reach=1.0)
    check(np.float64, 26, 31, 2, blur=0.3, debias=True)
    x = np.zeros((10, 3 if comm.rank != 1 else 4))
    y = np.ones((7, x.shape[1]))
    try:
        birkhoff.sinkhorn(x, y, comm=comm)
    except ValueError as e:
        if comm.size > 1:
            assert "on rank 1" in str(e), e
    else:
        assert comm.size == 1, "a mismatched input on rank 1 was not refused"
    print(f"ok rank {comm.rank} of {comm.size}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"rank {comm.rank}: {e}", file=sys.stderr)
        sys.exit(1)
