"""A registry of kinds as its wings: each kind is declared in a module of its own (its wing), which
the registry names, one line per kind, and imports the first time that kind, or every kind, is asked
for; as otter-grader's runner factory imports a language's runner only once that language is asked for.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping


class Wings(Mapping):
    """Kind name -> what its wing declares (the module's ``attribute``), from ``wings``: kind name ->
    the wing's module. ``wings`` is read at each ask, so that a test may add a wing to it."""

    def __init__(self, wings: dict[str, str], attribute: str) -> None:
        self.wings, self.attribute = wings, attribute

    def __getitem__(self, name: str):
        declared = getattr(importlib.import_module(self.wings[name]), self.attribute)
        if declared.name != name:
            raise ValueError(f"{self.wings[name]}.{self.attribute} declares kind {declared.name!r}, "
                             f"listed as {name!r}")
        return declared

    def __iter__(self) -> Iterator[str]:
        return iter(self.wings)

    def __len__(self) -> int:
        return len(self.wings)
