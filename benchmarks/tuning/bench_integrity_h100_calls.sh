#!/usr/bin/env bash
# Measures what the bench-integrity work left for a GPU, as two H100 calls on one warm machine of
# under 10 minutes each: a finished record, its figures in docs/benchmarks.md ("Issue 23: what
# was left for a GPU"). Run from the repository's root with the part's name, logs in $OUT, each
# step with a time limit so that one slow step leaves the others' logs. Files come back from $OUT
# only 8 at a time: the trick corpus's JSON goes in a tar.
#
#   bash benchmarks/tuning/bench_integrity_h100_calls.sh a
#       the trick corpus (persisting L2, profile hook, warm-up detection, autotune prune, patched
#       timer: the CUDA-graph timing now on the harness's clock); puzzle 27 (dropout, four words a
#       draw) graded with its corpus, and its tiles
#   bash benchmarks/tuning/bench_integrity_h100_calls.sh b
#       puzzle 31's tiles at every size of its sweep; --bench of the calibration kernels not yet
#       measured (then, here: `count` them and `fit`, see benchmarks/perf_calibration.py); the
#       headlines of 22, 27 and 33 (graph timings)
OUT=${OUT:-bench-integrity-h100-logs}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt" 2>&1
step() {  # step NAME SECONDS COMMAND...: one step, its exit status and its time on stdout
    local name=$1 limit=$2 start=$SECONDS; shift 2
    timeout "$limit" "$@"
    echo "$name: exit $?, $((SECONDS - start)) s"
}

if [ "$1" = a ]; then
    mkdir -p "$OUT/tricks"
    OUT="$OUT/tricks" step tricks 240 python benchmarks/bench_tricks_gpu.py > "$OUT/tricks.txt" 2>&1
    tar czf "$OUT/tricks.tgz" -C "$OUT" tricks && rm -rf "$OUT/tricks"
    step grade27 120 python -m grader puzzle27 --solutions --device cuda > "$OUT/grade27.txt" 2>&1
    for f in tests/wrong_kernels/puzzle27_*.py; do
        step "$(basename "$f")" 60 python -m grader puzzle27 --file "$f" --device cuda >> "$OUT/grade27.txt" 2>&1
    done
    step dropout 150 python benchmarks/tuning/model_answer_tiles.py --only dropout --old /nonexistent --budget 140 \
        --json "$OUT/dropout.json" > "$OUT/dropout.txt" 2>&1
else
    step fwd 170 python benchmarks/tuning/model_answer_tiles.py --only fwd --budget 160 --json "$OUT/fwd.json" > "$OUT/fwd.txt" 2>&1
    cp -r benchmarks/perf_calibration_data "$OUT/calibration"
    # Puzzle 27's kernels draw four words a draw since this session: measured again.
    python - "$OUT/calibration/measured.json" <<'PY'
import json, sys
done = json.load(open(sys.argv[1]))
json.dump({k: v for k, v in done.items() if not k.startswith("puzzle27")}, open(sys.argv[1], "w"), indent=1)
PY
    step calibration 240 python benchmarks/perf_calibration.py measure "$OUT/calibration" > "$OUT/measure.txt" 2>&1
    cp "$OUT/calibration/measured.json" "$OUT/measured.json" && rm -rf "$OUT/calibration"
    step headlines 150 python benchmarks/bench_headlines.py puzzle27 puzzle22 puzzle33 > "$OUT/headlines.txt" 2>&1
fi
