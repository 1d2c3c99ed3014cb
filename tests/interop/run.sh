#!/usr/bin/env bash
# Interop check for vshred (issue 4, "Interop"): Spark 4.3, DuckDB 2.0 and arrow-rs
# read what `vshred encode` writes, and `vshred cat` reads what Spark and DuckDB write,
# value for value.
#
#   tests/interop/run.sh            # from anywhere; first run installs and builds (minutes),
#                                   # later runs reuse the venv, pip's cache and the builds
#
# Environment: INTEROP_WORK=DIR (default tests/interop/work), ROWS=N (default 2000),
#              ROW_GROUP_ROWS=N (vshred --row-group-rows, default 700: several row groups),
#              VSHRED=path/to/vshred (skip building the main crate).
#
# What it does
#  1. Python venv in tests/interop/.venv with pyspark==4.3.* and duckdb==2.0.*
#     (setup.sh, which also builds vshred; needs Java 17+ on PATH for Spark); reinstalls
#     only when that list changes.
#  2. Builds tests/interop/arrow_rs_reader (parquet 60.1 with
#     variant_experimental: unshred_variant + variant_to_json) into tests/interop/target.
#  3. Data: WORK/input/data.jsonl (ROWS varied objects, gen_data.py), mixed.jsonl
#     (300 top-level values of mixed types) and the repo's testdata/events.jsonl.
#  4. vshred -> engines: for each data set and each --decimal int|flba x --shred
#     auto|spark|none, `vshred encode IN OUT --decimal D --shred S --row-group-rows 700`
#     (whole line -> column v), then
#     `vshred cat`, Spark (to_json(v)), DuckDB (CAST(v AS JSON)) and arrow-rs
#     (unshred_variant + variant_to_json; it must also see the arrow.parquet.variant
#     extension type) read the file, and every row is compared with the source JSON line.
#     Also `vshred sql` COPY of each data set's values nested in a struct (t.v) and a
#     list ([v]): Spark and DuckDB must read both as Variants, row by row as the source.
#  5. engines -> vshred: Spark (parse_json, default settings = shredding inference on;
#     and writeLegacyFormat=true) and DuckDB (json::VARIANT with shredding forced on;
#     and SQL-typed values with an explicit SHREDDING schema incl. decimals, dates,
#     timestamps, uuid) write shredded files (id BIGINT, v VARIANT); `vshred cat`
#     reads them and every row is compared with the engine's own reading. Both
#     also write data.jsonl partitioned (partitionBy, PARTITION_BY) by an integer
#     and a string (partitioned.py: nulls, escaped characters): `vshred cat` of
#     the directory gives v and the two key=value columns as the engine reads them.
#  6. Prints the summary table (engine, direction, mode, files, rows, mismatches) and
#     the first mismatches / errors; exits 1 if anything mismatched or failed.
#
# Comparison rules (implemented in compare.py; its docstring is the reference):
#  * both sides are parsed as JSON; objects compare as key sets (order ignored),
#    arrays element by element;
#  * numbers are equal when their exact decimal values are equal: 104.8 == 104.80,
#    1500 == 1500.0 == 1.5E3 (scale, trailing zeros, and an int / decimal / double
#    representation of the same value are not differences); otherwise they are equal
#    only if both parse to the same IEEE double AND the value is a double: the source
#    JSON token at that place had an exponent (the generator writes every double with
#    one, every decimal without); only where there is no source JSON (DuckDB's typed
#    file) does an exponent in either printed token count. This tolerates a double
#    printed with other digits (Java 17's Double.toString is not always the shortest)
#    but never a source decimal that lost digits; such cases are counted ("dbl~");
#  * strings must be identical, except ISO-8601 dates/times/timestamps, which compare
#    by the value they denote ("2024-01-02 03:04:05+00" == "2024-01-02T03:04:05.000000+00:00");
#  * booleans and null as themselves; a SQL NULL row equals a Variant null;
#  * rows are matched by row index (vshred files) or by the id column (engine files);
#    a missing or extra row is a mismatch.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${INTEROP_WORK:-$HERE/work}"
ROWS="${ROWS:-2000}"
ROW_GROUP_ROWS="${ROW_GROUP_ROWS:-700}"   # several row groups per vshred file
START=$SECONDS

log() { printf '[interop %3ds] %s\n' "$((SECONDS - START))" "$*" >&2; }

# ---------------------------------------------------------------- 1. venv, vshred
# shellcheck source=setup.sh
source "$HERE/setup.sh"

# ---------------------------------------------------------------- 2. builds
log "cargo build --release (arrow_rs_reader, own target dir)"
CARGO_TARGET_DIR="$HERE/target" cargo build --release --quiet --manifest-path "$HERE/arrow_rs_reader/Cargo.toml"
ARROW_READER="$HERE/target/release/arrow_rs_reader"

# ---------------------------------------------------------------- 3. data
rm -rf "$WORK"
mkdir -p "$WORK/input" "$WORK/vshred" "$WORK/read" "$WORK/written"
"$PY" "$HERE/gen_data.py" "$WORK/input" "$ROWS"
cp "$ROOT/testdata/events.jsonl" "$WORK/input/events.jsonl"
log "data: $(wc -l < "$WORK/input/data.jsonl") + $(wc -l < "$WORK/input/mixed.jsonl") + $(wc -l < "$WORK/input/events.jsonl") lines"

# run CMD... > OUT, or leave OUT.err with the command's last stderr lines
capture() {
    local out="$1"; shift
    rm -f "$out" "$out.err"
    if ! "$@" > "$out" 2> "$out.stderr"; then
        { echo "exit $?: $(tail -n 5 "$out.stderr" | tr '\n' ' ')"; } > "$out.err"
        rm -f "$out"
    fi
    rm -f "$out.stderr"
}

# ---------------------------------------------------------------- 4. vshred -> engines
log "vshred encode: 3 data sets x --decimal int|flba x --shred auto|spark|none"
for ds in data events mixed; do
    for dec in int flba; do
        for shred in auto spark none; do
            f="$WORK/vshred/${ds}_${dec}_${shred}.parquet"
            if ! "$VSHRED" encode "$WORK/input/$ds.jsonl" "$f" --decimal "$dec" --shred "$shred" \
                    --row-group-rows "$ROW_GROUP_ROWS" 2> "$f.log"; then
                tail -n 5 "$f.log" > "$f.err"
                rm -f "$f"
            fi
            rm -f "$f.log"
        done
    done
done
for f in "$WORK"/vshred/*.parquet; do
    stem="$(basename "$f" .parquet)"
    capture "$WORK/read/$stem.vshred.jsonl" "$VSHRED" cat "$f"
    capture "$WORK/read/$stem.arrow-rs.txt" "$ARROW_READER" "$f" v
done
# Variants nested in a struct and a list, as `vshred sql` COPY writes them: each
# line wrapped as {"id": N, "v": LINE} (text, so every number stays as written).
log "vshred sql COPY: Variants nested in a struct and a list"
mkdir -p "$WORK/nested"
for ds in data events mixed; do
    awk '{ printf "{\"id\":%d,\"v\":%s}\n", NR - 1, $0 }' "$WORK/input/$ds.jsonl" > "$WORK/nested/$ds.jsonl"
    f="$WORK/nested/$ds.parquet"
    if ! { "$VSHRED" encode "$WORK/nested/$ds.jsonl" "$WORK/nested/${ds}_wrapped.parquet" &&
           "$VSHRED" sql "COPY (SELECT variant_get(v, '\$.id', 'bigint') AS id,
                                   named_struct('v', variant_get(v, '\$.v')) AS t,
                                   [variant_get(v, '\$.v')] AS l
                            FROM '$WORK/nested/${ds}_wrapped.parquet') TO '$f'"; } > /dev/null 2> "$f.log"; then
        tail -n 5 "$f.log" > "$f.err"
        rm -f "$f"
    fi
    rm -f "$f.log" "$WORK/nested/${ds}_wrapped.parquet"
done
log "DuckDB: read vshred files, write its own"
"$PY" "$HERE/duckdb_side.py" "$WORK" 2> "$WORK/duckdb.log" || log "duckdb_side.py failed (see $WORK/duckdb.log)"
log "Spark: read vshred files, write its own (Spark log: $WORK/spark.log)"
"$PY" "$HERE/spark_side.py" "$WORK" > "$WORK/spark.log" 2>&1 || log "spark_side.py failed (see $WORK/spark.log)"
grep -h '^spark_side: ' "$WORK/spark.log" | grep -v '^spark_side: /' >&2 || true

# ---------------------------------------------------------------- 5. engines -> vshred
for f in "$WORK"/written/*.parquet; do
    [[ -e "$f" ]] || continue
    capture "$WORK/read/$(basename "$f" .parquet).vshred.jsonl" "$VSHRED" cat "$f"
done

# ---------------------------------------------------------------- 6. compare
log "comparing"
"$PY" "$HERE/compare.py" "$WORK"
