"""A Helion puzzle, to the course: a ``@helion.kernel`` that takes the spec's inputs and returns its
outputs. Helion is an extra: without it these puzzles are unsupported, not failed. Decorating traces
nothing until the kernel is called, so a file may be read for its PUZZLE with helion stood in for
(:func:`grader.course.imports.standing_in`)."""
from __future__ import annotations

from grader.course.kinds.kind import Decorator, KindSpec
from grader.course.tracks import Track

KERNEL = Decorator(
    "helion.kernel", frozenset({"helion.kernel", "helion.runtime.kernel", "helion.runtime.kernel.kernel"}),
    family="Helion's (kernel)", config_name="helion.Config",
    config_origins=frozenset({"helion.Config", "helion.runtime.config.Config", "helion.runtime.Config"}),
    config_options=("config", "configs"), plural_options=("configs",),
    config_example="helion.Config(block_sizes=[...], num_warps=...)")

# Its kernels are PyTorch functions, so no triton import; without a GPU Helion's own
# interpreter runs them (set before helion is imported), as the grader does.
SETUP = '''\
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

SPEC = KindSpec(
    "helion", decorator=KERNEL, package="helion", install="pip install -e '.[helion]' -c constraints.txt",
    install_note="it also adds `packaging`, which helion imports without declaring",
    probe_modules="helion, helion.language", probe_env=(("HELION_INTERPRET", "1"),), env_prefix="HELION_",
    stand_ins=("helion", "helion.language"),
    warm="helion",  # seconds of import, once in the zygote (grader.sandbox.kinds.helion.warm)
    track=Track("helion", 4, "Track four: the same kernels in Helion", called="the Helion track"),
    one_puzzle="a Helion puzzle",
    graded_how="graded in Helion's interpreter, and its Triton compile-checked for sm_90",
    notebook_setup=SETUP, notebook_binds=("os", "torch", "helion", "hl", "Tensor", "Float32", "Int32"),
    imports_after="import helion.language as hl\n")
