"""The package's type hints, as a user's type checker reads them from the
installed package (its ``py.typed`` marker and the native module's stub)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

_USES = """
import pyarrow as pa
import vshred

written = vshred.encode(['{"a": 1}'], "out.parquet", variant_fields=["v"], decimal="flba",
                        max_file_rows=10)
rows: int = written["rows"]
layout = vshred.infer(['{"a": 1}'], shred={"a": "int64"})
values = vshred.get("out.parquet", "$.a", "int64", where="$.a > 0", strict=True)
table: pa.Table = vshred.read("out.parquet", columns="v")
session = vshred.Session({"datafusion.execution.batch_size": 8192})
session.register("t", table)
result: pa.Table = session.sql("SELECT 1") if vshred.sql("SELECT 1") else table
try:
    vshred.parse_json(pa.array(['{"a": 1}']), duplicate_keys="last")
except vshred.VshredError as e:
    print(e, vshred.__version__)
"""

_MISUSES = """
import vshred

vshred.encode(['{"a": 1}'], "out.parquet", decimal="float")
vshred.get("out.parquet", 7)
vshred.infer(['{"a": 1}'], max_columns="300")
vshred.Session().sql(b"SELECT 1")
"""


def _mypy(tmp_path, text):
    script = tmp_path / "script.py"
    script.write_text(text)
    # pyarrow ships no types of its own: its names are Any.
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           "--cache-dir", os.devnull, "--disable-error-code", "import-untyped",
                           str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_the_api_as_documented_type_checks(tmp_path):
    checked = _mypy(tmp_path, _USES)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_wrong_argument_types_are_found_by_a_type_checker(tmp_path):
    checked = _mypy(tmp_path, _MISUSES)
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    # One a line: the choice, the path, the limit and the query.
    assert [line.split(":")[1] for line in errors] == ["4", "5", "6", "7"], checked.stdout
