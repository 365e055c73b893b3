"""The version is written once (CMakeLists.txt's project()) and reported the same everywhere."""

import importlib.metadata
import pathlib
import re
import shutil
import subprocess

import pytest

import birkhoff

ROOT = pathlib.Path(__file__).resolve().parents[2]


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(birkhoff VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text).group(1)


def test_package_version_is_the_cmake_project_version():
    assert birkhoff.__version__ == project_version()


def test_package_version_matches_the_installed_metadata():
    assert birkhoff.__version__ == importlib.metadata.version("birkhoff")


CLI = shutil.which("birkhoff")


@pytest.mark.skipif(CLI is None, reason="the birkhoff command is not on PATH (pip install .)")
def test_cli_version_flag_prints_the_same_version():
    out = subprocess.run([CLI, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"birkhoff {birkhoff.__version__}"
