import os
import pathlib

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


def pytest_configure(config):
    os.environ.setdefault("OMP_NUM_THREADS", "2")
