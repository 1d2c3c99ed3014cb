#!/usr/bin/env bash
# The Python package's tests: builds the module into a virtual environment
# of its own (target/python-venv; the Rust build in the workspace's target
# directory, debug, as `cargo test` builds), with pytest, mypy, pyarrow, DuckDB
# and polars, and moto's S3 server for test_s3.py, then runs the tests and
# the examples of the docstrings.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
# maturin runs as a command of the environment.
export PATH="$PWD/$venv/bin:$PATH"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade "pip>=23" >/dev/null
"$venv/bin/pip" install --quiet -r python/requirements-test.txt
"$venv/bin/pip" install --quiet --force-reinstall --no-deps --no-build-isolation \
    -C build-args="--profile dev" ./python
# test_s3.py runs the command too, as built for `cargo test` (which the
# README's test command runs first: nothing new to compile then).
cargo build --quiet --bin vshred
export VSHRED_CLI="${CARGO_TARGET_DIR:-$PWD/target}/debug/vshred"
# The docstrings' and the README's examples make temporary directories
# they leave, as a reader's would: under target/, not the machine's /tmp.
export TMPDIR="$PWD/target/python-tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
"$venv/bin/python" -m pytest -q python/tests --doctest-modules "$venv"/lib/python3*/site-packages/vshred/__init__.py
