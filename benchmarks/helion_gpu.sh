#!/usr/bin/env bash
# The Helion track on one GPU (issue 24), in one or two calls of the device tool: the wheels in
# .whl installed offline; the first helion that imports and compiles puzzle 35 on the GPU kept
# (1.5.1, then 1.5.1 with benchmarks/helion_torch_compat.py, a one-name shim for an older torch, then
# 1.5.0, 1.4.0); the solutions of 35-42 graded with --device cuda; each Helion puzzle's --bench at its headline size
# (benchmarks/bench_headlines.py, the grader's own --bench) and the Triton twins' beside them.
#   bash benchmarks/helion_gpu.sh [grade|truth|bench|twins|all]     logs in $OUT
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
SITE=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
compat() {  # the shim, as a .pth in site-packages: every process takes it, the grader's workers too
    cp benchmarks/helion_torch_compat.py "$SITE/_helion_torch_compat.py"
    echo "import _helion_torch_compat" > "$SITE/_helion_torch_compat.pth"
}
if [ ! -f .helion-compat ]; then
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/device.txt" 2>&1
    step install 120 python3 -m pip install -q --no-index --find-links .whl numpy==2.3.5 rich nbformat matplotlib \
        msgspec==0.19.0 jaxtyping packaging filecheck psutil cloudpickle
    for try in 1.5.1 1.5.1+compat 1.5.0 1.4.0; do
        version=${try%+compat}
        python3 -m pip install -q --no-index --find-links .whl --no-deps --force-reinstall "helion==$version" \
            >> "$OUT/install.txt" 2>&1
        if [ "$try" != "$version" ]; then compat; else rm -f "$SITE"/_helion_torch_compat.*; fi
        echo "== helion $try" >> "$OUT/smoke.txt"
        if timeout 60 python3 benchmarks/helion_smoke.py >> "$OUT/smoke.txt" 2>&1; then
            echo "$try" > .helion-compat; break
        fi
    done
fi
chosen=$(cat .helion-compat 2>/dev/null)
python3 -c "import importlib.metadata as m, torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'helion', m.version('helion'))" \
    >> "$OUT/device.txt" 2>&1
echo "helion kept: ${chosen:-none}" | tee -a "$OUT/steps.txt"
[ -z "$chosen" ] && exit 1
if [ "$what" = grade ] || [ "$what" = all ]; then
    step grade 85 python3 -m grader puzzle35 puzzle36 puzzle37 puzzle38 puzzle39 puzzle40 puzzle41 puzzle42 \
        --solutions --device cuda --jobs 4 --json
fi
if [ "$what" = truth ] || [ "$what" = all ]; then  # issue 31: no wrong Helion kernel passes on the GPU
    # (each case at its own tile sizes, never Helion's default config); Helion's own examples pass
    step truth 300 python3 benchmarks/helion_truth.py --device cuda --jobs 4
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    step helion_bench 135 python3 benchmarks/bench_headlines.py puzzle37 puzzle39 puzzle40 puzzle42 puzzle38 \
        puzzle41 puzzle35 --json "$OUT/helion_bench.json"
fi
if [ "$what" = twins ] || [ "$what" = all ]; then
    step triton_twins 40 python3 benchmarks/bench_headlines.py puzzle18 puzzle20 puzzle19 \
        --json "$OUT/triton_twins.json"
fi
