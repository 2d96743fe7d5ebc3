"""A kernel puzzle's check beside its cases: the kernel compiled for sm_90 once per distinct block
configuration and dtypes, in a compile worker of the puzzle's own. What would not compile for a
GPU is not Triton, and the interpreter would run it as plain Python: no case counts until it passes.
"""
from __future__ import annotations

import hashlib
import json

from grader.channel import wire
from grader.channel.binding import BindingError, Param
from grader.judge import failures
from grader.judge.asking import Unanswered
from grader.judge.case_run import COMPILE_STAGE, PuzzleState, describe_case
from grader.judge.kinds.kind import Check
from grader.judge.results import CheckName, CheckResult

# Compiled to the end (ptxas): what only the assembler can refuse, inline PTX and a register cap.
NEEDS_ASSEMBLER = ("inline_asm", "maxnreg")


def start(runner, params: list[Param]):
    """Its CheckResult comes in the Future. Every case still runs to its end when it fails: which
    cases a cancel would reach depends on timing, and a report must not (a case is bounded by its
    timeout all the same)."""
    state = runner.state
    return None if state.compiler is None else state.beside(compile_check, state, params, runner.info)


def compile_check(state: PuzzleState, params: list[Param], info: wire.Loaded) -> CheckResult:
    """``info``: the load's reply, which says how the kernel's parameters bind."""
    with state.checker_session() as compiler:
        return compile_each(state, params, info, compiler)


def compiled(state: PuzzleState, message: wire.Compile, compiler):
    """The compile checker's reply to ``message``: remembered by the file's digest and the
    request, so that a kernel checked again unchanged is not compiled again."""
    try:
        digest = hashlib.sha256(state.kernel_file.read_bytes()).hexdigest()
    except OSError:
        digest = None
    key = (digest, json.dumps({k: v for k, v in wire.header(message).items() if k != "file"}, sort_keys=True))
    known = state.compiler.verdicts.get(key) if digest is not None else None
    if known is None:
        known, _ = state.ask(message, timeout=max(60.0, state.options.timeout), worker=compiler)
        if digest is not None:
            state.compiler.verdicts[key] = known
    return known


def compile_each(state: PuzzleState, params: list[Param], info: wire.Loaded, compiler) -> CheckResult:
    puzzle, shapes = state.puzzle, state.shapes
    seen, ttir = set(), ""
    stage = "cubin" if any(word in state.source() for word in NEEDS_ASSEMBLER) else COMPILE_STAGE
    for case in puzzle.cases:
        if case.large:  # its blocks are a small case's, or as long as its sizes: slow to compile, no news
            continue
        input_specs, output_specs = shapes.typed(case)
        dtypes = [s.dtype for s in (*input_specs, *output_specs)]
        key = (tuple(sorted(case.blocks.items())), tuple(dtypes))
        if key in seen:
            continue
        seen.add(key)
        try:
            values = shapes.plan(case).values
            binding = state.bind(params, [s.name for s in shapes.all], values, info)
        except BindingError:
            continue
        signature, constexprs = binding.compile_signature(params, dtypes)
        message = wire.Compile(file=str(state.kernel_file), kernel=puzzle.kernel, signature=signature,
                               constexprs=constexprs, values=values, stage=stage, ttir=not ttir)
        try:
            reply = compiled(state, message, compiler)
        except Unanswered as unanswered:
            unfinished = failures.CheckUnfinished(unanswered.cause)
            return CheckResult(False, failures.word(unfinished), unfinished.kind)
        if isinstance(reply, wire.Failure):
            blocks = ", ".join(f"{k}={v}" for k, v in case.blocks.items()
                               if k not in binding.provided) or "defaults"
            blocks += f"; {reply.config}" if reply.config else ""
            failed = failures.CompileFailed(reply.error, reply.line, reply.source,
                                            case=describe_case(case, puzzle),
                                            inputs={s.name: s.dtype for s in input_specs},
                                            outputs={s.name: s.dtype for s in output_specs})
            refused = failures.CompileCheck(blocks, failed)
            return CheckResult(False, failures.word(refused), refused.kind)
        ttir = ttir or reply.ttir  # the first case's, at its constexprs: every student's alike
    return CheckResult(True, f"compiles for sm_90 ({len(seen)} block configuration(s))", ttir=ttir)


CHECK = Check(CheckName.GPU_COMPILE, start, gate=True)
