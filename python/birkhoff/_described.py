"""The one result style of the problems whose fields come from the engine's description.

The native call returns a dict of the described fields (the CLI's JSON keys and file names,
birkhoff/core/describe.hpp); each result class declares those fields as annotations, which a
type checker and the API reference read, and this base sets them. A test holds the
declarations to the dicts the engine returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def declared_fields(cls: type) -> set[str]:
    """The public annotated attributes of ``cls`` and its bases."""
    names: set[str] = set()
    for klass in cls.__mro__:
        names |= {n for n in vars(klass).get("__annotations__", {}) if not n.startswith("_")}
    return names


class DescribedResult:
    """Base of a result built from the engine's described fields (a dict)."""

    def __init__(self, fields: Mapping[str, Any]):
        for name, value in fields.items():
            setattr(self, name, value)
