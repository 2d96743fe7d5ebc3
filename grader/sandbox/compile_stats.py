"""What ptxas made of a compiled kernel: registers, spills, shared memory and the matrix
instructions (inside a compile worker, for ``--perf``).

On a GPU, Triton reads the registers and spills back from the driver when it loads the
kernel; with no GPU, they are in ptxas's own report, which Triton prints when asked
(``knobs.nvidia.dump_ptxas_log``). Where Triton's cache answered the compile, ptxas did not
run: then it runs here once on the cached PTX, and its report is kept beside the cache.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from grader.channel import wire

REGISTERS = re.compile(r"Used (\d+) registers")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_log(log: str) -> tuple[int, int] | None:
    """(registers, spill bytes) from ptxas's ``-v`` report; None where it is not one."""
    registers = REGISTERS.search(log)
    if registers is None:
        return None
    spills = SPILLS.search(log)
    return int(registers.group(1)), (int(spills.group(1)) + int(spills.group(2))) if spills else 0


def _memo() -> Path:
    import triton
    return Path(triton.knobs.cache.dir) / "grader-ptxas-reports.json"


def _remembered(key: str) -> tuple[int, int] | None:
    try:
        found = json.loads(_memo().read_text()).get(key)
        return (int(found[0]), int(found[1])) if found else None
    except (OSError, ValueError, TypeError, IndexError):
        return None


def _remember(key: str, figures: tuple[int, int]) -> None:
    path = _memo()
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
        known[key] = list(figures)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known))
    except (OSError, ValueError):
        pass  # a cache that cannot be written costs a ptxas run next time, nothing else


# PTX opcodes that are not arithmetic: memory, synchronisation, control, matrix instructions and
# moves (a register renamed, mostly free in SASS)
_NOT_ALU = ("ld", "st", "cp", "atom", "red", "wgmma", "mma", "ldmatrix", "stmatrix", "bar", "fence", "mbarrier",
            "bra", "ret", "mov", "barrier", "membar", "prefetch", "griddepcontrol", "elect", "shfl", "vote",
            "tensormap", "cvta", "createpolicy", "discard", "applypriority", "exit", "trap", "setmaxnreg")
_SLOW = ("ex2", "lg2", "rsqrt", "sqrt", "sin", "cos", "rcp", "tanh")  # the SFU's (with .approx)
_LABEL = re.compile(r"^(\$L\w+):")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L\w+);")


def ptx_counts(ptx: str) -> tuple[int, int, int]:
    """(arithmetic, SFU, loops) of a kernel's PTX: its arithmetic instructions per thread, as
    written once (a loop's body counted once), of them the SFU's, and its backward branches (the
    loops; a loop-free kernel runs each instruction once per thread). The compiled code's own
    count, where the interpreter counts every lane operation of the Python it runs (a Philox
    draw's address arithmetic the compiler folds, a counter the compiler proves equal for four
    neighbouring elements)."""
    alu = slow = loops = 0
    seen: set[str] = set()
    for raw in ptx.splitlines():
        line = raw.strip()
        if not line or line.startswith(("//", ".", "{", "}", ")", "(")):
            continue
        label = _LABEL.match(line)
        if label:
            seen.add(label.group(1))
            continue
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else ""
        opcode = line.split(None, 1)[0].rstrip(";") if line else ""
        head = opcode.split(".", 1)[0]
        if not head or not head[0].isalpha():
            continue
        branch = _BRANCH.search(line)
        if branch and branch.group(1) in seen:
            loops += 1
        if head in _NOT_ALU:
            continue
        alu += 1
        slow += head in _SLOW
    return alu, slow, loops


_SHARED = ("ld.shared", "st.shared", "ldmatrix", "stmatrix")


def loop_shared(ptx: str) -> int:
    """Shared-memory loads and stores per thread in the PTX's loop bodies (the lines from a label
    to the backward branch that returns to it), as written once. Around a ``tl.dot`` they are the
    threads moving its tiles (a layout conversion, fp16 tiles converted to fp32 for TF32), which
    the copy engine does alone in a matmul that feeds the tensor cores straight from its copies."""
    starts: dict[str, int] = {}
    count = 0
    lines = [raw.strip() for raw in ptx.splitlines()]
    for index, line in enumerate(lines):
        label = _LABEL.match(line)
        if label:
            starts[label.group(1)] = index
        branch = _BRANCH.search(line)
        if branch and branch.group(1) in starts:
            body = lines[starts[branch.group(1)] + 1:index]
            count += sum((code.split(None, 1)[-1] if code.startswith("@") else code).startswith(_SHARED)
                         for code in body)
    return count


def ptxas_report(ptx: str, arch: int) -> str:
    """ptxas's ``-v`` report of ``ptx``, run as Triton runs it."""
    from triton.backends.nvidia.compiler import get_ptxas
    suffix = "a" if arch == 90 else ""
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "kernel.ptx")
        Path(source).write_text(ptx)
        done = subprocess.run([get_ptxas(arch).path, "-v", f"--gpu-name=sm_{arch}{suffix}", source, "-o",
                               os.path.join(folder, "kernel.cubin")], capture_output=True, text=True, timeout=600)
    return done.stderr + done.stdout


def kernel_stats(kernel, label: str, log: str, options: dict, arch: int = 90) -> wire.KernelStats:
    """The figures of one compiled variant; ``log``: what the compile printed (ptxas's report,
    unless the cache answered)."""
    metadata = kernel.metadata
    key = f"{metadata.hash}:{arch}"
    figures = parse_log(log)
    if figures is not None:  # a compile that ran ptxas: its report kept for the cache's next answer
        _remember(key, figures)
    else:
        figures = _remembered(key)
        if figures is None:
            figures = parse_log(ptxas_report(kernel.asm["ptx"], arch)) or (0, 0)
            _remember(key, figures)
    ptx = kernel.asm.get("ptx", "")
    tensor_cores = "wgmma" if "wgmma.mma_async" in ptx else "mma" if "mma.sync" in ptx else ""
    alu, slow, loops = ptx_counts(ptx)
    return wire.KernelStats(label=label, registers=figures[0], spill_bytes=figures[1], alu=alu, slow=slow, loops=loops,
                            loop_shared=loop_shared(ptx),
                            shared=int(getattr(metadata, "shared", 0) or 0),
                            num_warps=int(getattr(metadata, "num_warps", options.get("num_warps", 4))),
                            num_stages=int(options.get("num_stages", getattr(metadata, "num_stages", 3))),
                            tensor_cores=tensor_cores)
