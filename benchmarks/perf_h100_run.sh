#!/usr/bin/env bash
# On the device tool's H100 (torch 2.11, triton 3.6, Python 3.12), in one call: the calibration
# kernels once timed on an H200 and scaled, now timed on the H100 (cores 2-15), and beside them
# `--perf`'s latency for every puzzle on two otherwise idle cores (0-1) with no GPU visible, as on
# a learner's laptop. Wheels the image lacks travel in .whl (numpy 2.3.5: 2.5 breaks the
# interpreter; msgspec). Output under $OUT: measured.json, measure.txt, latency.txt, steps.txt.
#   bash benchmarks/perf_h100_run.sh [measure] [latency]
OUT=${OUT:-perf-h100}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --force-reinstall .whl/*.whl > "$OUT/install.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/steps.txt"
lscpu | grep -E "^(Model name|Thread|Core|Socket|CPU\\(s\\))" >> "$OUT/steps.txt"
# the scaled kernels of measured_h200.json, and the references their scaling went through
SCALED="puzzle13_column_block_ptr puzzle13_row_per_program puzzle18_interleaved_lanes
puzzle24_scan_combine_chunk256 puzzle24_whole_row puzzle27_philox_by_hand puzzle27_philox_by_hand_per_column
puzzle28_subtiles_64 puzzle28_tiles_16x16 puzzle28_tiles_64x64_k32 puzzle13_column_at_a_time puzzle28_tiny_tiles_k16
puzzle13_reference puzzle18_reference puzzle24_reference puzzle27_reference puzzle28_reference"
case " $* " in *" measure "*)
    (timeout 500 taskset -c 12-15 python3 benchmarks/perf_calibration.py measure "$OUT" --only $SCALED \
        > "$OUT/measure.txt" 2>&1; echo "measure: exit $?" >> "$OUT/steps.txt") & ;;
esac
case " $* " in *" latency "*)
    # six runs side by side, each on two cores of its own (a 2-core laptop each), puzzles dealt out
    ids=$(ls solutions | sed -n 's/^puzzle\([0-9][0-9]\)_.*\.py$/\1/p' | sort -u)
    for lane in 0 1 2 3 4 5; do
        mine=$(echo $ids | tr ' ' '\n' | awk -v l=$lane 'NR % 6 == l' | paste -sd, -)
        (CUDA_VISIBLE_DEVICES= timeout 520 taskset -c $((2 * lane)),$((2 * lane + 1)) python3 benchmarks/latency.py \
            --only perf --puzzles "$mine" > "$OUT/latency$lane.txt" 2>&1
         echo "latency $lane ($mine): exit $?" >> "$OUT/steps.txt") &
    done ;;
esac
wait
cat "$OUT"/latency[0-5].txt > "$OUT/latency.txt" 2>/dev/null && rm -f "$OUT"/latency[0-5].txt
cat "$OUT/install.txt" >> "$OUT/steps.txt"; rm -f "$OUT/install.txt"
cat "$OUT/steps.txt"
