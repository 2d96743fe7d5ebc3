#!/usr/bin/env bash
# The GPU side of a release check, on the device tool's machine (torch 2.11, triton 3.6, Python
# 3.12), in two calls of under 10 minutes each. Wheels the image lacks travel in .whl (numpy 2.3.5,
# msgspec, nbformat and its needs, helion 1.5.1); helion beside torch 2.11 needs the one-name shim
# (benchmarks/helion_torch_compat.py). Logs and JSON go to $OUT.
#   bash benchmarks/gpu_release_check.sh verdicts   # the image's numpy first (the grader must refuse, saying
#                                                   # why), then numpy 2.3.5 and every verdict on the GPU
#   bash benchmarks/gpu_release_check.sh rest       # Helion's truth corpus, the interpreter/GPU probe,
#                                                   # the unit tests on Python 3.12
#   bash benchmarks/gpu_release_check.sh cuda       # numpy 2.3.5, every verdict on the GPU
#   bash benchmarks/gpu_release_check.sh interpreter  # the batched engine against this Triton's serial
#                                                   # interpreter, then every verdict in the interpreter
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
step() {  # step NAME SECONDS COMMAND...: time-limited, its output in $OUT/NAME.txt, a line in steps.txt
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    echo "$name: exit $?, $((SECONDS - start)) s" | tee -a "$OUT/steps.txt"
}
install() {  # install [numpy]: the wheels, with or without numpy 2.3.5; the shim as a .pth
    local wheels=(.whl/*.whl)
    [ "$1" = numpy ] || wheels=($(ls .whl/*.whl | grep -v numpy))
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --force-reinstall "${wheels[@]}" \
        >> "$OUT/install.txt" 2>&1
    local site
    site=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    cp benchmarks/helion_torch_compat.py "$site/_helion_torch_compat.py"
    echo "import _helion_torch_compat" > "$site/_helion_torch_compat.pth"
    python3 -c "import sys, numpy, torch, triton; print(sys.version.split()[0], 'numpy', numpy.__version__, 'torch', \
torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/steps.txt"
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$OUT/steps.txt"
case "${1:-verdicts}" in
verdicts)
    install  # the image's own numpy 2.5.2
    step doctor_image_numpy 90 python3 -m grader doctor
    step p23_image_numpy 120 python3 -m grader puzzle23 --file tests/wrong_kernels/puzzle23_target_load_unmasked.py \
        --device cuda
    install numpy
    step verdicts_cuda 420 python3 benchmarks/verdicts.py run --device cuda --jobs 12 --out "$OUT/cuda.json"
    ;;
cuda)  # every verdict on the GPU, numpy 2.3.5 only (the image's numpy refusal is the verdicts mode's)
    install numpy
    step verdicts_cuda 540 python3 benchmarks/verdicts.py run --device cuda --jobs 12 --out "$OUT/cuda.json"
    ;;
interpreter)
    install numpy
    step engine_check 300 python3 tests/engine_runner.py --check
    step verdicts_cpu 480 python3 benchmarks/verdicts.py run --device cpu --jobs 14 --out "$OUT/cpu.json"
    ;;
rest)
    install numpy
    step helion_truth 240 python3 benchmarks/helion_truth.py --device cuda --jobs 8
    step probe 90 python3 benchmarks/interpreter_vs_gpu.py --device cuda --json "$OUT/probe.json"
    step units_py312 150 python3 -m pytest -q -p no:cacheprovider -m "not slow" tests/test_course_units.py \
        tests/test_judge_units.py tests/test_channel_units.py tests/test_report_units.py tests/test_failures.py \
        tests/test_wire.py tests/test_semantics.py tests/test_launch_limits.py tests/test_helion_host.py tests/test_layout.py
    ;;
esac
