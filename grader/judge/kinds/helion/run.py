"""A Helion puzzle's case runner: the learner's ``@helion.kernel``, case by case.

The worker (:mod:`grader.sandbox.kinds.helion.run`) has Helion's compiler trace the kernel on each
case's inputs, then runs it: in Helion's interpreter on a CPU (and the Triton code Helion
generated, tile by tile, in Triton's interpreter), compiled on a GPU. Here each case is judged:
work outside the ``hl.tile`` loops is PyTorch's, not the kernel's; the values are the spec's,
in the interpreter and as tiled; no input was written. Each new specialisation is queued for the
sm_90 compile beside the cases (:mod:`grader.judge.kinds.helion.gpu_compile`), and the Triton
Helion generated is shown to the learner (``--verbose``). A tile size the kernel fixes that no
case leaves a tail of brings one more case, after the puzzle's.
"""
from __future__ import annotations

import re
from dataclasses import replace

from grader.channel import wire
from grader.channel.kinds import helion as helion_wire
from grader.course.dtypes import DTYPES, dtype_name
from grader.course.puzzle import Case, keyword_values, tile_extents
from grader.judge import failures
from grader.judge.asking import Unanswered
from grader.judge.case_run import (
    CaseOutcome,
    CaseRunner,
    PuzzleState,
    case_result,
    describe_case,
    failed_case,
    reported_case,
    unanswered_case,
)
from grader.judge.compare import compare_tensor, look_alike_note, recognise
from grader.judge.failures import FailureKind
from grader.judge.fence import pack
from grader.judge.kinds.helion.failures import (
    HelionRejected,
    HelionWrongOutput,
    HostWork,
    LoweringDisagrees,
    ReturnCount,
)
from grader.judge.results import CheckName


class HelionRunner(CaseRunner):
    """The cases of a ``@helion.kernel``, then a tail case for each tile size it fixes that none ran."""

    def __init__(self, state: PuzzleState) -> None:
        super().__init__(state)
        self.generated = ""  # the first case's Triton, as Helion lowered it (shown with --verbose)
        self.launches: dict[str, tuple] = {}  # each distinct specialisation, once
        self.fixed: dict[tuple[str, int], dict] = {}  # (tile, size the kernel fixes) -> the cases with/without a tail
        self.to_compile = None  # the compile check's queue (grader.judge.kinds.helion.gpu_compile), where it runs
        self.tails_asked = False

    # ---- the life cycle's steps --------------------------------------------------------------
    def unsupported(self) -> str | None:
        from importlib.util import find_spec
        if find_spec("helion") is None:
            return ("Helion is not installed: `pip install -e '.[helion]' -c constraints.txt` adds it "
                    "(the Helion track needs it; the other tracks do not).")
        return None

    def sniff(self) -> str | None:
        from grader.judge.kinds.helion.interpreter_check import check_file, message
        from grader.source import sniffing
        finding = sniffing.check_file(self.state.kernel_file, None)
        if finding is not None:
            return sniffing.message(finding)
        branch = check_file(self.state.kernel_file, self.puzzle.kernel)
        return None if branch is None else message(branch)

    def load_request(self):
        # Named with its kind: the worker switches Helion's interpreter on before helion is first
        # imported, which takes seconds (more on a loaded machine).
        return (wire.Load(file=str(self.state.kernel_file), kernel=self.puzzle.kernel, kind="helion"), (),
                max(120.0, self.options.timeout))

    def loaded(self, info, failure):
        check = failure.checks.get(CheckName.LOAD) if failure is not None else None
        if check is not None and check.kind == FailureKind.SIGNATURE:  # not a Helion kernel: say what is
            message = (f"{failure.message} Expected signature: {self.state.decorator} "
                       f"def {self.state.expected_signature}")
            failure = replace(failure, message=message, checks={CheckName.LOAD: replace(check, message=message)})
        return super().loaded(info, failure)

    def cases(self) -> list[Case]:
        self.generated, self.launches, self.fixed = "", {}, {}
        return list(self.puzzle.cases)

    def next_pass(self, carried: dict, aborted: bool) -> list[Case]:
        """Once the puzzle's cases ran, where none stopped the rest: the tail cases."""
        if self.tails_asked or aborted:
            return []
        self.tails_asked = True
        return self.tail_cases()

    def pass_note(self) -> str:
        return self.fixed_note()

    def finish(self, result):
        return replace(result, generated=self.generated) if self.generated else result

    def tail_cases(self) -> list[Case]:
        """A tile size the kernel fixes that no case's size leaves a tail of: one more case, the
        first such case with that extent one larger, so that its last tile is partial."""
        more = []
        for (name, size), seen in self.fixed.items():
            if seen["tails"] or not seen["whole"] or size <= 1:
                continue
            case, extent = seen["whole"][0]
            sizes = {k: v + 1 if v == extent else v for k, v in case.sizes.items()}
            if sizes != dict(case.sizes):
                more.append(replace(case, name=f"{case.name}_tail_of_{name.strip('`')}", sizes=sizes))
        return more

    def fixed_note(self) -> str:
        said = []
        for (name, size), seen in self.fixed.items():
            tails = sorted({c.label for c, _ in seen["tails"]})
            ran = f"its tail runs in case {tails[0]}" if tails else "no case has a tail of it"
            said.append(f"{name} at {size}: graded at that size, {ran}")
        return f"the kernel fixes its tile size: {'; '.join(said)}" if said else ""

    # ---- a case ------------------------------------------------------------------------------
    def run(self, case: Case, carried=None) -> CaseOutcome:
        """The case sent, what its run brings noted, then judged: what the worker saw wrong first,
        then the values returned (in Helion's interpreter, and as tiled)."""
        plan, describe = self.state.shapes.plan(case, self.options.secret), describe_case(case, self.puzzle)
        sent = self._send(case, plan, describe)
        if isinstance(sent, CaseOutcome):  # no reply to judge, or the worker's failure
            return sent
        reply, raw = sent
        self._note(case, reply, describe)
        extra = {"seconds": reply.seconds, "printed": reply.printed}
        return self._refused(case, reply, describe, extra) or self._values(case, plan, reply, raw, describe, extra)

    def _send(self, case: Case, plan, describe: str) -> tuple[helion_wire.HelionRan, list] | CaseOutcome:
        """The case's inputs and tile sizes sent; the reply and its bytes, or the case's outcome."""
        inputs = plan.buffers[:len(plan.inputs)]
        keyword_only = keyword_values(self.puzzle.spec, plan.values)
        message = helion_wire.HelionRun(file=str(self.state.kernel_file), kernel=self.puzzle.kernel,
                                        buffers=tuple(b.spec() for b in inputs), values=keyword_only,
                                        blocks=tuple(int(v) for v in case.blocks.values()),
                                        extents=tile_extents(self.puzzle.tiles, case.blocks, self.puzzle.sizes(case)),
                                        names=tuple(case.blocks),
                                        tiled=self.options.device == "cpu")
        blobs = [pack(b, x) for b, x in zip(inputs, plan.inputs)]
        try:
            reply, raw = self.state.ask(message, blobs)
            if isinstance(reply, helion_wire.HelionRan) and len(raw) != reply.blobs_expected():
                self.state.malformed(wire.WireError(f"{len(raw)} blobs for {reply.blobs_expected()} tensors"))
        except Unanswered as unanswered:
            return unanswered_case(case, self.puzzle, describe, unanswered, self.options.device == "cpu")
        if isinstance(reply, wire.Failure):
            return reported_case(self.state, case, reply, describe)
        return reply, raw

    def _note(self, case: Case, reply: helion_wire.HelionRan, describe: str) -> None:
        """What a run brings beside its verdict: the Triton Helion generated (the first case's), the
        tile sizes the kernel fixes, and each new specialisation, queued for the compile check."""
        if reply.triton and not self.generated:
            self.generated = f"# {self.puzzle.kernel} as Helion lowers it for {describe} ({reply.config})\n" \
                              + reply.triton
        for fixed in reply.fixed:  # graded at the kernel's own size: is its tail ever run?
            seen = self.fixed.setdefault((fixed.name, fixed.size), {"tails": [], "whole": []})
            seen["tails" if fixed.extent % fixed.size else "whole"].append((case, fixed.extent))
        for launch in reply.launches:  # compiled once per distinct specialisation, beside the cases
            key = repr((launch.kernel, sorted(launch.signature.items()),
                        sorted((k, repr(v)) for k, v in launch.constexprs.items())))
            if key not in self.launches:
                self.launches[key] = (reply.triton, launch, describe)
                if self.to_compile is not None:
                    self.to_compile.put(self.launches[key])

    def _refused(self, case: Case, reply: helion_wire.HelionRan, describe: str, extra: dict) -> CaseOutcome | None:
        """What the worker saw wrong before any value counts: Helion's compiler refusing the kernel,
        a failure of the run, work outside the ``hl.tile`` loops, an input written. None: the values decide."""
        if reply.failure is not None and reply.failure.kind == "compile":  # Helion's compiler, on the CPU
            facts = HelionRejected(reply.failure.error, reply.failure.line, reply.failure.source)
            return CaseOutcome(failed_case(case, self.puzzle, facts, describe, **extra))
        if reply.failure is not None:
            return reported_case(self.state, case, reply.failure, describe, **extra)
        if reply.outside is not None:
            out = reply.outside
            first = re.match(r"\w+\((\w+)", self.state.expected_signature)
            facts = HostWork(self.puzzle.kernel, out.line, out.source, out.loops, out.ops, out.tensors,
                             out.called, out.called_line, out.called_source, first.group(1) if first else "x")
            return CaseOutcome(failed_case(case, self.puzzle, facts, describe, **extra))
        if reply.modified:
            changed = reply.modified[0]
            facts = failures.InputModified(changed.name, changed.count, tuple(changed.first))
            return CaseOutcome(failed_case(case, self.puzzle, facts, describe, **extra))
        return None

    def _values(self, case: Case, plan, reply: helion_wire.HelionRan, raw: list, describe: str,
                extra: dict) -> CaseOutcome:
        """The returned values against the spec's: Helion's interpreter's, then the tiled run's."""
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
            return reported_case(self.state, case, reply.tiled_failure, describe, **extra)
        if verdict is not None:
            text = failures.word(verdict)
            if verdict.kind in (FailureKind.MISMATCH, FailureKind.NONFINITE):
                looked = self._helion_look_alike(case, plan, got, verdict, text)
                text = looked if looked != text or interpreted is None else \
                    self._disagree(text, interpreted, got, plan) or text
            return CaseOutcome(case_result(case, self.puzzle, False, verdict.kind, f"{describe}: {text}", **extra))
        return CaseOutcome(case_result(case, self.puzzle, True, **extra))

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
                return failures.word(LoweringDisagrees(name, text, elements))
        return None

    def _check_returned(self, got, described, plan, case: Case):
        if len(got) != len(plan.expected):
            return ReturnCount(self.puzzle.kernel, len(got), self.puzzle.outputs)
        for name, tensor, info, want in zip(self.puzzle.outputs, got, described, plan.expected):
            if tensor is None:
                return failures.NotATensor(info.type, tuple(want.shape), dtype_name(want))
            if tuple(tensor.shape) != tuple(want.shape) or tensor.dtype != want.dtype:
                return HelionWrongOutput(self.puzzle.kernel, name, tuple(tensor.shape), info.dtype,
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
            self.state.malformed(wire.WireError(f"{len(blob)} bytes for a {described.dtype} tensor of shape "
                                                 f"{described.shape}"))
        flat = torch.frombuffer(bytearray(blob), dtype=dtype) if blob else torch.empty(0, dtype=dtype)
        return flat.reshape(described.shape).clone()


def _tiles(case: Case) -> str:
    return ", ".join(f"{k}={v}" for k, v in case.blocks.items()) or "Helion's default tile sizes"
