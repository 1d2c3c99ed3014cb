#!/bin/sh
# Builds the seed corpora of the fuzz targets (fuzz/corpus/ is gitignored):
#
#   fuzz/corpus/variant_bytes/  metadata and value back to back: the
#       parquet-testing Variant files, and the edge cases encoded by us
#   fuzz/corpus/json_text/      one JSON text per file: the edge-case lines
#       and the parquet-testing data dictionary
#   fuzz/corpus/parquet_file/   Parquet files: the parquet-testing shredded
#       cases (any writer's layouts) and files `vshred encode` writes from
#       testdata/events.jsonl (several row groups, bloom filters, page index)
#
# Usage: fuzz/seed-corpus.sh [DATA_DIR]   (default: the repository's
# testdata/; it holds parquet-testing/variant and edge-cases/edge.jsonl).
set -eu

fuzz=$(cd "$(dirname "$0")" && pwd)
data=${1:-$fuzz/../testdata}
variants=$data/parquet-testing/variant
edge=$data/edge-cases/edge.jsonl
[ -d "$variants" ] || { echo "no $variants" >&2; exit 1; }
[ -f "$edge" ] || { echo "no $edge" >&2; exit 1; }

mkdir -p "$fuzz/corpus/variant_bytes" "$fuzz/corpus/json_text" "$fuzz/corpus/parquet_file"

# variant_bytes: <name>.metadata followed by <name>.value.
for m in "$variants"/*.metadata; do
    name=$(basename "$m" .metadata)
    v=$variants/$name.value
    [ -f "$v" ] && cat "$m" "$v" > "$fuzz/corpus/variant_bytes/pt-$name"
done

# variant_bytes: the edge cases, encoded with the crate itself.
cargo run --quiet --manifest-path "$fuzz/Cargo.toml" \
    --example seed_variants -- "$edge" "$fuzz/corpus/variant_bytes" edge

# json_text: one seed per edge-case line, plus the data dictionary.
n=0
while IFS= read -r line || [ -n "$line" ]; do
    printf '%s' "$line" > "$fuzz/corpus/json_text/edge-$n"
    n=$((n + 1))
done < "$edge"
cp "$variants/data_dictionary.json" "$fuzz/corpus/json_text/pt-data_dictionary"

# parquet_file: the shredded cases, and our own files.
cp "$data/parquet-testing/shredded_variant/"*.parquet "$fuzz/corpus/parquet_file/"
for shred in auto spark none; do
    # A bloom filter needs a shredded path; only `spark` shreds these 5 rows.
    bloom=
    [ "$shred" = spark ] && bloom='--bloom-filter=$.user.id'
    for decimal in int flba; do
        cargo run --quiet --release --manifest-path "$fuzz/../Cargo.toml" -- encode \
            "$fuzz/../testdata/events.jsonl" "$fuzz/corpus/parquet_file/events-$shred-$decimal.parquet" \
            --shred "$shred" --decimal "$decimal" --row-group-rows 2 $bloom
    done
done

echo "variant_bytes: $(ls "$fuzz/corpus/variant_bytes" | wc -l) seeds"
echo "json_text:     $(ls "$fuzz/corpus/json_text" | wc -l) seeds"
echo "parquet_file:  $(ls "$fuzz/corpus/parquet_file" | wc -l) seeds"
