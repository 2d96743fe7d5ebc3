"""The worker's answer to a ``Compile`` request: a kernel compiled for a GPU target as a launch
would compile it, once per autotuning config, without running it.

Only ``compile`` workers answer it (an interpreter worker leaves ``triton.language`` patched,
and compiling there fails). It is apart from :mod:`grader.sandbox.worker` because it shares
nothing with running a kernel but the loaded module: it drives Triton's compiler (its stages
cut short where only the front end is checked, ptxas's report asked for under ``--perf``), and
its helpers here know nothing of buffers, bounds or the interpreter. :class:`AnswersCompile` is
one of the worker's bases, and reaches the learner's module through the worker's ``module`` and
``kernel``.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import os

from grader.channel import wire
from grader.sandbox import recorded_launch
from grader.sandbox.learner_code import captured_output, compile_error_line


class AnswersCompile:
    """The ``Compile`` request, answered by the worker (its ``module``, ``kernel``, ``triton``
    and the set ``_compiled`` of specialisations compiled already)."""

    def op_compile(self, msg: wire.Compile, blobs: list[bytes]):
        """Compile for a GPU target as a launch would: once per autotuning config, with the
        values heuristics give, for the signature and constexprs the grader bound."""
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.runtime.jit import JITFunction

        from grader.sandbox.launch import apply_heuristics, describe_config, unwrap
        path = os.path.abspath(msg.file) if not msg.source else self._written(msg.source)
        if msg.path:  # a kernel an autograd wrapper launched, found as its replay finds it
            layers = unwrap(recorded_launch.find_kernel(self.module(path), msg.path, msg.hops), msg.kernel)
        else:
            layers = unwrap(self.kernel(path, msg.kernel), msg.kernel)
        fn = layers.base.fn
        base_signature, base_constexprs = dict(msg.signature), dict(msg.constexprs)
        # what the launch's heuristics read, as a GPU launch gives it them: every argument by name
        runtime = {**recorded_launch.pointer_values(msg.signature), **msg.values}
        if msg.path:
            base_signature, base_constexprs = recorded_launch.launch_signature(fn, msg.arguments, msg.keywords,
                                                                              set(layers.provided))
            runtime = recorded_launch.launch_values(fn, msg.arguments, msg.keywords)
        variants = [(describe_config(c), c.kwargs, {"num_warps": c.num_warps, "num_stages": c.num_stages})
                    for c in layers.configs] or [("", {}, dict(msg.options))]
        ttir = ""
        stats, too_large = [], []  # too_large: the configs whose shared memory no program gets
        for label, meta, options in variants:
            # each config from the launch's own values: one config's meta-parameters never fill another's
            signature, constexprs = dict(base_signature), {**base_constexprs, **meta}
            try:
                constexprs.update(apply_heuristics(layers, {**runtime, **constexprs}))
            except Exception as exc:  # noqa: BLE001 (a heuristic of the learner's raised)
                return wire.Failure("compile", error=f"a @triton.heuristics rule raised {type(exc).__name__}: {exc}",
                                    config=label), []
            for name in constexprs:
                signature[name] = "constexpr"
            unset = [n for n, p in inspect.signature(fn).parameters.items()
                     if n not in signature and p.default is inspect.Parameter.empty]
            if unset:  # a config that leaves out a constexpr the others give (nothing passes it)
                names = ", ".join(f"`{n}`" for n in unset)
                return wire.Failure("compile", error=f"{label or 'the launch'} gives no value for {names}, and the "
                                    f"puzzle does not pass it", config=label), []
            # One compile per specialisation: launches that differ only in runtime ints (each case's
            # sizes) compile alike, and this worker serves one puzzle's compile checks only.
            key = (id(fn), tuple(sorted(signature.items())), tuple(sorted((k, repr(v)) for k, v in constexprs.items())),
                   tuple(sorted(options.items())), msg.stage, msg.arch)
            if key in self._compiled and not msg.stats and not msg.ttir:
                continue
            try:
                kernel = None
                with captured_output() as printed, _stages_up_to(msg.stage) as reached, _ptxas_log(msg.stats):
                    attrs = _aligned(fn, signature, msg) if msg.stats else None
                    source = ASTSource(fn=JITFunction(fn), signature=signature, constexprs=constexprs, attrs=attrs)
                    kernel = self.triton.compile(source, target=GPUTarget("cuda", msg.arch, 32), options=options)
                from grader.course.limits import shared_refusal
                shared = getattr(kernel.metadata, "shared", 0) if kernel is not None else reached.get("shared", 0)
                refused = shared_refusal(int(shared or 0), msg.arch, label)
                if refused is not None:  # compiled again whenever asked: each time refused
                    too_large.append(wire.Failure("compile", error=refused, config=label))
                else:
                    self._compiled.add(key)
                if msg.stats:
                    from grader.sandbox.compile_stats import kernel_stats
                    stats.append(kernel_stats(kernel, label, printed[0] if printed else "", options))
                if msg.ttir and not ttir:  # the first variant's, for the similarity pass
                    ttir = _ttir(self.triton, source, GPUTarget("cuda", msg.arch, 32), options)
            except BaseException as exc:
                from grader.sandbox.compile_errors import describe
                filename = inspect.getsourcefile(fn) or path
                line, src = compile_error_line(exc, fn, filename)
                return wire.Failure("compile", error=describe(exc, fn, filename), line=line, source=src,
                                    config=label), []
        # On a GPU the autotuner passes over a config it cannot launch, and fails only when none can.
        if too_large and (not layers.configs or len(too_large) == len(variants)):
            return too_large[0], []
        return wire.Compiled(variants=len(variants), stats=tuple(stats), ttir=ttir), []

    def _written(self, source: str) -> str:
        """Code sent to be compiled (Helion's Triton), as a file of this worker's own: imported as
        a learner's file is, its definitions only."""
        import tempfile
        folder = os.path.join(tempfile.gettempdir(), f"generated-{os.getpid()}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "k" + hashlib.sha1(source.encode()).hexdigest()[:16] + ".py")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
        return path


def _aligned(fn, signature: dict, msg: wire.Compile) -> dict:
    """The divisibility a launch on a GPU would tell the compiler (Triton specialises every
    pointer aligned to 16 bytes and every int divisible by 16): vector loads, and the registers
    ptxas reports, depend on it. Only for a launch whose arguments are known (``--perf``)."""
    params = list(inspect.signature(fn).parameters)
    named = {**dict(zip(params, msg.arguments)), **msg.keywords}
    attrs = {}
    for index, name in enumerate(params):
        value = named.get(name)
        if signature.get(name, "constexpr") == "constexpr":
            continue
        if (isinstance(value, dict) and "pointer" in value) or \
                (isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0):
            attrs[(index,)] = [["tt.divisibility", 16]]
    return attrs


@contextlib.contextmanager
def _ptxas_log(wanted: bool):
    """Have Triton print ptxas's report (registers, spills), which it otherwise throws away."""
    if not wanted:
        yield
        return
    import triton
    knobs = triton.knobs.nvidia
    before = knobs.dump_ptxas_log
    knobs.dump_ptxas_log = True
    try:
        yield
    finally:
        knobs.dump_ptxas_log = before


def _ttir(triton, source, target, options) -> str:
    """What Triton's front end made of ``source``: its TTIR (inlined, canonicalised, CSE'd, dead
    code gone), without locations; the stages past it are not run. A ``tl.static_range`` loop is
    compiled as a ``tl.range`` one, so that unrolling by hand's way is read as the loop it is;
    where its body needs the index at compile time, it is compiled as written. "" where neither
    compiles: the kernel compiled already, so the check stands; the pass only lacks its TTIR."""
    for rolled in (True, False):
        try:
            with captured_output(), _stages_up_to("ttir") as reached, _static_as_range(rolled):
                triton.compile(source, target=target, options=options)
            return reached.get("ttir", "")
        except Exception:  # noqa: BLE001 (a loop that needs static_range: compiled again as written)
            continue
    return ""


@contextlib.contextmanager
def _static_as_range(wanted: bool):
    """``tl.static_range`` as ``tl.range`` for Triton's code generator, which tells a static loop
    by comparing the iterator with ``language.static_range``: it is shown a stand-in there."""
    if not wanted:
        yield
        return
    import triton.language as language
    from triton.compiler import code_generator

    class _Language:
        static_range = object()  # no learner's iterator is this: every loop goes the range way

        def __getattr__(self, name):
            return getattr(language, name)

    saved = language.static_range, code_generator.language
    language.static_range, code_generator.language = language.range, _Language()
    try:
        yield
    finally:
        language.static_range, code_generator.language = saved


class _StagesDone(Exception):
    """Raised in place of the first stage past the last one asked for: the compile got that far."""


@contextlib.contextmanager
def _stages_up_to(last: str):
    """Compile only up to ``last`` of Triton's stages (ttir, ttgir, llir, ptx, cubin), where its
    knobs allow: an autograd wrapper's launches are checked through the front end, which is
    where Python that is not Triton fails, without paying for LLVM and ptxas per launch."""
    from triton import knobs
    runtime = getattr(knobs, "runtime", None)
    reached: dict = {}  # the metadata of the last stage run (its shared memory, from llir on)
    if last == "cubin" or not hasattr(runtime, "add_stages_inspection_hook"):
        yield reached
        return

    def stop(src, metadata):
        reached.update(metadata)
        if last == "ttir" and hasattr(src, "str_nodebug"):  # the module the TTIR stage made
            reached["ttir"] = src.str_nodebug()
        raise _StagesDone()

    def hook(backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:  # asked for its cache key: kept apart from full compiles
            return f"up-to-{last}", f"up-to-{last}"
        names = list(stages)
        for name in names[names.index(last) + 1:] if last in names else ():
            stages[name] = stop
    saved = runtime.add_stages_inspection_hook
    runtime.add_stages_inspection_hook = hook
    try:
        yield reached
    except _StagesDone:
        pass
    finally:
        runtime.add_stages_inspection_hook = saved
