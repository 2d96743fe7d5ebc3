"""The worker's side of a Helion puzzle: a learner's ``@helion.kernel`` on one case.

Each case goes through Helion twice over, and only here is helion imported:

1. Helion's compiler (a copy of the kernel with its interpreter off) traces it on the case's
   inputs. It says where the work is: the host code it generates (all but the loops) is run
   once with nothing launched, and whatever that does to tensor data is PyTorch on the host
   (:mod:`grader.sandbox.kinds.helion.host`); a kernel with no loop has no device code at all. It raises the
   learner's errors with their line (a shape that does not broadcast, an unsupported call),
   and it lowers the kernel to Triton for the case's tile sizes, on the CPU, without a GPU.
2. On a CPU, Helion's interpreter (``HELION_INTERPRET=1``, set before helion is imported) runs
   the kernel as PyTorch, each ``hl.tile`` loop as one tile spanning its range; then the Triton
   code Helion generated runs in Triton's interpreter, tile by tile, with the case's tile sizes
   (its tails, its masks: what a GPU would run). On a GPU the compiled kernel runs, with the
   same config (:mod:`grader.sandbox.kinds.helion.config`: the case's tile sizes on the kernel's own
   loops, never Helion's default).

What either interpreter cannot run (an API without a reference implementation, a libdevice
function Triton's interpreter lacks) is reported as the interpreter's limit, never as the
learner's failure, and never as a pass (:mod:`grader.sandbox.kinds.helion.tiled`).
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import os
import re
import time

from grader.channel import wire
from grader.channel.kinds import helion as helion_wire
from grader.course.dtypes import dtype_name, tensor_bytes
from grader.sandbox.kinds.helion.config import case_config
from grader.sandbox.kinds.helion.cpu import register_mixed_dots
from grader.sandbox.kinds.helion.host import host_work, host_work_eager, watching
from grader.sandbox.kinds.helion.ref_mode import interpreter_limit
from grader.sandbox.kinds.helion.tiled import launcher, tiled_limit
from grader.sandbox.learner_code import captured_output, learner_frame, left_out, said
from grader.sandbox.world import gpu_world, in_memory, on_gpu


def before_import(device: str) -> None:
    """Switch Helion's interpreter on (on a CPU) before helion is first imported: the learner's
    ``@helion.kernel`` reads it when it decorates. Triton's interpreter switch must be off then
    (Helion refuses both at once); the Triton code Helion generates is interpreted explicitly."""
    if device == "cpu":
        os.environ["HELION_INTERPRET"] = "1"
    else:
        os.environ.pop("HELION_INTERPRET", None)
    os.environ.pop("TRITON_INTERPRET", None)


def is_helion_kernel(obj) -> bool:
    """Whether ``obj`` is a ``helion.Kernel``, told without importing helion."""
    return any(c.__name__ == "Kernel" and c.__module__.startswith("helion.") for c in type(obj).__mro__)


def not_helion(obj, name: str) -> wire.Failure:
    what = "a @triton.jit kernel" if type(obj).__module__.startswith("triton") else \
        "a plain function" if inspect.isfunction(obj) else f"a {type(obj).__name__}"
    return wire.Failure("signature", reason=(
        f"`{name}` is {what}, not a Helion kernel: this puzzle grades a function decorated with "
        f"@helion.kernel (import helion) whose work sits in `for tile in hl.tile(...)` loops."))


def load(worker, obj, name: str):
    if not is_helion_kernel(obj):
        return not_helion(obj, name)
    fn = obj.fn
    return wire.Loaded(params=(),
                       line=inspect.getsourcelines(fn)[1] if inspect.getsourcefile(fn) else None)


# ---- one case ---------------------------------------------------------------------------------
_COPIES: dict[int, tuple] = {}  # id(learner's kernel) -> (it, its compiler copy), for this worker


def _compiler_copy(kernel):
    """The learner's kernel with Helion's interpreter off: its compiler traces and lowers it. One
    copy per kernel and worker, so that Helion's own cache of bound kernels (keyed on the
    arguments' shapes, dtypes and specialisations) spares cases of the same signature a second
    trace; what is checked per case (host work, the values, the tiled run) still runs per case."""
    import helion
    from helion.runtime.ref_mode import RefMode
    kept = _COPIES.get(id(kernel))
    if kept is not None and kept[0] is kernel:
        return kept[1]
    settings = copy.copy(kernel.settings)
    settings.ref_mode = RefMode.OFF
    compiler = helion.Kernel(kernel.fn, settings=settings, configs=list(kernel.configs))
    _COPIES[id(kernel)] = (kernel, compiler)
    return compiler


_CODE: dict[tuple, tuple] = {}  # (id(bound kernel), config) -> (it, the Triton text for that config)


def _triton_code(bound, config) -> str:
    """The Triton Helion generates for ``config``, once per bound kernel and config (cases of the
    same signature and tile sizes: puzzle 38's three 3x150 cases)."""
    key = (id(bound), repr(config))
    kept = _CODE.get(key)
    if kept is None or kept[0] is not bound:
        kept = _CODE[key] = (bound, bound.to_triton_code(config))
    return kept[1]


def _place(location, path: str) -> tuple[int | None, str]:
    """A Helion source location as (the learner's line, its text), where it is in their file."""
    import linecache
    filename, line = getattr(location, "filename", None), getattr(location, "lineno", None)
    if not filename or not line or os.path.abspath(filename) != path:
        return None, ""
    return line, linecache.getline(path, line).strip()


def _helion_error(error, path: str) -> wire.Failure:
    """Helion's compiler refused the kernel: its reason, at the learner's line."""
    reason = str(error).split("\nWhile processing:")[0].strip()
    note = left_out(error)  # a module-level name the definitions-only import left out: its line, and why
    reason = f"{reason.rstrip('.')} ({note})" if note else reason
    line, source = _place(getattr(error, "location", None), path)
    if line is None:
        line, source = learner_frame(error, path)
    return wire.Failure("compile", error=f"Helion's compiler: {reason}", line=line, source=source)


def _described(result, torch) -> tuple[tuple, list]:
    values = result if isinstance(result, tuple) else (result,)
    info = tuple(wire.TensorInfo(tensor=True, shape=tuple(t.shape), dtype=dtype_name(t))
                 if isinstance(t, torch.Tensor) else wire.TensorInfo(tensor=False, type=type(t).__name__)
                 for t in values)
    return info, [tensor_bytes(t.detach().cpu()) for t in values if isinstance(t, torch.Tensor)]


def _changed(name: str, a, b) -> helion_wire.Changed | None:
    """How the kernel changed input ``name`` (``a`` before, ``b`` after), or None."""
    import torch
    differs = (a != b) & ~(a.isnan() & b.isnan()) if a.is_floating_point() else a != b
    if not bool(differs.any()):
        return None
    first = torch.nonzero(differs)[0]
    return helion_wire.Changed(name=name, count=int(differs.sum()), first=tuple(int(i) for i in first))


class _Printed:
    """What the learner's code printed over several steps; Helion's own warnings of work
    outside the loops are left out (the verdict says it with the line)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    @contextlib.contextmanager
    def capturing(self):
        with captured_output() as printed:
            yield
        self.parts += printed

    @property
    def text(self) -> str:
        text = "".join(self.parts)
        return re.sub(r"WARNING\[TensorOperationInWrapper\].*?(?:\n\n|$)", "", text, flags=re.S)


def _compile(compiler, views, values, tiling: tuple, path: str, name: str, reply: dict):
    """Step 1, Helion's compiler. Returns (args, bound kernel, config) or a Failure; ``reply``
    gets the config, the Triton code, and work outside the loops."""
    from helion import exc as helion_exc
    try:
        args = compiler.normalize_args(*views, **values)
        bound = compiler.bind(args)
        config, note, fixed = case_config(bound, *tiling)
        reply["config"] = f"block_sizes={config.config.get('block_sizes', [])}" + (f": {note}" if note else "")
        reply["fixed"] = tuple(helion_wire.FixedTile(name=f.name, extent=f.extent, size=f.size) for f in fixed)
        reply["triton"] = _triton_code(bound, config)
        host = host_work(bound, config, args, path)
    except helion_exc.NoDeviceLoopsInKernel:
        reply["outside"] = helion_wire.HostWork(line=inspect.getsourcelines(compiler.fn)[1], source=f"def {name}(...)",
                                         loops=False)
        return None
    except helion_exc.EmptyDeviceLoopAfterDCE as error:  # loops that do nothing: does the rest compute?
        host = host_work_eager(compiler, args, path)
        if host is None:
            return _helion_error(error, path)
    except helion_exc.BaseError as error:
        return _helion_error(error, path)
    except Exception as error:  # noqa: BLE001 (the learner's Python, traced by Helion)
        line, source = learner_frame(error, path)
        text = said(error).split("\nWhile processing:")[0]
        return wire.Failure("exception", error=text, line=line, source=source)
    if host is not None:
        reply["outside"] = _outside(host)
        return None
    return args, bound, config


def _outside(found) -> helion_wire.HostWork:
    """The wire's words for host work found (a host.HostOp)."""
    return helion_wire.HostWork(line=found.line, source=found.source, ops=found.ops, tensors=found.tensors,
                         called=found.called, called_line=found.called_line, called_source=found.called_source)


def _watched_run(bound, config, args: tuple, path: str, launch, reply: dict):
    """Helion's host code for ``config`` on ``args``, launching through ``launch``, with its host
    work recorded as it runs (host.watching): the first found goes in ``reply``."""
    host = bound.compile_config(config, allow_print=False)
    with watching(host, bound.kernel.fn, args, path, launch) as watched:
        try:
            return host(*args, _launcher=launch)
        finally:
            if watched.found is not None and "outside" not in reply:
                reply["outside"] = _outside(watched.found)


def _gpu_launcher():
    """Helion's own launcher, behind a function of ours, so that what runs inside it (the launch
    of the compiled Triton) is told from the host code's work."""
    from helion.runtime import default_launcher

    def launch(*args, **options):
        return default_launcher(*args, **options)
    return launch


def run(worker, msg: helion_wire.HelionRun, blobs: list[bytes]):
    torch = worker.torch
    path = os.path.abspath(msg.file)
    kernel = worker.kernel(path, msg.kernel)
    if not is_helion_kernel(kernel):
        return not_helion(kernel, msg.kernel), []
    _, views = worker.tensors(msg.buffers, blobs)
    values = dict(msg.values)
    before = [v.clone() for v in views]
    started, printed, reply = time.perf_counter(), _Printed(), {}

    def finish(failure=None, out=()):
        return (helion_wire.HelionRan(seconds=time.perf_counter() - started, printed=printed.text, failure=failure,
                               **reply), list(out))

    if worker.device == "cpu":
        register_mixed_dots(torch)  # fp16 dots into fp32 in Helion's interpreter
    compiler = _compiler_copy(kernel)
    with printed.capturing():
        compiled = _compile(compiler, views, values, (msg.blocks, msg.extents, msg.names), path, msg.kernel,
                            reply)
    if not isinstance(compiled, tuple):
        return finish(compiled)
    args, bound, config = compiled

    # 2. The values: Helion's interpreter on a CPU, the compiled kernel on a GPU.
    one_tile_limit = None  # what Helion's interpreter cannot run: the tiled run's values judge alone
    try:
        with printed.capturing():
            if worker.device == "cpu":  # the host code sees a GPU (grader.sandbox.world), as where it is used
                with gpu_world():
                    result = in_memory(kernel(*on_gpu(views), **values))
            else:  # the values judged: their host code is watched as it runs
                result = _watched_run(bound, config, args, path, _gpu_launcher(), reply)
                torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001 (the learner's code, run by Helion)
        limit = interpreter_limit(error)
        line, source = learner_frame(error, path)
        if limit is None:
            return finish(wire.Failure("exception", error=said(error), line=line,
                                       source=source))
        one_tile_limit = wire.Failure("interpreter_limit", error=f"Helion's interpreter: {limit}", line=line,
                                      source=source)
        if worker.device != "cpu" or not msg.tiled:
            return finish(one_tile_limit)
        out = []
    if one_tile_limit is None:  # (a kernel that returns None is described as such, and fails)
        reply["returned"], out = _described(result, torch)
        reply["modified"] = tuple(filter(None, (_changed(spec.name, a, b)
                                                for spec, a, b in zip(msg.buffers, before, views))))

    # 3. The Triton Helion generated, launched through Helion's own host code: written down for
    # the compile check, and on a CPU run tile by tile in Triton's interpreter.
    launches: list = []
    interpret, files = worker.device == "cpu" and msg.tiled, set()
    try:
        with printed.capturing():
            fresh = compiler.normalize_args(*(b.clone() for b in before), **values)
            with gpu_world():
                tiled = in_memory(_watched_run(bound, config, on_gpu(fresh), path, launcher(launches, interpret, files),
                                               reply))
    except Exception as error:  # noqa: BLE001 (Triton's interpreter on Helion's code: not the learner's)
        if interpret:  # on a GPU the values came from the compiled kernel: only launches would be missing
            reply["tiled_failure"] = tiled_limit(error, files, path, reply.get("config", "").partition(": ")[2])
        interpret = False
    reply["launches"] = tuple(launches)
    if "outside" in reply:  # the host code computed in a run that is judged: that decides the case
        return finish(out=out)
    if one_tile_limit is not None:  # e.g. hl.inline_triton: its Triton runs in the tiled run only
        if not interpret:
            return finish(reply.pop("tiled_failure", None) or one_tile_limit)
        reply["one_tile_limit"] = one_tile_limit.error
        reply["modified"] = tuple(filter(None, (_changed(spec.name, a, b)
                                                for spec, a, b in zip(msg.buffers, before, fresh))))
    if interpret:
        reply["tiled"], more = _described(tiled, torch)
        out += more
    return finish(out=out)
