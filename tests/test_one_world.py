"""Learner code sees one machine, a GPU (grader.sandbox.world): graded on the CPU, a wrapper's and
Helion host code's tensors say ``cuda:0`` however they are asked, ``torch.cuda`` answers as an H100,
and the values sit in CPU memory for the interpreters. Code that takes another path on the CPU
than on a GPU takes the GPU's here, and is graded on it: the device sniffers of the hostile corpus
(tests/hostile/puzzle15_sniffs_device_*, puzzle35_sniffs_device_*) pass on a CPU without the
world, and fail with it."""
from __future__ import annotations

import pytest
import torch

from conftest import COURSE, HAVE_HELION, NO_HELION, ROOT
from grader.app.selftest import declared
from grader.judge.options import Options
from grader.judge.session import grade_many
from grader.sandbox.world import gpu_world, in_memory, on_gpu, properties

HOSTILE = ROOT / "tests" / "hostile"
SNIFFERS = sorted(HOSTILE.glob("puzzle15_sniffs_device_*.py")) + sorted(HOSTILE.glob("puzzle35_sniffs_device_*.py"))
CLASS_SNIFFER = HOSTILE / "puzzle35_sniffs_tensor_class.py"
REAL_GPU = torch.cuda.is_available()
no_gpu_here = pytest.mark.skipif(REAL_GPU, reason="with a GPU the tensors and answers are its own")


def _properties(x):
    try:
        return torch.cuda.get_device_properties(x.device).multi_processor_count
    except Exception:  # noqa: BLE001 (what a sniffer catches)
        return None


def _driver():
    from triton.runtime import driver
    return driver.active


# (how the question is asked, what a GPU answers)
QUESTIONS = {
    "is_cuda": (lambda x: x.is_cuda, True),
    "__getattribute__": (lambda x: x.__getattribute__("is_cu" + "da"), True),
    "getattr": (lambda x: getattr(x, "is_cuda"), True),
    "device.type": (lambda x: x.device.type, "cuda"),
    "str(device)": (lambda x: str(x.device), "cuda:0"),
    "device": (lambda x: x.device, torch.device("cuda", 0)),
    "is_cpu": (lambda x: x.is_cpu, False),
    "get_device": (lambda x: x.get_device(), 0),
    "repr": (lambda x: repr(x).endswith("device='cuda:0')"), True),
    "type name": (lambda x: type(x).__name__, "Tensor"),
    "a view's device": (lambda x: x.view(-1)[1:].device.type, "cuda"),
    "a result's device": (lambda x: (x * 2).sum().device.type, "cuda"),
    "get_device_properties": (_properties, 132),
    "is_available": (lambda x: torch.cuda.is_available(), True),
    "device_count": (lambda x: torch.cuda.device_count(), 1),
    "get_device_capability": (lambda x: torch.cuda.get_device_capability(x.device), (9, 0)),
    "current_device": (lambda x: torch.cuda.current_device(), 0),
    "synchronize": (lambda x: torch.cuda.synchronize(), None),
    "current_stream": (lambda x: torch.cuda.current_stream(x.device).query(), True),
    "mem_get_info": (lambda x: torch.cuda.mem_get_info(x.device)[1], 80 * 1024**3),
    "Triton's driver": (lambda x: _driver().utils.get_device_properties(0)["multiprocessor_count"], 132),
    "Triton's target": (lambda x: (_driver().get_current_target().backend, _driver().get_current_target().arch),
                        ("cuda", 90)),
}


@no_gpu_here
@pytest.mark.parametrize("ask", QUESTIONS, ids=list(QUESTIONS))
def test_every_way_of_asking_where_a_tensor_is_answers_as_a_gpu(ask):
    question, gpu = QUESTIONS[ask]
    with gpu_world():
        assert question(on_gpu(torch.ones(4, 3))) == gpu


@no_gpu_here
def test_torch_cuda_answers_as_an_h100_inside_the_world_and_as_pytorchs_own_after():
    from triton.runtime import driver
    kept = driver._active
    with gpu_world():
        props = torch.cuda.get_device_properties(0)
        assert (props.name, props.major, props.minor, props.multi_processor_count) == \
            ("NVIDIA H100 80GB HBM3", 9, 0, 132)
        assert props.total_memory == 80 * 1024**3 and isinstance(props, torch.cuda._CudaDeviceProperties)
        assert torch.cuda.get_device_name() == "NVIDIA H100 80GB HBM3"
        with pytest.raises(ValueError, match="Expected a cuda device"):
            torch.cuda.get_device_properties("cpu")
    assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
    assert properties().multi_processor_count == 132
    assert driver._active is kept  # Triton's own driver again (none, on a CPU)


@no_gpu_here
def test_importing_the_world_makes_no_device_properties():
    """A CUDA build's ``_CudaDeviceProperties`` refuses ``object.__new__``: an instance made at import
    failed every worker on a GPU, where the world never answers. Made when first asked, in a fresh
    process nothing has asked yet."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", "import grader.sandbox.world as w, grader.sandbox.world.device as d; "
                           "print(d.properties.cache_info().currsize)"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "0", done.stderr[-2000:]


def test_the_values_live_in_cpu_memory_and_views_stay_views():
    memory = torch.arange(6.0).reshape(2, 3)
    with gpu_world():
        x = on_gpu(memory)
        x.view(-1)[4] = 40.0
        x[0, 0] = 7
        x.t()[2].fill_(-1)
        assert x.data_ptr() == memory.data_ptr()
        total = x.sum().item()
    assert memory.tolist() == [[7.0, 1.0, -1.0], [3.0, 40.0, -1.0]] and total == 49.0
    assert in_memory((x, [x], {"x": x}))[1][0] is memory


@no_gpu_here
def test_what_code_allocates_on_the_gpu_is_on_the_gpu_and_what_it_sends_there_is_a_copy():
    with gpu_world():
        x = on_gpu(torch.ones(3))
        made = [torch.empty(3, device="cuda"), torch.zeros(2, device=x.device), torch.empty_like(x), x.new_empty(5),
                torch.full((2,), 3.0, device=x.device), torch.arange(4, device=x.device),
                torch.tensor([1.0, 2.0], device=x.device), torch.ones(2).cuda(), torch.ones(2).to(x.device)]
        assert all(t.is_cuda for t in made)
        cpu = torch.zeros(2)
        sent = cpu.to("cuda")
        sent.fill_(5.0)
        assert cpu.tolist() == [0.0, 0.0]  # a transfer copies
        assert x.to(x.device) is x and x.cuda() is x and x.contiguous() is x


@no_gpu_here
def test_asking_for_the_cpu_gives_a_cpu_tensor_and_numpy_refuses_a_gpu_one_as_on_a_gpu():
    with gpu_world():
        x = on_gpu(torch.arange(3.0))
        for back in (x.cpu(), x.to("cpu"), x.to(torch.device("cpu"), torch.float16)):
            assert not back.is_cuda and type(back) is torch.Tensor
        back = x.cpu()
        back[0] = 9.0
        assert in_memory(x)[0] == 0.0  # a copy, as a transfer is
        with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
            x.numpy()
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            x + torch.ones(3)
        assert (x + torch.tensor(1.0)).is_cuda  # a 0-d CPU tensor is a scalar to CUDA too


HELION_HOST = '''import helion
import helion.language as hl
import torch


def helper(x):
    return QUESTION


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    if helper(x):
        z = torch.empty_like(y)
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
'''


@pytest.mark.parametrize("question, refused", [
    ("type(x) is torch.Tensor", "`type(x)` asks for a value's Python class"),
    ("x.__class__.__name__ == 'Tensor'", "`x.__class__` asks for a value's Python class"),
    ("len(type(x).__mro__) == 2", "`type(x).__mro__` reads a class's ancestry"),
    ("isinstance(x, torch.Tensor)", None),
    ("x.__getattribute__('is_cu' + 'da')", None),  # the world answers it as a GPU does: nothing to refuse
])
def test_the_one_question_the_world_cannot_answer_as_a_gpu_is_refused_in_helion_host_code(tmp_path, question,
                                                                                          refused):
    """A GpuTensor is of a class of the grader's own: ``type(x) is torch.Tensor`` is false on the
    CPU and true on a GPU. Read in the kernel and the functions of its file it calls."""
    from grader.source import sniffing
    path = tmp_path / "puzzle35_asks.py"
    path.write_text(HELION_HOST.replace("QUESTION", question))
    finding = sniffing.check_file(path, None)
    if refused is None:
        assert finding is None
        return
    assert (finding.function, finding.line, finding.what) == ("helper", 7, refused)
    assert sniffing.message(finding).startswith(f"`helper` at line 7: `return {question}`: {refused}. Graded on a "
                                                f"CPU, your host code gets tensors that act as a GPU's")
    assert sniffing.message(finding).endswith("Fix: ask `isinstance(x, torch.Tensor)`, which is true on every machine.")


def _grade(paths) -> dict:
    report = grade_many(COURSE, [(p.name[:8], p) for p in paths], Options(timeout=30), jobs=2)
    return {p.name: r for p, r in zip(paths, report.results)}


@pytest.fixture(scope="module")
def sniffers():
    paths = [p for p in [*SNIFFERS, CLASS_SNIFFER] if HAVE_HELION or p.name[:8] != "puzzle35"]
    return _grade(paths)


@pytest.mark.slow  # grades twelve files
@no_gpu_here
@pytest.mark.parametrize("path", SNIFFERS, ids=[p.stem for p in SNIFFERS])
def test_a_sniffer_takes_its_gpu_path_on_the_cpu_and_fails_there(path, sniffers):
    if path.name[:8] == "puzzle35" and not HAVE_HELION:
        pytest.skip(NO_HELION)
    expect, result = declared(path), sniffers[path.name]
    assert result.status == "fail", f"{path.name} was graded {result.status}: {result.message}"
    first = result.first_failure
    assert first.kind == expect["EXPECT_KIND"] == "torch_compute", first.message
    assert expect["EXPECT_SAYS"] in result.message, result.message


@pytest.mark.slow  # grades one file (with the sniffers)
@pytest.mark.skipif(not HAVE_HELION, reason=NO_HELION)
def test_a_sniffer_of_the_tensors_class_is_refused_before_it_runs(sniffers):
    expect, result = declared(CLASS_SNIFFER), sniffers[CLASS_SNIFFER.name]
    assert result.status == "fail" and result.first_failure.kind == expect["EXPECT_KIND"] == "sniffing"
    assert expect["EXPECT_SAYS"] in result.message, result.message


HONEST_WRAPPER = '''import torch
from triton.runtime import driver

import device_sniffs


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count  # sizes nothing: asked, as code does
        props = driver.active.utils.get_device_properties(driver.active.get_current_device())  # Triton's tutorials
        assert sms == props["multiprocessor_count"] > 0 and x.__getattribute__("is_cu" + "da")
        device = "cuda" if torch.cuda.is_available() else "cpu"  # Liger's infer_device()
        assert x.is_cuda and x.device.type == device, "x must be on a GPU"  # as library wrappers check
        return device_sniffs.forward(x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        return device_sniffs.backward(x, weight, grad_output)
'''
HONEST_HELION = '''import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def helion_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty(x.shape, dtype=x.dtype, device="cuda")  # where it is used, there is a GPU
    for tile in hl.tile(x.size(0)):
        z[tile] = x[tile] + y[tile]
    return z
'''


@pytest.mark.slow  # grades two files
@no_gpu_here
def test_code_that_asks_about_the_gpu_and_needs_it_passes_on_the_cpu(tmp_path):
    """Correct code that needs the GPU it is used on failed where it was graded: a wrapper asking
    ``torch.cuda`` or Triton's driver for the GPU's properties (as Triton's fused-softmax tutorial
    does), Helion host code allocating with ``device="cuda"`` (each raised: "Torch not compiled with
    CUDA enabled", "0 active drivers"). The CPU answers as that GPU now."""
    import shutil
    shutil.copy(HOSTILE / "device_sniffs.py", tmp_path / "device_sniffs.py")
    paths = [tmp_path / "puzzle15_asks_the_gpu.py"] + ([tmp_path / "puzzle35_asks_the_gpu.py"] if HAVE_HELION else [])
    paths[0].write_text(HONEST_WRAPPER)
    if HAVE_HELION:
        paths[1].write_text(HONEST_HELION)
    for path, result in _grade(paths).items():
        assert result.status == "pass", f"{path}: {result.message}"
