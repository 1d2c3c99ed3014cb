"""vshred from Python: what is encoded reads back, by path and whole, in
pyarrow, DuckDB and polars; bad input is a VshredError saying where, and
leaves no file."""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vshred

ROWS = [
    json.dumps({"id": i, "v": {"user": {"id": 1000 + i, "name": f"u-{i}"},
                               "kind": "click" if i % 3 else "view",
                               "price": f"{i}.25" if i % 2 else i}})
    for i in range(300)
]
# The price: a string in odd rows, a number in even ones (a residual).


@pytest.fixture
def events(tmp_path):
    path = tmp_path / "events.parquet"
    written = vshred.encode(ROWS, path, variant_fields=["v"], row_group_rows=100)
    assert written["rows"] == 300 and written["row_groups"] == 3
    assert written["bytes"] == os.path.getsize(path)
    return path


def test_encode_from_strings_or_a_file_writes_the_same_rows(tmp_path, events):
    lines = tmp_path / "events.jsonl"
    lines.write_text("\n".join(ROWS) + "\n")
    from_file = tmp_path / "from_file.parquet"
    written = vshred.encode(str(lines), from_file, variant_fields=["v"], row_group_rows=100)
    assert written["rows"] == 300
    assert written["layout"] == vshred.infer(ROWS, variant_fields=["v"])
    assert vshred.read(from_file).equals(vshred.read(events))


def test_a_generator_is_encoded_as_it_yields(tmp_path):
    # Some megabytes of text: read from the generator in several blocks.
    rows = 100_000
    out = tmp_path / "generated.parquet"
    written = vshred.encode((json.dumps({"n": i, "s": "x" * (i % 50)}) for i in range(rows)), out)
    assert written["rows"] == rows
    assert vshred.get(out, "$.n", "int64").to_pylist() == list(range(rows))

    def failing():
        yield '{"n": 1}'
        raise RuntimeError("the source went away")

    with pytest.raises(vshred.VshredError, match="item 1 of the input: the iterator raised.*went away"):
        vshred.encode(failing(), tmp_path / "failed.parquet")
    assert not (tmp_path / "failed.parquet").exists()


def test_get_gives_a_typed_array_and_where_keeps_its_rows(events):
    ids = vshred.get(events, "$.user.id", "int64")
    assert ids.type == pa.int64()
    assert ids.to_pylist() == [1000 + i for i in range(300)]
    clicks = vshred.get(events, "$.user.name", "string", where='$.kind == "click"')
    assert clicks.to_pylist() == [f"u-{i}" for i in range(300) if i % 3]
    # A string does not convert to int64: null, or an error when strict.
    prices = vshred.get(events, "$.price", "int64")
    assert prices.to_pylist()[:4] == [0, None, 2, None]
    with pytest.raises(vshred.VshredError, match=r"row 1.*\$\.price"):
        vshred.get(events, "$.price", "int64", strict=True)


def test_read_gives_a_table_with_variant_columns_as_json_or_typed(events):
    table = vshred.read(events)
    assert table.column_names == ["id", "v"]
    field = table.schema.field("v")
    assert field.metadata[b"ARROW:extension:name"] == b"arrow.parquet.variant"
    text = vshred.to_json(table["v"])
    assert [json.loads(t) for t in text.to_pylist()] == [json.loads(r)["v"] for r in ROWS]
    assert vshred.read(events, columns=["id"]).column_names == ["id"]


def test_duckdb_and_polars_query_the_table(events):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    rows = vshred.read(events, columns=["id"])
    rows = rows.append_column("v_json", vshred.to_json(vshred.read(events)["v"]))
    rows = rows.append_column("user_id", vshred.get(events, "$.user.id", "int64"))
    total = duckdb.sql(
        "SELECT sum(user_id) AS s, count(*) FILTER (WHERE v_json->>'kind' = 'view') AS views FROM rows"
    ).fetchall()[0]
    assert total == (sum(1000 + i for i in range(300)), 100)
    frame = pl.from_arrow(rows)
    assert frame.filter(pl.col("id") < 3)["user_id"].to_list() == [1000, 1001, 1002]


def test_parse_json_and_to_json_go_both_ways():
    texts = ['{"a":[1,2.50,"x"]}', None, '{"b":{"c":null}}']
    variants = vshred.parse_json(texts)
    assert vshred.to_json(variants).to_pylist() == texts
    assert vshred.parse_json(["{", "[1]"], strict=False).null_count == 1
    with pytest.raises(vshred.VshredError, match="row 0"):
        vshred.parse_json(["{"])


def test_bad_input_is_an_error_saying_where_and_leaves_no_file(tmp_path):
    out = tmp_path / "out.parquet"
    with pytest.raises(vshred.VshredError, match="line 2"):
        vshred.encode(['{"a": 1}', '{"a": '], out)
    assert not out.exists()
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"a": 1}\n{"a": tru}\n')
    with pytest.raises(vshred.VshredError, match=r"bad\.jsonl.*line 2"):
        vshred.encode(lines, out)
    assert not out.exists()
    with pytest.raises(vshred.VshredError, match="item 1"):
        vshred.encode(['{"a": 1}', 7], out)
    with pytest.raises(vshred.VshredError, match="not a preset"):
        vshred.encode(['{"a": 1}'], out, shred="sprak")
    with pytest.raises(vshred.VshredError, match="nothing.parquet"):
        vshred.get(tmp_path / "nothing.parquet", "$.a")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
    with pytest.raises(vshred.VshredError, match="corrupt.parquet"):
        vshred.read(corrupt)


def test_pyarrow_reads_the_file_and_infer_gives_the_layout(events):
    assert pq.read_table(events).num_rows == 300
    # Spark's preset shreds every field; ours weighs what each saves.
    assert vshred.infer(ROWS, variant_fields=["v"]) == {"kind": "string"}
    spark = vshred.infer(ROWS, variant_fields=["v"], shred="spark")
    assert spark["user"] == {"id": "int64", "name": "string"}


def test_the_readmes_example_runs():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "README.md")) as readme:
        text = readme.read()
    start = text.index("```python\n") + len("```python\n")
    block = text[start:text.index("```", start)]
    assert "vshred.encode(" in block
    cwd = os.getcwd()
    os.chdir(root)
    try:
        exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
