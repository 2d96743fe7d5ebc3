#!/usr/bin/env bash
# The Helion track on one GPU (issue 24), in one or two calls of the device tool: the wheels in
# .whl installed offline; the first helion that imports and compiles puzzle 35 on the GPU kept
# (1.5.1, then 1.5.1 with benchmarks/helion_compat on PYTHONPATH, then 1.5.0, 1.4.0); the
# solutions of 35-42 graded with --device cuda; each Helion puzzle's --bench at its headline size
# (benchmarks/bench_headlines.py, the grader's own --bench) and the Triton twins' beside them.
#   bash benchmarks/helion_gpu.sh [grade|bench|matmul|all]     logs in $OUT
OUT=${OUT:-helion-gpu-logs}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
what=${1:-all}
step() {  # step NAME SECONDS COMMAND...: time-limited, its output in $OUT/NAME.txt
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    echo "$name: exit $?, $((SECONDS - start)) s" | tee -a "$OUT/steps.txt"
}
if ! python3 -c "import helion" 2>/dev/null && [ ! -f .helion-compat ]; then
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/device.txt" 2>&1
    step install 120 python3 -m pip install -q --no-index --find-links .whl numpy==2.3.5 rich nbformat matplotlib \
        msgspec==0.19.0 jaxtyping packaging filecheck psutil cloudpickle
    for try in 1.5.1 1.5.1+compat 1.5.0 1.4.0; do
        version=${try%+compat}
        python3 -m pip install -q --no-index --find-links .whl --no-deps --force-reinstall "helion==$version" \
            >> "$OUT/install.txt" 2>&1
        if [ "$try" != "$version" ]; then export PYTHONPATH=$PWD/benchmarks/helion_compat; else unset PYTHONPATH; fi
        if timeout 60 python3 benchmarks/helion_smoke.py >> "$OUT/smoke.txt" 2>&1; then
            echo "$try" > .helion-compat; break
        fi
    done
fi
chosen=$(cat .helion-compat 2>/dev/null)
[ "${chosen#*+}" = compat ] && export PYTHONPATH=$PWD/benchmarks/helion_compat
python3 -c "import torch, triton, helion; print('torch', torch.__version__, 'triton', triton.__version__, 'helion', helion.__version__)" \
    >> "$OUT/device.txt" 2>&1
echo "helion kept: ${chosen:-none}" | tee -a "$OUT/steps.txt"
[ -z "$chosen" ] && exit 1
if [ "$what" = grade ] || [ "$what" = all ]; then
    step grade 100 python3 -m grader puzzle35 puzzle36 puzzle37 puzzle38 puzzle39 puzzle40 puzzle41 puzzle42 \
        --solutions --device cuda --jobs 4 --json
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    step helion_bench 110 python3 benchmarks/bench_headlines.py puzzle35 puzzle37 puzzle38 puzzle39 \
        --json "$OUT/helion_bench.json"
fi
if [ "$what" = matmul ] || [ "$what" = all ]; then
    step helion_bench_mm 150 python3 benchmarks/bench_headlines.py puzzle40 puzzle41 puzzle42 \
        --json "$OUT/helion_bench_mm.json"
    step triton_twins 100 python3 benchmarks/bench_headlines.py puzzle18 puzzle19 puzzle20 puzzle28 \
        --json "$OUT/triton_twins.json"
fi
