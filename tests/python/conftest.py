import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

SHARED_DATA = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data():
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (needs the project's ../shared)")
    return SHARED_DATA


@pytest.fixture
def interrupted():
    """Runs `code` in a fresh interpreter, sends SIGINT `delay` seconds after it prints 'ready',
    and returns (exit code, stdout). The child is killed if it is still running after 60 s."""

    def run(code, delay=1.0):
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        try:
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        return p.returncode, out

    return run


def pytest_configure(config):
    os.environ.setdefault("OMP_NUM_THREADS", "2")
