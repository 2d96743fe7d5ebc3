#!/usr/bin/env bash
# Measures the bench guard's GPU figures (docs/benchmarks.md, "Bench integrity"), in under 9
# minutes (each step has a limit). Run from the repository's root on a GPU; logs go to $OUT: the probe (benchmarks/bench_integrity_probe.py), the sweeps
# of puzzles 28, 32, 29 and 30 with their reference solutions, and the trick corpus
# (benchmarks/bench_tricks_gpu.py). Each step has a time limit, so that one slow step leaves
# the others' logs.
OUT=${OUT:-bench-integrity-logs}
mkdir -p "$OUT"
export OUT
bench() {  # puzzle, seconds
  local file start=$SECONDS
  file=$(ls solutions/puzzle$1_*.py)
  timeout "$2" python -m grader "puzzle$1" --bench --json --file "$file" > "$OUT/bench$1.json" 2> "$OUT/bench$1.err"
  echo "puzzle$1: exit $?, $((SECONDS - start)) s"
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
timeout 30 python benchmarks/bench_integrity_probe.py > "$OUT/probe.txt" 2>&1; echo "probe: exit $?"
bench 28 60
bench 32 80
start=$SECONDS
timeout 180 python benchmarks/bench_tricks_gpu.py > "$OUT/tricks.txt" 2>&1; echo "tricks: exit $?, $((SECONDS - start)) s"
bench 29 80
bench 30 60
