#!/usr/bin/env bash
# What issue 23 left for a GPU (its closing note of 2026-11-26), as one H100 call: run from the
# repository's root, logs in $OUT, each step with a time limit so that one slow step leaves the
# others' logs. Files come back from $OUT only 8 at a time: the trick corpus's JSON goes in a tar.
#
#   1. the trick corpus not yet run on a GPU (persisting L2, profile hook, warm-up detection, the
#      autotune prune that slows torch.matmul, and the patched timer after its fix);
#   2. puzzle 31's forward under its candidate tiles, at every size of its sweep;
#   3. --bench of the six corpus kernels not yet measured, for the --perf calibration
#      (then, here: `count` them and `fit`, see benchmarks/perf_calibration.py).
OUT=${OUT:-issue23-logs}
mkdir -p "$OUT/tricks"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt" 2>&1

start=$SECONDS
OUT="$OUT/tricks" timeout 240 python benchmarks/bench_tricks_gpu.py > "$OUT/tricks.txt" 2>&1
echo "tricks: exit $?, $((SECONDS - start)) s"
tar czf "$OUT/tricks.tgz" -C "$OUT" tricks && rm -rf "$OUT/tricks"

start=$SECONDS
timeout 180 python benchmarks/tune_issue23.py --only fwd --budget 170 --json "$OUT/fwd.json" > "$OUT/fwd.txt" 2>&1
echo "puzzle 31 tiles: exit $?, $((SECONDS - start)) s"

start=$SECONDS
cp -r benchmarks/perf_calibration_data "$OUT/calibration"
timeout 150 python benchmarks/perf_calibration.py measure "$OUT/calibration" > "$OUT/measure.txt" 2>&1
echo "calibration: exit $?, $((SECONDS - start)) s"
cp "$OUT/calibration/measured.json" "$OUT/measured.json" && rm -rf "$OUT/calibration"
