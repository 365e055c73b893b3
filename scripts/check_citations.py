#!/usr/bin/env python3
"""Checks that every citation key in the sources and docs is an entry of docs/references.bib.

A citation is a bracketed key that ends in or contains a year, as ``[feydy2019]`` or
``[huang2026qpalign]``. Scans the public headers, the sources, the command-line tool, the
Python package and the Markdown docs. Prints each unknown key with its file and line, and
exits 1 if there is one.
"""

from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCANNED = ["include", "src", "cli", "python", "docs", "README.md", "CHANGELOG.md"]
SUFFIXES = {".hpp", ".cpp", ".h", ".py", ".md"}
CITATION = re.compile(r"\[([a-z][a-z_-]*(?:19|20)\d\d[a-z0-9_-]*)\]")
BIB_ENTRY = re.compile(r"^@\w+\{([^,\s]+),", re.MULTILINE)


def files():
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def main() -> int:
    keys = set(BIB_ENTRY.findall((ROOT / "docs" / "references.bib").read_text()))
    unknown = 0
    for path in files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for key in CITATION.findall(line):
                if key not in keys:
                    unknown += 1
                    where = f"{path.relative_to(ROOT)}:{number}"
                    print(f"{where}: [{key}] is not in docs/references.bib")
    if unknown:
        print(f"check_citations: {unknown} unknown key(s); known: {', '.join(sorted(keys))}")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
