import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

# The project's shared data (datasets, goldens): $BIRKHOFF_SHARED_DATA, else ../shared/data
# beside the checkout. Tests that need it are skipped without it, or fail under
# BIRKHOFF_REQUIRE_SHARED=1 (CI, which has it).
SHARED_DATA = pathlib.Path(
    os.environ.get("BIRKHOFF_SHARED_DATA")
    or pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data"
)
REQUIRE_SHARED = os.environ.get("BIRKHOFF_REQUIRE_SHARED") == "1"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def shared_data():
    if not SHARED_DATA.is_dir():
        message = f"shared data not found at {SHARED_DATA} (set BIRKHOFF_SHARED_DATA)"
        if REQUIRE_SHARED:
            pytest.fail(message + " and BIRKHOFF_REQUIRE_SHARED=1")
        pytest.skip(message)
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
