#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html with warnings as errors: the guides
# (MyST Markdown), the API reference generated from the code, the example gallery (every
# example run at a small size) and the benchmark plots. -E: every page is read afresh (the
# generated ones depend on the installed package); the gallery reruns only changed examples.
# Needs the package installed (scripts/setup.sh) and the docs extra:
# pip install --no-build-isolation .[docs]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
export MPLBACKEND=Agg
# The gallery runs each example from examples/: the shared data's path is made absolute.
if [ -z "${BIRKHOFF_SHARED_DATA:-}" ] && [ -d ../shared/data ]; then
  BIRKHOFF_SHARED_DATA="$(cd ../shared/data && pwd)"
  export BIRKHOFF_SHARED_DATA
fi
export BIRKHOFF_DOCS_OUT=${BIRKHOFF_DOCS_OUT:-$PWD/docs/_build/gallery_out}
$PYTHON -m sphinx -E -W --keep-going -j 1 -b html docs docs/_build/html "$@"
echo "docs: open docs/_build/html/index.html (or: python3 -m http.server -d docs/_build/html)"
