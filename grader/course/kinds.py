"""What the course and the reading of a learner's text know of each puzzle kind: one
:class:`KindSpec` per kind, by the name a puzzle file gives (``Puzzle(kind="helion")``).

The definition rules, the loader, ``doctor`` and the notebooks read these specs and name no kind
themselves. The grader's side of a kind is its module in :mod:`grader.judge.kinds`, the worker's
its entry in :mod:`grader.sandbox.kinds`; tests/test_kinds.py holds all three to the same names.
One module, not a folder of them: it sits at the bottom of the deepest import chain
(tests/test_layout.py caps its length).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decorator:
    """The decorator that makes a kind's kernel, and the options a learner's file may give it:
    keywords of literal values, and the config options written out as calls of the config class
    with literal keywords (a list of them where the option is plural)."""

    name: str                        # as a message writes it: helion.kernel
    origins: frozenset[str]          # its dotted names, as imports resolve them
    family: str                      # whose decorator it is, in the list a refusal gives: Helion's (kernel)
    config_name: str = ""            # the config class, as a message writes it: helion.Config
    config_origins: frozenset[str] = frozenset()
    config_options: tuple[str, ...] = ()    # the options that take config objects
    plural_options: tuple[str, ...] = ()    # of them, those that take a list of them
    config_example: str = ""                # a config written out, for the refusal's fix


@dataclass(frozen=True)
class KindSpec:
    """A puzzle kind as the course and the reading of learner text see it."""

    name: str
    on_grid: bool = False        # the grader launches it on the puzzle's grid (a kernel), else it launches itself
    decorator: Decorator | None = None  # a decorator of its own beyond Triton's
    package: str | None = None   # a package only this kind's puzzle files import
    install: str | None = None   # the command that adds it
    install_note: str = ""       # what else the install brings, where the package fails to import
    # `doctor` times the package's import (these modules) in a process of its own with this
    # environment, as a grading worker imports it, and words what it finds with the rest.
    probe_modules: str = ""
    probe_env: tuple[tuple[str, str], ...] = ()
    track: str = ""              # the track of its puzzles: the Helion track
    one_puzzle: str = ""         # a Helion puzzle
    graded_how: str = ""         # how its puzzles are graded where the package imports
    # The set-up cell of a notebook of this kind's puzzles (None: the Triton one), the names it binds,
    # and the import after which a puzzle file's own imports go in.
    notebook_setup: str | None = None
    notebook_binds: tuple[str, ...] = ()
    imports_after: str = ""


SPECS: dict[str, KindSpec] = {}


def register(spec: KindSpec) -> KindSpec:
    if spec.name in SPECS:
        raise ValueError(f"puzzle kind {spec.name!r} is registered twice")
    SPECS[spec.name] = spec
    return spec


def packages() -> dict[str, str]:
    """The packages only some kinds need, each with the command that adds it."""
    return {s.package: s.install or "" for s in SPECS.values() if s.package}


def decorators() -> tuple[Decorator, ...]:
    return tuple(s.decorator for s in SPECS.values() if s.decorator is not None)


# ---- the kinds, in the order every list of them keeps (a kernel first: the kind most puzzles are)

# A @triton.jit kernel the grader launches on the puzzle's grid.
KERNEL = register(KindSpec("kernel", on_grid=True))

# A torch.autograd.Function that launches the learner's own kernels.
FUNCTION = register(KindSpec("function"))

# A @helion.kernel that takes the spec's inputs and returns its outputs. Helion is an extra:
# without it these puzzles are unsupported, not failed. Decorating traces nothing until the
# kernel is called, so a file may be read for its PUZZLE with helion stood in for
# (grader.course.imports).
HELION_KERNEL = Decorator(
    "helion.kernel", frozenset({"helion.kernel", "helion.runtime.kernel", "helion.runtime.kernel.kernel"}),
    family="Helion's (kernel)", config_name="helion.Config",
    config_origins=frozenset({"helion.Config", "helion.runtime.config.Config", "helion.runtime.Config"}),
    config_options=("config", "configs"), plural_options=("configs",),
    config_example="helion.Config(block_sizes=[...], num_warps=...)")

# Its kernels are PyTorch functions, so no triton import; without a GPU Helion's own
# interpreter runs them (set before helion is imported), as the grader does.
HELION_SETUP = '''\
# Set-up: run this first. Without a GPU, Helion kernels run in Helion's interpreter.
import os

import torch

if not torch.cuda.is_available():
    os.environ["HELION_INTERPRET"] = "1"
import helion
import helion.language as hl
from jaxtyping import Float32, Int32
from torch import Tensor

from grader.notebook import check, course_panel, hint'''

HELION = register(KindSpec(
    "helion", decorator=HELION_KERNEL, package="helion", install="pip install -e '.[helion]' -c constraints.txt",
    install_note="it also adds `packaging`, which helion imports without declaring",
    probe_modules="helion, helion.language", probe_env=(("HELION_INTERPRET", "1"),),
    track="the Helion track", one_puzzle="a Helion puzzle",
    graded_how="graded in Helion's interpreter, and its Triton compile-checked for sm_90",
    notebook_setup=HELION_SETUP, notebook_binds=("os", "torch", "helion", "hl", "Tensor", "Float32", "Int32"),
    imports_after="import helion.language as hl\n"))
