"""Grading a Helion puzzle: the learner's ``@helion.kernel``, case by case.

The worker (:mod:`grader.sandbox.kinds.helion.run`) has Helion's compiler trace the kernel on each
case's inputs, then runs it: in Helion's interpreter on a CPU (and the Triton code Helion
generated, tile by tile, in Triton's interpreter), compiled on a GPU. Here each case is judged:
work outside the ``hl.tile`` loops is PyTorch's, not the kernel's; the values are the spec's,
in the interpreter and as tiled; no input was written. The Triton code Helion generated is
compiled for sm_90 by the compile checker, once per tile sizes and dtypes, as a kernel
puzzle's kernel is, and shown to the learner (``--verbose``).
"""
from __future__ import annotations

import itertools
import queue
from dataclasses import replace
from pathlib import Path

import msgspec

from grader.channel import wire
from grader.channel.kinds import helion as helion_wire
from grader.course.dtypes import DTYPES, dtype_name
from grader.course.puzzle import Case, keyword_values, tile_extents
from grader.judge import failures
from grader.judge.compare import compare_tensor, look_alike_note, recognise
from grader.judge.fence import pack
from grader.judge.grade import COMPILE_STAGE, PuzzleGrader, Unanswered, case_result, describe_case, failed_case
from grader.judge.results import CaseResult, CheckResult, FailureKind, Status
from grader.source.source_lines import imports_helion


class HelionGrader(PuzzleGrader):
    compile_beside = False  # Helion's Triton is known only once a case has run: compiled after the cases
    decorator = "@helion.kernel"

    def grade(self):
        # Helion's import, once in the zygote before its forks: every Helion puzzle's worker starts
        # with it. (The compile worker imports Helion only where its Triton calls Helion's helpers.)
        self.worker.warm |= {"helion"}
        result = super().grade()
        return replace(result, generated=self._generated) if self._generated else result

    def _unsupported(self) -> str | None:
        from importlib.util import find_spec
        if find_spec("helion") is None:
            return ("Helion is not installed: `pip install -e '.[helion]' -c constraints.txt` adds it "
                    "(the Helion track needs it; the other tracks do not).")
        return None

    def _sniffing(self) -> str | None:
        from grader.source import helion_device, sniffing
        finding = sniffing.check_file(self.kernel_file, None)
        if finding is not None:
            return sniffing.message(finding)
        branch = helion_device.check_file(self.kernel_file, self.puzzle.kernel)
        return None if branch is None else helion_device.message(branch)

    def _load(self):
        info, failure = super()._load()
        check = failure.checks.get("load") if failure is not None else None
        if check is not None and check.kind == FailureKind.SIGNATURE:  # not a Helion kernel: say what is
            message = f"{failure.message} Expected signature: {self.decorator} def {self.expected_signature}"
            failure = replace(failure, message=message, checks={"load": replace(check, message=message)})
        if failure is None and info.stub and not _is_course_stub(self.kernel_file, self.puzzle_path, self.puzzle.kernel):
            info = msgspec.structs.replace(info, stub=not self._stub_does_host_work())
        return info, failure

    def _stub_does_host_work(self) -> bool:
        """Loops of only ``pass`` around host code the learner changed (``z = x + y`` before the
        loop): attempted, and graded, where its first case finds PyTorch work on the host."""
        self._generated, self._launches = "", {}
        result, _ = self._run_helion_case(self.puzzle.cases[0])
        return result.kind == FailureKind.TORCH_COMPUTE

    def _load_request(self):
        # Named with its kind: the worker switches Helion's interpreter on before helion is first
        # imported, which takes seconds (more on a loaded machine).
        return (wire.Load(file=str(self.kernel_file), kernel=self.puzzle.kernel, kind="helion"), (),
                max(120.0, self.options.timeout))

    # ---- the cases --------------------------------------------------------------------------
    def _run_cases(self, params) -> list[CaseResult]:
        self._generated, self._launches, self._fixed = "", {}, {}
        # Each new specialisation is compiled for sm_90 as its case brings it, on a thread beside
        # the cases (the compile checker is a process of its own); the check is the same.
        self._to_compile = queue.SimpleQueue()
        compiling = self._beside(self._compile_generated, self._to_compile) if self.compiler is not None else None
        try:
            results = self._all_cases()
        finally:
            self._to_compile.put(None)
        compiled = compiling.result() if compiling is not None else None
        self._to_compile = None
        if compiled is not None:
            self._checks["gpu_compile"] = compiled
        return results

    def _all_cases(self) -> list[CaseResult]:
        results: list[CaseResult] = []
        abort = None
        for case in self.puzzle.cases:
            if abort is not None:
                results.append(failed_case(case, self.puzzle, failures.Skipped(abort)))
                continue
            result, abort = self._run_helion_case(case)
            results.append(result)
            self._tell(result)
        for case in self._tail_cases() if abort is None else ():
            result, abort = self._run_helion_case(case)
            results.append(result)
            self._tell(result)
        return results

    def _tail_cases(self) -> list[Case]:
        """A tile size the kernel fixes that no case's size leaves a tail of: one more case, the
        first such case with that extent one larger, so that its last tile is partial."""
        more = []
        for (name, size), seen in self._fixed.items():
            if seen["tails"] or not seen["whole"] or size <= 1:
                continue
            case, extent = seen["whole"][0]
            sizes = {k: v + 1 if v == extent else v for k, v in case.sizes.items()}
            if sizes != dict(case.sizes):
                more.append(replace(case, name=f"{case.name}_tail_of_{name.strip('`')}", sizes=sizes))
        return more

    def _fixed_note(self) -> str:
        said = []
        for (name, size), seen in self._fixed.items():
            tails = sorted({c.label for c, _ in seen["tails"]})
            ran = f"its tail runs in case {tails[0]}" if tails else "no case has a tail of it"
            said.append(f"{name} at {size}: graded at that size, {ran}")
        return f" (the kernel fixes its tile size: {'; '.join(said)})" if said else ""

    def _grade(self, started: float):
        self._checks: dict[str, CheckResult] = {}
        self._generated = ""
        result = super()._grade(started)
        if result.status == Status.PASS and getattr(self, "_fixed", None):
            result = replace(result, message=result.message + self._fixed_note())
        compiled = self._checks.get("gpu_compile")
        if compiled is None or result.status not in (Status.PASS, Status.FAIL):
            return result
        checks = {**result.checks, **self._checks}
        if not compiled.passed and result.status == Status.PASS:
            return replace(result, status=Status.FAIL, message=compiled.message, checks=checks)
        return replace(result, checks=checks)

    def _run_helion_case(self, case: Case):
        plan = self.shapes.plan(case, self.options.secret)
        describe = describe_case(case, self.puzzle)
        inputs = plan.buffers[:len(plan.inputs)]
        keyword_only = keyword_values(self.puzzle.spec, plan.values)
        message = helion_wire.HelionRun(file=str(self.kernel_file), kernel=self.puzzle.kernel,
                                 buffers=tuple(b.spec() for b in inputs), values=keyword_only,
                                 blocks=tuple(int(v) for v in case.blocks.values()),
                                 extents=tile_extents(self.puzzle.tiles, case.blocks, self.puzzle.sizes(case)),
                                 names=tuple(case.blocks),
                                 tiled=self.options.device == "cpu")
        blobs = [pack(b, x) for b, x in zip(inputs, plan.inputs)]
        try:
            reply, raw = self._ask(message, blobs)
            if isinstance(reply, helion_wire.HelionRan) and len(raw) != reply.blobs_expected():
                self._malformed(wire.WireError(f"{len(raw)} blobs for {reply.blobs_expected()} tensors"))
        except Unanswered as unanswered:
            result, _, abort = self._unanswered_case(case, describe, unanswered)
            return result, abort
        if isinstance(reply, wire.Failure):
            kind, text, abort = self._case_failure(reply)
            return case_result(case, self.puzzle, False, kind, f"{describe}: {text}"), abort
        extra = {"seconds": reply.seconds, "printed": reply.printed}
        if reply.triton and not self._generated:
            self._generated = f"# {self.puzzle.kernel} as Helion lowers it for {describe} ({reply.config})\n" \
                              + reply.triton
        for fixed in reply.fixed:  # graded at the kernel's own size: is its tail ever run?
            seen = self._fixed.setdefault((fixed.name, fixed.size), {"tails": [], "whole": []})
            seen["tails" if fixed.extent % fixed.size else "whole"].append((case, fixed.extent))
        for launch in reply.launches:  # compiled once per distinct specialisation, beside the cases
            key = repr((launch.kernel, sorted(launch.signature.items()),
                        sorted((k, repr(v)) for k, v in launch.constexprs.items())))
            if key not in self._launches:
                self._launches[key] = (reply.triton, launch, describe)
                if getattr(self, "_to_compile", None) is not None:
                    self._to_compile.put(self._launches[key])
        if reply.failure is not None and reply.failure.kind == "compile":  # Helion's compiler, on the CPU
            facts = failures.HelionRejected(reply.failure.error, reply.failure.line, reply.failure.source)
            return failed_case(case, self.puzzle, facts, describe, **extra), None
        if reply.failure is not None:
            kind, text, abort = self._case_failure(reply.failure)
            return case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra), abort
        if reply.outside is not None:
            out = reply.outside
            facts = failures.HostWork(self.puzzle.kernel, out.line, out.source, out.loops, out.ops, out.tensors,
                                      out.called, out.called_line, out.called_source)
            return failed_case(case, self.puzzle, facts, describe, **extra), None
        if reply.modified:
            changed = reply.modified[0]
            facts = failures.InputModified(changed.name, changed.count, tuple(changed.first))
            return failed_case(case, self.puzzle, facts, describe, **extra), None
        blobs = iter(raw)
        got = [self._tensor(d, next(blobs)) if d.tensor else None for d in reply.returned]
        interpreted = None
        # Helion's interpreter could not run it (hl.inline_triton has no reference): the tiled run,
        # what a GPU runs, is judged alone.
        verdict = None if reply.one_tile_limit else self._check_returned(got, reply.returned, plan, case)
        if verdict is None and reply.tiled:
            tiled = [self._tensor(d, next(blobs)) if d.tensor else None for d in reply.tiled]
            verdict = self._check_returned(tiled, reply.tiled, plan, case)
            if verdict is not None:
                interpreted, got = got, tiled  # the values that failed: what a look-alike is matched against
                describe += (" as Helion lowered it to Triton, run tile by tile in Triton's interpreter "
                             f"({reply.config.partition(': ')[2] or _tiles(case)})")
        if verdict is None and reply.tiled_failure is not None:  # right in one tile; tiles never ran: undecided
            kind, text, abort = self._case_failure(reply.tiled_failure)
            return case_result(case, self.puzzle, False, kind, f"{describe}: {text}", **extra), abort
        if verdict is not None:
            text = failures.word(verdict)
            if verdict.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE):
                looked = self._helion_look_alike(case, plan, got, verdict, text)
                text = looked if looked != text or interpreted is None else \
                    self._disagree(text, interpreted, got, plan) or text
            return case_result(case, self.puzzle, False, verdict.kind, f"{describe}: {text}", **extra), None
        return case_result(case, self.puzzle, True, **extra), None

    def _disagree(self, text: str, interpreted, tiled, plan) -> str | None:
        """Where the tiled run and Helion's interpreter (which agreed with the spec) differ: both
        values, for the first output that differs; None where they cannot be compared."""
        import torch
        for name, one, many, want in zip(self.puzzle.outputs, interpreted, tiled, plan.expected):
            if one is None or many is None or one.shape != many.shape:
                return None
            atol, rtol = self.puzzle.tolerance(dtype_name(want))
            a, b = one.double(), many.double()
            differs = ~torch.isclose(b, a, atol=atol, rtol=rtol, equal_nan=True)
            if bool(differs.any()):
                points = [tuple(int(i) for i in index) for index in torch.nonzero(differs)[:3]]
                elements = tuple((i, float(b[i]), float(a[i])) for i in points)
                return failures.word(failures.LoweringDisagrees(name, text, elements))
        return None

    def _check_returned(self, got, described, plan, case: Case):
        if len(got) != len(plan.expected):
            return failures.ReturnCount(self.puzzle.kernel, len(got), self.puzzle.outputs)
        for name, tensor, info, want in zip(self.puzzle.outputs, got, described, plan.expected):
            if tensor is None:
                return failures.NotATensor(info.type, tuple(want.shape), dtype_name(want))
            if tuple(tensor.shape) != tuple(want.shape) or tensor.dtype != want.dtype:
                return failures.HelionWrongOutput(self.puzzle.kernel, name, tuple(tensor.shape), info.dtype,
                                                  tuple(want.shape), dtype_name(want))
            atol, rtol = self.puzzle.tolerance(dtype_name(want))
            outcome = compare_tensor(name, tensor, want, atol, rtol, on_gpu=self.options.device == "cuda",
                                     filled=False)
            if not outcome.passed:
                return outcome.facts
        return None

    def _helion_look_alike(self, case: Case, plan, got, verdict, text: str) -> str:
        if not self.puzzle.look_alikes or any(g is None for g in got):
            return text
        atol, rtol = map(max, zip(*(self.puzzle.tolerance(dtype_name(e)) for e in plan.expected)))
        look = recognise(self.puzzle.look_alikes, plan.inputs, plan.expected, got, atol, rtol,
                         {**self.puzzle.sizes(case), **case.blocks}, case.layouts)
        return text if look is None else look_alike_note(failures.finding(verdict) or text, look)

    def _tensor(self, described: wire.TensorInfo, blob: bytes):
        """A returned tensor from its bytes; bytes that do not fit its description are the worker's failure."""
        import math

        import torch
        dtype = getattr(torch, described.dtype, None) if described.dtype in DTYPES else None
        size = math.prod(described.shape) * (torch.empty((), dtype=dtype).element_size() if dtype else 1)
        if dtype is None or min(described.shape, default=0) < 0 or len(blob) != size:
            self._malformed(wire.WireError(f"{len(blob)} bytes for a {described.dtype} tensor of shape "
                                           f"{described.shape}"))
        flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
        return flat.reshape(described.shape).clone()

    # ---- the Triton Helion generated, compiled for sm_90 ------------------------------------
    def _compile_generated(self, launches: queue.SimpleQueue) -> CheckResult | None:
        """Each launch of ``launches`` (until None) compiled for sm_90; the first refusal is the
        check's result (the launches after it are taken, not compiled)."""
        first = launches.get()
        if first is None:  # no case launched anything: nothing to compile, no checker started
            return None
        result, count = None, 0
        if imports_helion(kernel_only(first[0])):  # Helion's helpers: imported once, in the checker's zygote
            self.compiler.worker.warm |= {"helion"}
        with self._checker_session() as compiler:
            for source, launch, describe in itertools.chain([first], iter(launches.get, None)):
                if result is not None:
                    continue
                count += 1
                message = wire.Compile(file="helion-generated.py", source=kernel_only(source), kernel=launch.kernel,
                                       signature=dict(launch.signature), constexprs=dict(launch.constexprs),
                                       values={}, options=dict(launch.options), stage=COMPILE_STAGE)
                try:
                    reply, _ = self._ask(message, timeout=max(120.0, self.options.timeout), worker=compiler)
                except Unanswered as unanswered:
                    unfinished = failures.CheckUnfinished(unanswered.cause, launch.kernel)
                    result = CheckResult(False, failures.word(unfinished), unfinished.kind)
                    continue
                if isinstance(reply, wire.Failure):
                    refused = failures.GeneratedCompile(launch.kernel, describe,
                                                        failures.CompileFailed(reply.error, None, reply.source))
                    result = CheckResult(False, failures.word(refused), refused.kind)
        if result is None and count:
            result = CheckResult(True, f"Helion's Triton compiles for sm_90 ({count} specialisation(s))")
        return result


def _is_course_stub(learner, course, name: str) -> bool:
    """Whether the learner's ``name`` is the course's stub as it was given (comments aside)."""
    import ast

    from grader.course.syntax import parse

    def body(path):
        try:
            tree = parse(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError):
            return None
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        return ast.dump(found[-1]) if found else None
    mine = body(learner)
    return mine is not None and mine == body(course)


def _tiles(case: Case) -> str:
    return ", ".join(f"{k}={v}" for k, v in case.blocks.items()) or "Helion's default tile sizes"


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
