"""BIRKHOFF_REQUIRE_SHARED=1 turns a test's skip for missing shared data into a failure.

Each case runs pytest in a child process on a test that needs the shared data, with
BIRKHOFF_SHARED_DATA pointed at a folder that does not exist.
"""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
NEEDS_SHARED_DATA = f"{HERE / 'test_align.py'}::test_douban_restricted_loader"


def run_without_shared_data(tmp_path, require):
    env = dict(os.environ)
    env["BIRKHOFF_SHARED_DATA"] = str(tmp_path / "missing")
    env["BIRKHOFF_REQUIRE_SHARED"] = require
    cmd = [sys.executable, "-m", "pytest", "-q", "-rsfE", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*cmd, NEEDS_SHARED_DATA], env=env, cwd=tmp_path, capture_output=True, text=True
    )


@pytest.mark.parametrize("require", ["", "0"], ids=["unset", "zero"])
def test_missing_shared_data_skips_when_not_required(tmp_path, require):
    r = run_without_shared_data(tmp_path, require)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skipped" in r.stdout and "shared data not found" in r.stdout


def test_missing_shared_data_fails_when_required(tmp_path):
    r = run_without_shared_data(tmp_path, "1")
    assert r.returncode == 1, r.stdout + r.stderr
    # pytest.fail in the fixture: the test errors at setup, which fails the run.
    assert "1 error" in r.stdout and "BIRKHOFF_REQUIRE_SHARED=1" in r.stdout
