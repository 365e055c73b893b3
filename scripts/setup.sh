#!/usr/bin/env bash
# Installs everything birkhoff needs on Debian 12 (apt packages, Python build tools, and the
# checkers CI runs: clang-format, ruff) and then the package itself (`pip install .`), which also
# puts the `birkhoff` command on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libhwy-dev libcli11-dev libfmt-dev nlohmann-json3-dev libspng-dev libzip-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  libopenblas-dev   # BLAS GEMMs of the QPAlign solver
  libopenmpi-dev openmpi-bin  # birkhoff::distributed, mpirun -np K birkhoff transport
  python3-skimage   # ships the sample photos of the colour-transfer demo
  clang-format      # the format check of .ci/run (.clang-format)
  clang libclang-rt-14-dev libomp-14-dev  # libFuzzer targets of tests/fuzz (tests/fuzz/run.sh)
  chromium chromium-driver  # the browser test of the documentation site (tests/docs)
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1
$PYTHON -m pip install -q "scikit-build-core>=0.8" "nanobind>=2.0" ninja numpy scipy pot scikit-learn pytest hypothesis \
  "ruff>=0.17,<0.18" mypy \
  torch geomloss mpi4py torch_geometric \
  "sphinx>=8" "myst-parser>=4" furo "sphinx-gallery>=0.17" matplotlib "selenium>=4.10"
# ruff: a minor release may change its formatting; torch: birkhoff.torch; torch_geometric:
# birkhoff.pyg; sphinx ... selenium: the documentation site (scripts/docs.sh, tests/docs)
$PYTHON -m pip install -q --no-build-isolation .
command -v birkhoff >/dev/null || echo "setup: note: add $($PYTHON -c 'import sysconfig; print(sysconfig.get_path("scripts"))') to PATH for the birkhoff command"
