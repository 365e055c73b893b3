"""`mpirun -np K birkhoff transport` against the single-process CLI (ctest runs it).

Usage: ranks_test.py BIRKHOFF MPIEXEC. Every case is solved once without MPI and then under
mpirun with 1, 2 and 3 ranks, on clouds whose sizes no K divides; the potentials, barycentric
map, gradients and every number of the JSON report must have the same bits (docs/distributed.md).
A rank given other input must end every rank with a clear error, not a hang.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BIRKHOFF, MPIEXEC = sys.argv[1], sys.argv[2]
# Root in CI containers; more ranks than cores; no shared-memory single copy (containers lack
# the ptrace permission it needs). One thread per rank keeps the 3-rank runs fast.
ENV = dict(
    os.environ,
    OMPI_ALLOW_RUN_AS_ROOT="1",
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    OMPI_MCA_btl_vader_single_copy_mechanism="none",
    OMPI_MCA_rmaps_base_oversubscribe="1",
    OMP_NUM_THREADS="1",
)
TIMEOUT = 120  # seconds: a hang fails the test instead of stalling CI
# Fields that describe the run, not the answer.
RUN_FIELDS = {"seconds", "peak_rss_mb", "ranks"}


def mpirun(k, args):
    return [MPIEXEC, "-np", str(k), BIRKHOFF, *args]


def run(cmd):
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)


def solve(cmd, out):
    p = run(cmd)
    assert p.returncode == 0, f"{cmd} failed:\n{p.stdout}\n{p.stderr}"
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, f"{cmd}: expected one JSON line from rank 0, got:\n{p.stdout}"
    report = json.loads(lines[0])
    with np.load(out) as z:
        arrays = {k: z[k].copy() for k in z.files}
    return report, arrays


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_case(tmp, name, dtype, n, m, d, extra):
    rng = np.random.default_rng(len(name) + n)
    x = rng.normal(size=(n, d)).astype(dtype)
    y = (rng.normal(size=(m, d)) + 0.5).astype(dtype)
    a = rng.uniform(0.5, 1.5, size=n)
    a = (a / a.sum()).astype(dtype)
    np.save(tmp / "x.npy", x)
    np.save(tmp / "y.npy", y)
    np.save(tmp / "a.npy", a)
    base = ["transport", str(tmp / "x.npy"), str(tmp / "y.npy"), "--json", "--weights-a"]
    base += [str(tmp / "a.npy"), "--map", "--gradient", *extra]
    out = str(tmp / f"{name}.npz")
    ref_report, ref = solve([BIRKHOFF, *base, "--output", out], out)
    assert "ranks" not in ref_report
    assert ref_report["iterations"] > 1, ref_report
    for k in (1, 2, 3):
        report, arrays = solve(mpirun(k, [*base, "--output", out]), out)
        assert report["ranks"] == k, report
        for key in set(ref_report) | set(report):
            if key in RUN_FIELDS:
                continue
            assert report.get(key) == ref_report.get(key), (name, k, key)
        assert sorted(arrays) == sorted(ref) == ["barycentric_map", "f", "g", "grad_x", "grad_y"]
        for key, want in ref.items():
            assert same_bits(arrays[key], want), (name, k, key)
    print(f"ok {name} ({ref_report['working_dtype']}): K = 1, 2, 3 give the same bits")


def check_mismatch(tmp):
    np.save(tmp / "x3.npy", np.zeros((10, 3)))
    np.save(tmp / "x4.npy", np.zeros((10, 4)))
    np.save(tmp / "y3.npy", np.ones((7, 3)))
    np.save(tmp / "y4.npy", np.ones((7, 4)))
    common = ["--json", "--quiet"]
    # MPMD: rank 0 gets d = 3, rank 1 d = 4.
    cmd = [MPIEXEC, "-np", "1", BIRKHOFF, "transport", str(tmp / "x3.npy"), str(tmp / "y3.npy")]
    cmd += common + [":", "-np", "1", BIRKHOFF, "transport", str(tmp / "x4.npy")]
    cmd += [str(tmp / "y4.npy"), *common]
    p = run(cmd)
    assert p.returncode != 0, p
    assert "SOURCE: has shape (10, 4) on rank 1 but (10, 3) on rank 0" in p.stderr, p.stderr
    # A missing file on rank 2 of 3.
    cmd = [MPIEXEC, "-np", "2", BIRKHOFF, "transport", str(tmp / "x3.npy"), str(tmp / "y3.npy")]
    cmd += common + [":", "-np", "1", BIRKHOFF, "transport", str(tmp / "none.npy")]
    cmd += [str(tmp / "y3.npy"), *common]
    p = run(cmd)
    assert p.returncode != 0, p
    assert "SOURCE" in p.stderr and "(on rank 2)" in p.stderr, p.stderr
    print("ok mismatched input: every rank ends with the error")


def check_dead_rank(tmp):
    # Rank 1 is killed 2 s into a solve of minutes: mpirun must end rank 0 too.
    rng = np.random.default_rng(7)
    np.save(tmp / "bx.npy", rng.normal(size=(30000, 32)))
    np.save(tmp / "by.npy", rng.normal(size=(30000, 32)) + 0.1)
    args = ["transport", str(tmp / "bx.npy"), str(tmp / "by.npy"), "--blur", "0.5", "--quiet"]
    cmd = [MPIEXEC, "-np", "1", BIRKHOFF, *args, ":", "-np", "1", "timeout", "-s", "KILL", "2"]
    start = time.monotonic()
    p = run([*cmd, BIRKHOFF, *args])
    assert p.returncode != 0, p
    assert time.monotonic() - start < 60, "the surviving rank was not ended"
    print(f"ok dead rank: the run ended after {time.monotonic() - start:.1f} s")


def main():
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        check_case(tmp, "balanced-f64", np.float64, 37, 29, 3, ["--blur", "0.3"])
        check_case(tmp, "balanced-f32", np.float32, 41, 34, 2, ["--blur", "0.5"])
        check_case(tmp, "unbalanced-f64", np.float64, 31, 44, 3, ["--blur", "0.3", "--reach", "1"])
        check_case(tmp, "unbalanced-f32", np.float32, 29, 23, 4, ["--blur", "0.5", "--reach", "2"])
        check_case(tmp, "debias-f64", np.float64, 26, 35, 2, ["--blur", "0.3", "--debias"])
        geomloss = ["--blur", "0.2", "--schedule", "geomloss"]
        check_case(tmp, "geomloss-f32", np.float32, 25, 19, 3, geomloss)
        anderson = ["--blur", "0.3", "--acceleration", "anderson", "--reach", "1"]
        check_case(tmp, "anderson-unbalanced-f64", np.float64, 33, 22, 3, anderson)
        fixed = ["--blur", "0.3", "--update", "alternating", "--iterations", "200"]
        check_case(tmp, "alternating-f64", np.float64, 23, 32, 2, [*fixed, "--tol", "1e-9"])
        check_case(
            tmp,
            "debias-unbalanced-f32",
            np.float32,
            34,
            25,
            2,
            [*geomloss, "--debias", "--reach", "1"],
        )
        # Block-sparse passes split by row superblocks: 16-point blocks give 3-4 superblocks,
        # so rank 2 of 3 holds few or none.
        multiscale = ["--blur", "0.1", "--backend", "multiscale", "--block-size", "16"]
        check_case(tmp, "multiscale-f64", np.float64, 901, 777, 2, multiscale)
        check_case(tmp, "multiscale-debias-f32", np.float32, 853, 901, 2, [*multiscale, "--debias"])
        check_mismatch(tmp)
        check_dead_rank(tmp)


if __name__ == "__main__":
    main()
