"""What ``--bench`` holds against the learner's code, which runs in the timed process.

An autograd wrapper, an autotuner's prune function, a heuristic: each is Python of the
learner's that runs inside the worker that times it. So the timer and its checks are taken
from here, where they were captured when the worker's zygote imported this module, before any
learner file was imported or run (:func:`grader.sandbox.worker.prepare`):

* **The clock.** ``time.perf_counter``, the CUDA event's C methods and the device-wide
  synchronise are held as references; replacing ``time.perf_counter`` or
  ``torch.cuda.Event.elapsed_time`` later changes nothing here.
* **What may not change** (:func:`watched`): the public names of ``time``, ``torch``,
  ``torch.cuda``, ``torch.nn.functional``, ``triton.testing`` and the like, every attribute of
  ``torch.Tensor`` and ``torch.cuda.Event``, and this module's and the bench's own; and the
  process's switches (:func:`switches`): grad and anomaly mode, TF32, SDPA's backends,
  PyTorch's function and dispatch modes, profile and trace hooks, signal handlers. A run that
  changes any of them is refused: a patched timer lies, and a slowed baseline flatters.
* **Threads** (:func:`threads`), Python's, before and after each of the learner's calls: a
  thread that outlives a call can do its work after the timer stopped.
* **Audit events** (``sys.addaudithook``, which nothing can remove): walking the garbage
  collector, installing a profile or trace hook, and ctypes or frame access from the
  learner's own lines, while the learner's code runs.
* **The L2 cache** (CUDA): the persisting carve-out set to zero and the stream's access policy
  window cleared through the driver (``cuCtxSetLimit``, ``cuStreamSetAttribute``), and read
  back after each call.

All of it is reported as facts; the grader (:mod:`grader.judge.bench.integrity`) decides.
"""
from __future__ import annotations

import _thread
import ctypes
import gc
import os
import signal
import sys
import threading
import time

import torch

# ---- the clock and the tools, captured before any learner code ran --------------------------
perf = time.perf_counter
urandom = os.urandom
_getframe = sys._getframe
_enumerate = threading.enumerate
_count = _thread._count
_DummyThread = threading._DummyThread
_getprofile, _gettrace = sys.getprofile, sys.gettrace
_getsignal = signal.getsignal
_EventBase = getattr(torch._C, "_CudaEventBase", None)
_event_new = torch.cuda.Event.__new__
_EventClass = torch.cuda.Event
_record = getattr(_EventBase, "record", None)
_elapsed = getattr(_EventBase, "elapsed_time", None)
_cuda_sync = getattr(torch._C, "_cuda_synchronize", None)
_CUDAGraph = getattr(torch.cuda, "CUDAGraph", None)
_graph_capture = getattr(torch.cuda, "graph", None)
_stream_context, _Stream = torch.cuda.stream, torch.cuda.Stream
_current_stream_id = getattr(torch._C, "_cuda_getCurrentStream", None)
_STDLIB = os.path.dirname(os.__file__) + os.sep


class Clock:
    """One timed call's figures, on the GPU: the events around the call on the stream the
    learner's kernels run on, and the host's clock to a device-wide synchronise. Each call is
    preceded on the stream by its ``prelude`` (the inputs re-written, the outputs poisoned, L2
    flushed: GPU work that keeps the GPU busy while the host issues the call, as
    ``triton.testing.do_bench``'s flush does, so a launch's latency is not timed), between a
    first event and the call's start. On the CPU (the test path) both figures are the host's
    clock around the call."""

    def __init__(self, device: str) -> None:
        self.cuda = device == "cuda"
        if self.cuda:
            self.stream = torch.cuda.current_stream()
            self.before, self.start, self.end = (_event_new(_EventClass, enable_timing=True) for _ in range(3))

    def sync(self) -> None:
        if self.cuda:
            _cuda_sync()

    def stream_id(self):
        return _current_stream_id(self.stream.device_index) if self.cuda else None

    def time(self, call, prelude=None, after=None) -> tuple[float, float]:
        """(event ms, wall ms) of ``call()``. The wall figure is the host's clock from the first
        event to the synchronise, less the prelude's GPU time: what the call took to finish on
        the whole device. ``after()`` runs once the call has returned, before the synchronise."""
        self.sync()
        t0 = perf()
        if self.cuda:
            _record(self.before, self.stream)
        if prelude is not None:
            prelude()
        if self.cuda:
            _record(self.start, self.stream)
        else:
            t0 = perf()
        call()
        if self.cuda:
            _record(self.end, self.stream)
        t_host = perf()
        if after is not None:
            after()
        self.sync()
        t1 = perf()
        if not self.cuda:
            return (t_host - t0) * 1e3, (t1 - t0) * 1e3
        return _elapsed(self.start, self.end), (t1 - t0) * 1e3 - _elapsed(self.before, self.start)


# ---- the learner's windows and the audit hook ----------------------------------------------
# Always suspect while learner code runs, whoever raises them.
ALWAYS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.setprofile", "sys.settrace",
                    "sys._setprofileallthreads", "sys._settraceallthreads", "sys._current_frames"})
# Suspect when the learner's own lines raise them (the libraries use ctypes and frames themselves).
DIRECT = frozenset({"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
                    "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.create_string_buffer",
                    "sys._getframe", "sys._getframemodulename"})


class _Audit:
    window = False  # learner code is running
    busy = False    # inside the hook (sys._getframe raises an event of its own)
    installed = False
    seen: list = []  # (event, file, line), in order


def _learner_line():
    """The first frame outside the standard library, where it is a learner file's: (file, line)."""
    from grader.sandbox.learner_import import _loaded
    frame = _getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_STDLIB):
        frame = frame.f_back
    if frame is not None and frame.f_code.co_filename in _loaded:
        return frame.f_code.co_filename, frame.f_lineno
    return None


def _hook(event: str, args) -> None:
    if not _Audit.window or _Audit.busy or (event not in ALWAYS and event not in DIRECT):
        return
    _Audit.busy = True
    try:
        where = _learner_line()
        if event in ALWAYS or where is not None:
            _Audit.seen.append((event, *(where or ("", 0))))
    finally:
        _Audit.busy = False


def install() -> None:
    """The audit hook, once per process (it cannot be removed)."""
    if not _Audit.installed:
        sys.addaudithook(_hook)
        _Audit.installed = True


class Learner:
    """``with Learner():`` around each call into learner code: its audit events count."""

    def __enter__(self):
        _Audit.window = True

    def __exit__(self, *exc):
        _Audit.window = False
        return False


def audit_seen() -> list:
    return list(_Audit.seen)


# ---- threads --------------------------------------------------------------------------------
def threads() -> tuple[frozenset, int]:
    """The process's Python threads: those ``threading`` started, and how many ``_thread``
    started (a thread started with ``_thread.start_new_thread`` is only counted). Native
    threads are left out, and so are the "dummy" ones ``threading`` makes up for a native
    thread that runs Python (autograd's CUDA thread, running a wrapper's backward): libraries
    start their pools lazily (OpenBLAS, OpenMP, MLIR, the CUDA driver, autograd), and learner
    code reaches native threads only through ctypes, which the audit hook sees."""
    return frozenset(t.ident for t in _enumerate() if not isinstance(t, _DummyThread)), _count()


def started(before: tuple[frozenset, int], after: tuple[frozenset, int]) -> int:
    """Threads alive in ``after`` that were not in ``before``."""
    return max(len(after[0] - before[0]), after[1] - before[1])


# ---- what may not change ------------------------------------------------------------------
OWN = ("grader.sandbox.bench.guard", "grader.sandbox.bench.loop", "grader.sandbox.bench.run",
       "grader.sandbox.learner_import")

def _namespaces() -> dict:
    import torch.nn.functional as functional
    import triton
    import triton.testing
    spaces = {"time": time, "torch": torch, "torch.cuda": torch.cuda, "torch.nn.functional": functional,
              "torch.autograd": torch.autograd, "torch.backends.cuda": torch.backends.cuda, "triton": triton,
              "triton.testing": triton.testing, "gc": gc, "threading": threading, "_thread": _thread, "os": os,
              "sys": sys}
    whole = {"torch.Tensor": torch.Tensor, "torch.cuda.Event": torch.cuda.Event, "torch.cuda.Stream": torch.cuda.Stream}
    # the bench's own modules, by name (importing them here would make a circle)
    whole |= {name: sys.modules[name] for name in OWN if name in sys.modules}
    return ({name: (space, False) for name, space in spaces.items()}
            | {name: (space, True) for name, space in whole.items()})


def watched() -> dict:
    """Every watched name and the object it holds now (public names; all of the ``whole`` ones)."""
    held = {}
    for prefix, (space, whole) in _namespaces().items():
        for name, value in list(vars(space).items()):
            if whole or not name.startswith("_"):
                held[f"{prefix}.{name}"] = value
    return held


def changed(before: dict, after: dict) -> list[str]:
    """Names that hold another object now, or were removed (names added since do not count)."""
    return sorted(name for name, value in before.items() if name not in after or after[name] is not value)


def _switch_getters() -> dict:
    b = torch.backends
    getters = {
        "torch.is_grad_enabled()": torch.is_grad_enabled, "torch.is_inference_mode_enabled()":
            torch.is_inference_mode_enabled, "torch.is_anomaly_enabled()": torch.is_anomaly_enabled,
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision,
        "torch.get_default_dtype()": torch.get_default_dtype, "torch.get_num_threads()": torch.get_num_threads,
        "torch.backends.cuda.matmul.allow_tf32": lambda: b.cuda.matmul.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda: b.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            lambda: b.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.backends.cudnn.enabled": lambda: b.cudnn.enabled,
        "torch.backends.cudnn.benchmark": lambda: b.cudnn.benchmark,
        "torch.backends.cudnn.allow_tf32": lambda: b.cudnn.allow_tf32,
        "torch.backends.cuda.flash_sdp_enabled()": b.cuda.flash_sdp_enabled,
        "torch.backends.cuda.mem_efficient_sdp_enabled()": b.cuda.mem_efficient_sdp_enabled,
        "torch.backends.cuda.math_sdp_enabled()": b.cuda.math_sdp_enabled,
        "torch.backends.cuda.cudnn_sdp_enabled()": getattr(b.cuda, "cudnn_sdp_enabled", lambda: None),
        "the TorchFunctionMode stack": torch._C._len_torch_function_stack,
        "the TorchDispatchMode stack": getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0),
        "sys.getprofile()": lambda: _getprofile() is None, "sys.gettrace()": lambda: _gettrace() is None,
        "threading.setprofile()": lambda: getattr(threading, "_profile_hook", None) is None,
        "threading.settrace()": lambda: getattr(threading, "_trace_hook", None) is None,
        "gc.isenabled()": gc.isenabled, "sys.getswitchinterval()": sys.getswitchinterval,
    }
    for number in (signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF, signal.SIGUSR1, signal.SIGUSR2):
        getters[f"the {signal.Signals(number).name} handler"] = (lambda n=number: _getsignal(n))
    return getters


_SWITCHES = _switch_getters()


def switches() -> dict:
    """The process's switches that a baseline or the timer depends on, as they are now."""
    states = {}
    for name, getter in _SWITCHES.items():
        try:
            states[name] = getter()
        except Exception:  # noqa: BLE001 (a build without that switch)
            states[name] = None
    return states


def switched(before: dict, after: dict) -> list[str]:
    return sorted(name for name in before if after.get(name) != before[name])


# ---- L2 (CUDA) -------------------------------------------------------------------------------
_LIMIT_PERSISTING_L2 = 0x06            # CU_LIMIT_PERSISTING_L2_CACHE_SIZE
_STREAM_ACCESS_POLICY_WINDOW = 1       # CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW
_ATTRIBUTE_BYTES = 64                  # sizeof(CUstreamAttrValue): a union padded to 64 bytes


class L2:
    """The persisting-L2 carve-out and the stream's access policy window, through the driver.
    ``None`` figures: the driver would not say (no libcuda, or a GPU without persisting L2)."""

    def __init__(self, stream) -> None:
        self.stream = ctypes.c_void_p(stream.cuda_stream)
        try:
            self.cuda = ctypes.CDLL("libcuda.so.1")
        except OSError:
            self.cuda = None

    def clear(self) -> None:
        """No persisting lines: a carve-out of zero, lines reset, the stream's window empty."""
        if self.cuda is None:
            return
        self.cuda.cuCtxSetLimit(ctypes.c_int(_LIMIT_PERSISTING_L2), ctypes.c_size_t(0))
        self.cuda.cuCtxResetPersistingL2Cache()
        value = (ctypes.c_char * _ATTRIBUTE_BYTES)()  # base 0, 0 bytes, hit ratio 0, both properties normal
        self.cuda.cuStreamSetAttribute(self.stream, ctypes.c_int(_STREAM_ACCESS_POLICY_WINDOW), value)

    def state(self) -> tuple[int | None, int | None]:
        """(the carve-out in bytes, the stream's window in bytes)."""
        if self.cuda is None:
            return None, None
        limit = ctypes.c_size_t(0)
        got_limit = self.cuda.cuCtxGetLimit(ctypes.byref(limit), ctypes.c_int(_LIMIT_PERSISTING_L2)) == 0
        value = (ctypes.c_char * _ATTRIBUTE_BYTES)()
        got_window = self.cuda.cuStreamGetAttribute(self.stream, ctypes.c_int(_STREAM_ACCESS_POLICY_WINDOW),
                                                    value) == 0
        window = int.from_bytes(bytes(value[8:16]), sys.byteorder)  # CUaccessPolicyWindow.num_bytes
        return (limit.value if got_limit else None), (window if got_window else None)
