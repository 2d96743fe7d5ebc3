#!/usr/bin/env bash
# The Helion track on one GPU, as one call (issue 24): the wheels in .whl installed offline, the
# solutions of puzzles 35-42 graded with --device cuda, then the Helion solutions timed at their
# headline sizes (benchmarks/helion_bench.py) beside the course's Triton solutions of the same
# puzzles (benchmarks/bench_headlines.py) and PyTorch. Logs in $OUT, each step time-limited.
#   bash benchmarks/helion_gpu.sh [grade|bench|all]
OUT=${OUT:-helion-gpu-logs}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
what=${1:-all}
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt" 2>&1
start=$SECONDS
python3 -m pip install -q --no-index --find-links .whl numpy==2.3.5 rich nbformat matplotlib msgspec==0.19.0 \
    jaxtyping packaging filecheck psutil cloudpickle > "$OUT/install.txt" 2>&1
python3 -m pip install -q --no-index --find-links .whl --no-deps helion==1.5.1 >> "$OUT/install.txt" 2>&1
python3 -c "import torch, triton, helion; print(torch.__version__, triton.__version__, helion.__version__)" \
    >> "$OUT/device.txt" 2>&1
echo "install: $((SECONDS - start)) s"
if [ "$what" = grade ] || [ "$what" = all ]; then
    start=$SECONDS
    timeout 90 python3 -m grader puzzle35 puzzle36 puzzle37 puzzle38 puzzle39 puzzle40 puzzle41 puzzle42 \
        --solutions --device cuda --jobs 4 > "$OUT/grade.txt" 2>&1
    echo "grade: exit $?, $((SECONDS - start)) s"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    start=$SECONDS
    timeout 100 python3 benchmarks/helion_bench.py puzzle35 puzzle37 puzzle38 puzzle39 puzzle40 puzzle41 puzzle42 \
        --json "$OUT/helion_bench.json" > "$OUT/helion_bench.txt" 2>&1
    echo "helion bench: exit $?, $((SECONDS - start)) s"
    start=$SECONDS
    timeout 75 python3 benchmarks/bench_headlines.py puzzle18 puzzle19 puzzle20 puzzle28 puzzle30 puzzle31 \
        --json "$OUT/triton_headlines.json" > "$OUT/triton_headlines.txt" 2>&1
    echo "triton headlines: exit $?, $((SECONDS - start)) s"
fi
