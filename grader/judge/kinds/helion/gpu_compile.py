"""A Helion puzzle's check beside its cases: the Triton Helion generated, compiled for sm_90 once
per specialisation, as each case brings it (the runner queues its launches). Known only once a
case has run, it is judged after the cases: it fails a pass, and stands beside a failure.
"""
from __future__ import annotations

import itertools
import queue

from grader.channel import wire
from grader.judge import failures
from grader.judge.asking import Unanswered
from grader.judge.case_run import COMPILE_STAGE, PuzzleState
from grader.judge.kinds.helion.failures import GeneratedCompile
from grader.judge.kinds.kind import Check
from grader.judge.results import CheckName, CheckResult
from grader.source.source_lines import imports_package


class _Closing:
    """The check's handle: the runner's queue closed, then the compile's verdict awaited."""

    def __init__(self, launches: queue.SimpleQueue, future) -> None:
        self.launches, self.future = launches, future

    def result(self):
        self.launches.put(None)
        return self.future.result()


def start(runner, params):
    """The runner's queue of launches (``HelionRunner.to_compile``), compiled as cases bring them."""
    state = runner.state
    if state.compiler is None:
        return None
    launches = runner.to_compile = queue.SimpleQueue()
    return _Closing(launches, state.beside(compile_generated, state, launches))


def compile_generated(state: PuzzleState, launches: queue.SimpleQueue) -> CheckResult | None:
    """Each launch of ``launches`` (until None) compiled for sm_90; the first refusal is the
    check's result (the launches after it are taken, not compiled)."""
    first = launches.get()
    if first is None:  # no case launched anything: nothing to compile, no checker started
        return None
    result, count, ttir = None, 0, ""
    if imports_package(kernel_only(first[0]), "helion"):  # Helion's helpers: imported once, in the checker's zygote
        state.compiler.worker.warm |= {"helion"}
    with state.checker_session() as compiler:
        for source, launch, describe in itertools.chain([first], iter(launches.get, None)):
            if result is not None:
                continue
            count += 1
            message = wire.Compile(file="helion-generated.py", source=kernel_only(source), kernel=launch.kernel,
                                   signature=dict(launch.signature), constexprs=dict(launch.constexprs),
                                   values={}, options=dict(launch.options), stage=COMPILE_STAGE,
                                   ttir=not ttir)  # the first launch's, for the similarity pass
            try:
                reply, _ = state.ask(message, timeout=max(120.0, state.options.timeout), worker=compiler)
            except Unanswered as unanswered:
                unfinished = failures.CheckUnfinished(unanswered.cause, launch.kernel)
                result = CheckResult(False, failures.word(unfinished), unfinished.kind)
                continue
            if isinstance(reply, wire.Failure):
                refused = GeneratedCompile(launch.kernel, describe,
                                                    failures.CompileFailed(reply.error, None, reply.source))
                result = CheckResult(False, failures.word(refused), refused.kind)
            else:
                ttir = ttir or reply.ttir
    if result is None and count:
        result = CheckResult(True, f"Helion's Triton compiles for sm_90 ({count} specialisation(s))", ttir=ttir)
    return result


def kernel_only(source: str) -> str:
    """Helion's generated module without its host functions (the undecorated ones, which call the
    launcher), the launcher they import and the learner's module they read: the Triton kernels,
    their helpers and constants, which is all a compile needs. Lines keep their numbers."""
    import ast

    from grader.course.syntax import parse
    lines = source.splitlines()
    tree = parse(source)
    device = {n.id for f in tree.body if isinstance(f, ast.FunctionDef) and f.decorator_list
              for n in ast.walk(f) if isinstance(n, ast.Name)}
    for node in tree.body:
        host = isinstance(node, ast.FunctionDef) and not node.decorator_list
        launcher = isinstance(node, ast.ImportFrom) and any(a.name == "default_launcher" for a in node.names)
        # The learner's own module, which Helion's host code reads its constants from (the kernels
        # take them as arguments): imported under a name only the learner's worker knows.
        learner = isinstance(node, ast.Import) and all(a.name.startswith("_learner_") and (a.asname or a.name)
                                                       not in device for a in node.names)
        if host or launcher or learner:
            lines[node.lineno - 1:node.end_lineno] = [""] * (node.end_lineno - node.lineno + 1)
    return "\n".join(lines) + "\n"


CHECK = Check(CheckName.GPU_COMPILE, start, gate=False)
