"""The tiled run: the Triton code Helion generated for a case's tile sizes, launched through
Helion's own host code, each launch written down (for the sm_90 compile check) and, on a CPU, run
tile by tile in Triton's interpreter. When that run cannot run, it is said where (the generated
line, and the learner's line it came from) and the case is not judged: Helion's interpreter runs
each ``hl.tile`` loop as one tile, which hides every mistake of tiling."""
from __future__ import annotations

import linecache
import os
import re
import traceback

from grader.channel import wire
from grader.channel.kinds import helion as helion_wire
from grader.course.dtypes import DTYPES, dtype_name
from grader.sandbox.kinds.helion.cpu import interpreted_launch


def _signature(jit, args: tuple, kwargs: dict) -> tuple[dict, dict]:
    """The ASTSource signature and constexprs of one launch of a generated Triton kernel."""
    import torch
    signature, constexprs = {}, {}
    for index, (name, value) in enumerate(zip(jit.arg_names, args)):
        if index in jit.constexprs:
            signature[name], constexprs[name] = "constexpr", value
        elif isinstance(value, torch.Tensor):
            signature[name] = "*" + DTYPES[dtype_name(value)].triton
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value == 1:
            signature[name], constexprs[name] = "constexpr", value
        else:
            signature[name] = "i32" if isinstance(value, int) else "fp32"
    return signature, constexprs


def launcher(launches: list, interpret: bool, files: set):
    """Helion's host code calls this for each launch: written down (the compile check's), and run
    in Triton's interpreter where ``interpret``. ``files`` gets the generated module's file."""
    def launch(kernel, grid, *args, **options):
        files.add(kernel.fn.__code__.co_filename)
        launches.append(helion_wire.HelionLaunch(
            kernel=kernel.fn.__name__, grid=tuple(int(g) for g in grid),
            options={k: int(v) for k, v in options.items() if isinstance(v, int)},
            **dict(zip(("signature", "constexprs"), _signature(kernel, args, options)))))
        if interpret:
            interpreted_launch(kernel, grid, args, {k: v for k, v in options.items()
                                                    if k in ("num_warps", "num_stages")})
    return launch


_SRC = re.compile(r"#\s*src\[[^\]:]*:(\d+)\]")


def _frames(error: BaseException):
    """Every frame of ``error`` and the exceptions it wraps (Triton's interpreter re-raises)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield from traceback.extract_tb(error.__traceback__)
        error = error.__cause__ or error.__context__


def _reason(error: BaseException) -> str:
    """The innermost exception's own words (not the interpreter's wrapper around its repr)."""
    while (error.__cause__ or error.__context__) is not None:
        error = error.__cause__ or error.__context__
    return f"{type(error).__name__}: {error}".splitlines()[0][:300]


def _host_code_failed(error: BaseException, path: str) -> wire.Failure:
    """The module Helion generated raised before any launch (its host function, its defaults):
    what a GPU would run raises the same, so the case fails, in Helion's words."""
    from grader.sandbox.learner_code import learner_frame
    line, source = learner_frame(error, path)
    return wire.Failure("exception", error=f"the code Helion generated for this kernel raised before launching it "
                                          f"(on a GPU too): {_reason(error)}", line=line, source=source)


def tiled_limit(error: BaseException, files: set, path: str, tiles: str) -> wire.Failure:
    """Why the tiled run could not run, as the interpreter's limit: the generated Triton line
    that raised, the learner's line Helion generated it from, and what the learner can do."""
    if not files:  # no launch began: Helion's own host code raised, as it would on a GPU
        return _host_code_failed(error, path)
    generated, line, source = "", None, ""
    frame = next((f for f in reversed(list(_frames(error))) if f.filename in files), None)
    if frame is not None:
        generated = (frame.line or "").strip()
        for number in range(frame.lineno, 0, -1):  # Helion writes `# src[file:N]` above what it lowered
            found = _SRC.search(linecache.getline(frame.filename, number))
            if found:
                line = int(found.group(1))
                source = linecache.getline(path, line).strip() if os.path.exists(path) else ""
                break
    lowered = f" The generated line that raised, `{generated}`, is Helion's lowering of your step" \
        if generated and line else ""
    text = (f"Triton's interpreter could not run the Triton Helion generated for this case, tile by tile "
            f"({tiles}): {_reason(error)}. The case is not judged on Helion's own interpreter alone, which "
            f"runs each hl.tile loop as one tile and hides what tiling gets wrong; to grade it on this "
            f"machine, write that step with operations Triton's interpreter runs.{lowered}")
    return wire.Failure("interpreter_limit", error=text, line=line, source=source)
