"""Sphinx configuration of birkhoff's documentation site (built by scripts/docs.sh)."""

import pathlib
import sys

import birkhoff

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "birkhoff"
author = "the birkhoff developers"
copyright = "2026, the birkhoff developers"  # noqa: A001 (Sphinx's name)
release = birkhoff.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "birkhoff_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb"]

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
# Classes list their own members only (SamplesLoss is an nn.Module: not its 50 inherited ones).
templates_path = ["_templates"]
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"  # the docstrings give shapes, dtypes and units
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Attributes:" sections as fields of the class, not a second description of each property.
napoleon_use_ivar = True

html_theme = "furo"
html_title = f"birkhoff {release}"

# The gallery runs every example of examples/ at a small size (birkhoff_docs.SMALL_ARGS), so
# the whole build stays within minutes on a 2-core machine; each example's figures are shown.
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"(__init__|_common)\.py$",
    "reset_argv": "birkhoff_docs.small_argv",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "plot_gallery": "True",
}
