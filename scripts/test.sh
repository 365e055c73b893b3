#!/usr/bin/env bash
# Runs every test: the C++ suite (Release, warnings as errors), the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the Python suite against the installed
# package. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-python3}

cmake --preset release-tests >/dev/null
cmake --build --preset release-tests -j "$JOBS"
ctest --preset release-tests

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --preset asan

$PYTHON -m pytest tests/python
