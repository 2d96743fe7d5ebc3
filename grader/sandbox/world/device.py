"""``torch.cuda`` as an H100 answers it, on a machine that has no GPU.

A learner's Python graded on the CPU may ask PyTorch about the GPU: ``torch.cuda.is_available()``,
the number of SMs to size a persistent grid, the capability to pick a kernel. Each question gets
the answer an H100 SXM (sm_90, 132 SMs, 80 GB) gives, so code that asks takes the path it takes on
the GPUs the grade stands for; Triton's active driver answers as that GPU's too. The answers are
installed only while :func:`answering` is active (learner code runs inside it); outside,
``torch.cuda`` and Triton's driver are their own again.
"""
from __future__ import annotations

import contextlib
import functools

import torch

NAME = "NVIDIA H100 80GB HBM3"
CAPABILITY = (9, 0)
SMS = 132
MEMORY = 80 * 1024**3


class DeviceProperties(torch.cuda._CudaDeviceProperties):
    """What ``torch.cuda.get_device_properties`` returns for an H100: the fields PyTorch's own
    object has, under its name, and an instance of the class PyTorch exports for it."""

    def __new__(cls):
        return object.__new__(cls)  # PyTorch's CPU build makes its own class refuse instances

    def __init__(self) -> None:
        self.name, self.major, self.minor = NAME, *CAPABILITY
        self.multi_processor_count, self.total_memory = SMS, MEMORY
        self.warp_size, self.max_threads_per_multi_processor = 32, 2048
        self.max_threads_per_block, self.regs_per_multiprocessor = 1024, 65536
        self.shared_memory_per_block, self.shared_memory_per_block_optin = 49152, 232448
        self.shared_memory_per_multiprocessor, self.L2_cache_size = 233472, 50 * 1024**2
        self.is_integrated, self.is_multi_gpu_board, self.gcnArchName = 0, 0, "NVIDIA H100 80GB HBM3"
        self.clock_rate, self.memory_clock_rate, self.memory_bus_width = 1980000, 2619000, 5120

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 1024**2}MB, multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // 1024**2}MB)")


DeviceProperties.__name__ = DeviceProperties.__qualname__ = "_CudaDeviceProperties"
DeviceProperties.__module__ = "torch._C"


@functools.cache
def properties() -> DeviceProperties:
    """The H100's properties, made when first asked: only where the world answers, on a machine
    without a GPU. A CUDA build's class refuses ``object.__new__``, so made at import it broke
    every worker on a GPU."""
    return DeviceProperties()


def _index(device=None) -> int:
    """The one GPU's index, for any way of naming it; another device raises as PyTorch does."""
    if device is None or isinstance(device, int):
        index = device
    else:
        device = torch.device(device)
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    if index not in (None, 0, -1):
        raise AssertionError("Invalid device id")
    return 0


class _Device:
    """``torch.cuda.device(...)``: a context manager that selects the one GPU there is."""

    def __init__(self, device=None) -> None:
        self.idx = _index(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def get_device_properties(device=None):
    _index(device)
    return properties()


def get_device_capability(device=None) -> tuple[int, int]:
    _index(device)
    return CAPABILITY


def get_device_name(device=None) -> str:
    _index(device)
    return NAME


def get_arch_list() -> list[str]:
    return ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]


def synchronize(device=None) -> None:
    _index(device)


def set_device(device) -> None:
    _index(device)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


class _Stream:
    """``torch.cuda.current_stream()``: the one stream, on which everything is already done."""

    device, cuda_stream, stream_id = torch.device("cuda", 0), 0, 0

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait_stream(self, stream) -> None:
        pass


_Stream.__name__ = _Stream.__qualname__ = "Stream"


def current_stream(device=None):
    _index(device)
    return _Stream()


def default_stream(device=None):
    _index(device)
    return _Stream()


def empty_cache() -> None:
    pass


def memory_allocated(device=None) -> int:
    _index(device)
    return 0


def mem_get_info(device=None) -> tuple[int, int]:
    _index(device)
    return MEMORY, MEMORY


# The GPU's random numbers are the CPU's generator's, where its tensors' memory is made.
def get_rng_state(device="cuda") -> torch.Tensor:
    _index(device)
    return torch.get_rng_state()


def set_rng_state(new_state: torch.Tensor, device="cuda") -> None:
    _index(device)
    torch.set_rng_state(new_state)


def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)


def _get_device_properties(device: int = 0):
    """What PyTorch's own ``get_device_properties`` (kept by a library that imported it) reads
    once CUDA is initialised."""
    _index(device)
    return properties()


def _lazy_init() -> None:
    """A CUDA device named in a call (``x.to("cuda")``): the GPU tensors here need no driver."""


ANSWERS = {f.__name__: f for f in (is_available, is_initialized, device_count, current_device, get_device_properties,
                                   get_device_capability, get_device_name, get_arch_list, synchronize, set_device,
                                   is_bf16_supported, get_rng_state, set_rng_state, manual_seed, _get_device_properties,
                                   current_stream, default_stream, empty_cache, memory_allocated, mem_get_info,
                                   _lazy_init)}
ANSWERS["max_memory_allocated"] = memory_allocated
ANSWERS["manual_seed_all"] = manual_seed
ANSWERS["device"] = _Device
for _answer in ANSWERS.values():  # named as PyTorch's own are
    _answer.__module__ = "torch.cuda"
_Device.__name__ = _Device.__qualname__ = "device"


class TritonDriver:
    """Triton's active driver as an H100's answers it (``triton.runtime.driver.active``): what a
    launcher written as Triton's tutorials write it asks (``utils.get_device_properties``, the
    target, the device). A CPU has no driver of its own: asking raised there."""

    PROPERTIES = {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": SMS, "warpSize": 32,
                  "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}

    def __init__(self) -> None:
        import types
        self.utils = types.SimpleNamespace(get_device_properties=lambda device=0: dict(self.PROPERTIES))

    def is_active(self) -> bool:
        return True

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        _index(device)

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_active_torch_device(self):
        return torch.device("cuda", 0)

    def get_device_interface(self):
        return torch.cuda


@contextlib.contextmanager
def _triton_driver():
    """Triton's active driver is an H100's inside, where Triton has none of its own to answer."""
    from triton.runtime import driver
    kept = driver._active
    driver.set_active(TritonDriver())
    try:
        yield
    finally:
        driver._active = kept


@contextlib.contextmanager
def answering():
    """``torch.cuda`` answers as an H100 inside; PyTorch's own answers are back after. Where a GPU
    is there, its own answers stand."""
    module = torch.cuda
    if module.is_available():
        yield
        return
    kept = {name: module.__dict__[name] for name in ANSWERS if name in module.__dict__}
    for name, answer in ANSWERS.items():
        setattr(module, name, answer)
    try:
        with _triton_driver():
            yield
    finally:
        for name in ANSWERS:
            if name in kept:
                setattr(module, name, kept[name])
            else:
                delattr(module, name)
