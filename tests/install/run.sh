#!/usr/bin/env bash
# Installs birkhoff into a temporary prefix, then configures, builds and runs the project in
# this folder against it (find_package(birkhoff), birkhoff::birkhoff), as a user would.
#
#   tests/install/run.sh [BUILD_DIR]
#
# With BUILD_DIR: installs that already built tree (ctest passes its own). Without: configures
# and builds a fresh Release tree of the libraries first, with $BIRKHOFF_CMAKE_ARGS added
# (e.g. -DBUILD_SHARED_LIBS=ON).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/birkhoff-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
JOBS=${JOBS:-2}

if [ $# -ge 1 ]; then
  build=$1
else
  build=$work/build
  # shellcheck disable=SC2086  # BIRKHOFF_CMAKE_ARGS is a list of arguments
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBIRKHOFF_BUILD_CLI=OFF \
    ${BIRKHOFF_CMAKE_ARGS:-} >/dev/null
  cmake --build "$build" -j "$JOBS"
fi
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/birkhoff/birkhoffConfig.cmake" \
  || test -f "$work/prefix/lib64/cmake/birkhoff/birkhoffConfig.cmake"

# Only the prefix is given: nothing of the source or build tree may be needed.
cmake -S "$here" -B "$work/app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/app"
"$work/app/app"
