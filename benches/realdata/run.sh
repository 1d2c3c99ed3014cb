#!/usr/bin/env bash
# Real data: Variant column sizes of vshred, Spark 4.3, DuckDB 2.0 and
# arrow-rs on the same inputs, and whether vshred's files read back exactly
# (issue 15). One command:
#
#   benches/realdata/run.sh     # ~10 min, and on the first run the venv, the
#                               # downloads (75 MB) and release builds (~40 min)
#
# Environment: REALDATA_WORK=DIR (default benches/realdata/work; inputs,
#   files, report.md, leaves.md, costs.md), REALDATA_CACHE=DIR (default
#   benches/realdata/cache: the downloads, kept), VSHRED_REALDATA_EVENTS_ROWS
#   (default 1000000), VSHRED_BENCH_REPEAT (encode runs, default 3),
#   VSHRED=path/to/vshred (skip building the CLI, which `vshred cat` needs).
#
# Steps
#  1. tests/interop/setup.sh, as the interop check: its venv (pyspark 4.3,
#     duckdb 2.0) and the release CLI unless VSHRED is set.
#  2. datasets.py: pinned npm tarballs and registry documents -> WORK/input/*.jsonl.
#  3. `cargo bench --bench realdata` (benches/realdata.rs): vshred's files
#     (auto, spark, none) and arrow-rs's (vshred's auto layout), encode times.
#  4. peers.py: Spark's and DuckDB's files, each with its own inference.
#  5. measure.py: sizes from the footers, `vshred cat` of every vshred file
#     against its input; WORK/report.md and WORK/leaves.md. Exits 1 if a
#     vshred file did not read back exactly.
#  6. `vshred infer --costs` of every input: the cost model's estimate
#     against the sample's bytes, per leaf, in WORK/costs.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${REALDATA_WORK:-$HERE/work}"
CACHE="${REALDATA_CACHE:-$HERE/cache}"
START=$SECONDS
log() { printf '[realdata %3ds] %s\n' "$((SECONDS - START))" "$*" >&2; }

# shellcheck source=../../tests/interop/setup.sh
source "$ROOT/tests/interop/setup.sh"

log "data sets -> $WORK/input"
mkdir -p "$WORK/input"
"$PY" "$HERE/datasets.py" "$WORK/input" "$CACHE"

log "vshred and arrow-rs files (cargo bench --bench realdata)"
rm -rf "$WORK/files"
VSHRED_REALDATA_WORK="$WORK" cargo bench --quiet --manifest-path "$ROOT/Cargo.toml" \
    -p vshred --bench realdata

log "Spark and DuckDB files"
"$PY" "$HERE/peers.py" "$WORK" 2> "$WORK/peers.log" || { tail -n 20 "$WORK/peers.log" >&2; exit 1; }

log "measuring"
"$PY" "$HERE/measure.py" "$WORK" "$VSHRED"

log "the cost model's estimates against the sample written"
for input in "$WORK"/input/*.jsonl; do
    printf '## %s\n\n' "$(basename "$input" .jsonl)"
    "$VSHRED" infer --costs "$input"
    printf '\n'
done > "$WORK/costs.md"
log "done: $WORK/report.md, $WORK/leaves.md, $WORK/costs.md"
