# Sourced by tests/interop/run.sh and benches/realdata/run.sh: the Python venv
# tests/interop/.venv with pyspark 4.3 and duckdb 2.0 (Spark needs Java 17+ on
# PATH), reinstalled only when PY_REQS changes, and PY set to its python; then
# VSHRED, the release CLI, built unless already set. Needs log() and ROOT.
PY_REQS=("pyspark==4.3.*" "duckdb==2.0.*")
VENV="$ROOT/tests/interop/.venv"
command -v java >/dev/null || { echo "java (17+) is needed for Spark" >&2; exit 1; }
if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
fi
if [[ "$(cat "$VENV/.installed" 2>/dev/null)" != "${PY_REQS[*]}" ]]; then
    log "pip install ${PY_REQS[*]} (pip's cache is used)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q "${PY_REQS[@]}"
    echo "${PY_REQS[*]}" > "$VENV/.installed"
fi
PY="$VENV/bin/python"
log "$("$PY" -c 'import pyspark, duckdb; print("pyspark", pyspark.__version__, "/ duckdb", duckdb.__version__)')"

if [[ -z "${VSHRED:-}" ]]; then
    log "cargo build --release (vshred)"
    cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --bin vshred
    VSHRED="$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" \
        | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/vshred"
fi
