"""vshred from Python: what is encoded reads back, by path and whole, in
pyarrow, DuckDB and polars; bad input is a VshredError saying where, and
leaves no file."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings

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
# The layout `auto` takes for such rows sampled from a longer input: these
# 300 alone, in row groups of 100, it leaves unshredded, which writes them
# smaller.
LAYOUT = {"kind": "string", "user": {"id": "int32", "name": "string"}}


@pytest.fixture
def events(tmp_path):
    path = tmp_path / "events.parquet"
    written = vshred.encode(ROWS, path, variant_fields=["v"], row_group_rows=100, shred=LAYOUT)
    assert written["rows"] == 300 and written["row_groups"] == 3
    assert written["bytes"] == os.path.getsize(path)
    return path


def test_encode_from_strings_or_a_file_writes_the_same_rows(tmp_path, events):
    lines = tmp_path / "events.jsonl"
    lines.write_text("\n".join(ROWS) + "\n")
    from_file = tmp_path / "from_file.parquet"
    written = vshred.encode(str(lines), from_file, variant_fields=["v"], row_group_rows=100,
                            shred=LAYOUT)
    assert (written["rows"], written["layout"]) == (300, LAYOUT)
    assert vshred.read(from_file).equals(vshred.read(events))
    inferred = vshred.encode(str(lines), tmp_path / "auto.parquet", variant_fields=["v"])
    assert inferred["layout"] == vshred.infer(ROWS, variant_fields=["v"]) == "variant"
    # Said, with the sizes that decided it: the rows alone are smaller.
    [left] = inferred["left_unshredded"]
    assert (left["column"], left["whole_file"]) == ("v", True)
    assert left["unshredded_bytes"] < left["shredded_bytes"]
    assert written["left_unshredded"] == []
    # And of a dataset's file that chose its layout.
    dataset = vshred.encode(str(lines), tmp_path / "parts", variant_fields=["v"], max_file_rows=300)
    assert dataset["files"][0]["left_unshredded"] == [left]


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

    # The iterator's own exception comes out as itself (a KeyboardInterrupt
    # too), and no file is left.
    with pytest.raises(RuntimeError, match="the source went away"):
        vshred.encode(failing(), tmp_path / "failed.parquet")
    assert not (tmp_path / "failed.parquet").exists()
    with pytest.raises(RuntimeError, match="the source went away"):
        vshred.infer(failing())


def test_an_exception_of_an_iterables_iter_comes_out_as_itself(tmp_path):
    class Mine(Exception):
        pass

    class BadIter:
        def __iter__(self):
            raise Mine("mine")

    out = tmp_path / "out.parquet"
    with pytest.raises(Mine, match="^mine$"):
        vshred.encode(BadIter(), out)
    with pytest.raises(Mine, match="^mine$"):
        vshred.infer(BadIter())
    # What is neither a path nor iterable is named by its type, a
    # TypeError as any wrong type is.
    for given, name in ((5, "int"), (None, "None"), (object(), "object")):
        with pytest.raises(TypeError,
                           match=f"^the input is a path or an iterable of JSON strings, not {name}$"):
            vshred.encode(given, out)
    assert not out.exists()


def test_a_dataset_stopped_by_the_iterable_says_which_files_it_left(tmp_path):
    def rows():
        yield from ['{"a": %d}' % i for i in range(12)]
        raise RuntimeError("the source failed")

    out = tmp_path / "ds"
    with pytest.raises(RuntimeError, match="the source failed") as raised:
        vshred.encode(rows(), out, max_file_rows=5)
    assert getattr(raised.value, "__notes__", None) == [
        "2 complete files written to %s before it stopped: part-00000.parquet, "
        "part-00001.parquet (append=True adds to them)" % out]
    assert vshred.get(out, "$.a", "int64").to_pylist() == list(range(10))


def test_get_gives_a_typed_array_and_where_keeps_its_rows(events):
    ids = vshred.get(events, "$.user.id", "int64")
    assert ids.type == pa.int64()
    assert ids.to_pylist() == [1000 + i for i in range(300)]
    clicks = vshred.get(events, "$.user.name", "string", where='$.kind == "click"')
    assert clicks.to_pylist() == [f"u-{i}" for i in range(300) if i % 3]
    # A filter no row can pass is warned about, as the command line warns.
    with pytest.warns(UserWarning, match=r'^no row can pass `\$\.user\.id == "1000"`'):
        assert len(vshred.get(events, "$.user.id", where='$.user.id == "1000"')) == 0
    # A string does not convert to int64: null, or an error when strict.
    prices = vshred.get(events, "$.price", "int64")
    assert prices.to_pylist()[:4] == [0, None, 2, None]
    with pytest.raises(vshred.VshredError,
                       match=r"conversion failed at row 1.*\$\.price.*\(strict=False gives None instead\)$"):
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


def test_the_version_is_the_crates():
    assert re.fullmatch(r"\d+\.\d+\.\d+", vshred.__version__)


def test_parse_json_and_to_json_go_both_ways():
    texts = ['{"a":[1,2.50,"x"]}', None, '{"b":{"c":null}}']
    variants = vshred.parse_json(texts)
    assert vshred.to_json(variants).to_pylist() == texts
    assert vshred.parse_json(["{", "[1]"], strict=False).null_count == 1
    # Bad texts anywhere leave every other row where it was.
    loose = vshred.parse_json(["1", "{", "[2]", "x", "y"], strict=False)
    assert vshred.to_json(loose).to_pylist() == ["1", None, "[2]", None, None]
    with pytest.raises(vshred.VshredError, match="row 0"):
        vshred.parse_json(["{"])
    # Numbers are not JSON texts: cast to text, the double -0.0 became 0.0.
    for array, given in ((pa.array([1.0, -0.0]), "Float64"), (pa.array([1]), "Int64")):
        with pytest.raises(vshred.VshredError,
                           match="parse_json takes JSON texts \\(strings or binaries\\), not " + given):
            vshred.parse_json(array)
    assert vshred.to_json(vshred.parse_json(pa.array([b"[1]"]))).to_pylist() == ["[1]"]


def test_a_chunked_array_is_converted_chunk_by_chunk():
    # Never one array of all chunks: a column of more than 2 GiB of text
    # is several, and its conversion too.
    texts = pa.chunked_array([['{"a":1}', "[2]"], [], ['"x"', None, "3.50"]])
    variants = vshred.parse_json(texts)
    assert isinstance(variants, pa.ChunkedArray) and variants.num_chunks == 3
    back = vshred.to_json(variants)
    assert isinstance(back, pa.ChunkedArray)
    assert [c.to_pylist() for c in back.chunks] == [c.to_pylist() for c in texts.chunks]
    # A bad text's row is counted over all the chunks.
    with pytest.raises(vshred.VshredError, match="row 3"):
        vshred.parse_json(pa.chunked_array([["1", "2"], ["3", "{"]]))
    empty = vshred.to_json(vshred.parse_json(pa.chunked_array([], type=pa.string())))
    assert empty.type == pa.string() and len(empty) == 0


def test_a_wrong_argument_is_named_by_its_keyword(tmp_path):
    for call, keyword in (
            (lambda: vshred.encode(['{"a":1}'], tmp_path / "a.parquet", duplicate_keys=None),
             "duplicate_keys"),
            (lambda: vshred.encode(['{"a":1}'], tmp_path / "a.parquet", inexact_numbers=None),
             "inexact_numbers"),
            (lambda: vshred.parse_json(["1"], duplicate_keys=3), "duplicate_keys")):
        with pytest.raises(TypeError) as raised:
            call()
        assert keyword in " ".join(getattr(raised.value, "__notes__", [])) + str(raised.value)
    vshred.encode(['{"a":1}'], tmp_path / "a.parquet")
    with pytest.raises(TypeError, match="^where must be a filter string, not int$"):
        vshred.get(tmp_path / "a.parquet", "$.a", where=5)
    # A count too large for any integer type is refused by name, as 0 is,
    # naming the largest.
    with pytest.raises(vshred.VshredError,
                       match="max_file_rows must be a whole number from 1 to 18446744073709551615, not 1180591620717411303424"):
        vshred.encode(['{"a":1}'], tmp_path / "d", max_file_rows=2 ** 70)


def test_to_json_of_an_array_that_is_not_variants_is_an_error_saying_what_is():
    # A struct without metadata and value gave "null" for each row.
    what = r"^to_json takes a Variant array \(a struct of binary metadata and value, and " \
           r"optionally typed_value\), not "
    for array, given in ((pa.array([{"a": 1}, {"a": 2}]), 'Struct("a": Int64)'),
                         (pa.array([{"metadata": b"\x01\x00\x00"}]), 'Struct("metadata": Binary)'),
                         (pa.array([{"value": b"\x0c\x01"}]), 'Struct("value": Binary)'),
                         (pa.array([1, 2]), "Int64"), (pa.array(['{"a": 1}']), "Utf8")):
        with pytest.raises(vshred.VshredError, match=what + re.escape(given) + "$"):
            vshred.to_json(array)
    # A fully shredded column (metadata and typed_value) is one.
    shredded = pa.StructArray.from_arrays(
        [pa.array([b"\x01\x00\x00"] * 2), pa.array([1, 2], pa.int64())],
        ["metadata", "typed_value"])
    assert vshred.to_json(shredded).to_pylist() == ["1", "2"]
    with pytest.raises(vshred.VshredError, match="value must be binary, found Int64"):
        vshred.to_json(pa.array([{"metadata": b"\x01\x00\x00", "value": 1}]))
    # A list of texts is not an array (it raised AttributeError: 'list'
    # object has no attribute 'offset').
    with pytest.raises(TypeError, match=r"^to_json takes a Variant array .*, not list$"):
        vshred.to_json(['{"a": 1}'])


def test_parse_json_and_to_json_take_a_polars_series():
    # A Series is an Arrow stream, not a pyarrow array: to_json refused it
    # with a TypeError, parse_json read it value by value.
    pl = pytest.importorskip("polars")
    texts = ['{"a": [1, 2.50]}', None, '"x"']
    variants = vshred.parse_json(pl.Series(texts))
    assert vshred.to_json(variants).to_pylist() == ['{"a":[1,2.50]}', None, '"x"']
    as_polars = pl.from_arrow(variants)  # binary views, as polars keeps them
    assert isinstance(as_polars, pl.Series)
    assert vshred.to_json(as_polars).to_pylist() == ['{"a":[1,2.50]}', None, '"x"']


def test_one_text_or_one_name_where_several_go(tmp_path):
    # A lone text would be split into characters by pyarrow.
    with pytest.raises(TypeError, match="for one text, pass \\[text\\]"):
        vshred.parse_json('{"a": 1}')
    assert vshred.to_json(vshred.parse_json(['{"a": 1}'])).to_pylist() == ['{"a":1}']
    # One name is a list of one.
    rows = ['{"id": %d, "v": {"a": %d}}' % (i, i) for i in range(10)]
    out = tmp_path / "one.parquet"
    vshred.encode(rows, out, variant_fields="v", bloom_filters="id")
    assert vshred.read(out, columns="id").column_names == ["id"]
    assert "v" in vshred.infer(rows, variant_fields="v")
    # Binary that is not UTF-8 is an error naming its row when strict.
    binary = pa.array([b"1", b'{"a":"\xff"}'], pa.binary())
    with pytest.raises(vshred.VshredError, match="row 1.*not UTF-8"):
        vshred.parse_json(binary)
    assert vshred.parse_json(binary, strict=False).null_count == 1


def test_python_arguments_are_checked_as_the_cli_checks_them(tmp_path):
    rows = ['{"id": %d, "v": {"a": %d}}' % (i, i) for i in range(10)]
    with pytest.warns(UserWarning, match='no sampled line has "usr"'):
        written = vshred.encode(rows, tmp_path / "w.parquet", variant_fields=["v", "usr"])
    assert written["unsampled_variant_fields"] == ["usr"]
    with pytest.warns(UserWarning, match="no sampled line has the layout's field v.b"):
        written = vshred.encode(rows, tmp_path / "l.parquet", shred='{"id": "int64", "b": "string"}')
    assert written["unsampled_layout_fields"] == ["v.b"]
    with pytest.raises(ValueError, match="output is a file's path"):
        vshred.encode(rows, "-")
    assert not os.path.exists("-")
    with pytest.raises(ValueError, match="input is a file's path, or JSON texts"):
        vshred.encode("-", tmp_path / "stdin.parquet")
    with pytest.raises(ValueError, match="input is a file's path, or JSON texts"):
        vshred.infer(b"-")
    # `infer` warns of its sample as `encode` does.
    with pytest.warns(UserWarning, match='no sampled line has "usr"'):
        vshred.infer(rows, variant_fields=["v", "usr"])
    with pytest.warns(UserWarning, match="1 number that no decimal holds"):
        vshred.infer(['{"n": 1%s}' % ("0" * 40)], inexact_numbers="double")
    with pytest.warns(UserWarning, match="no sampled line has the layout's field v.b"):
        vshred.infer(rows, shred={"id": "int64", "b": "string"})
    # An output path given as bytes, as an input path may be.
    written = vshred.encode(rows, os.fsencode(tmp_path / "bytes.parquet"))
    assert written["rows"] == 10 and (tmp_path / "bytes.parquet").exists()
    # A file of one line holding an array, most likely meant as a row each.
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"a": 1}, {"a": 2}]))
    with pytest.warns(UserWarning, match="one line holding a JSON array, written as one row"):
        assert vshred.encode(export, tmp_path / "export.parquet")["rows"] == 1
    assert vshred.read(tmp_path / "w.parquet", columns=["id", "id"]).column_names == ["id"]
    with pytest.raises(TypeError, match="tables maps names to sources"):
        vshred.sql("SELECT 1", tables=[tmp_path / "w.parquet"])
    session = vshred.Session()
    session.register("w.v1", tmp_path / "w.parquet")
    assert session.sql('SELECT count(*) AS n FROM "w.v1"').to_pylist() == [{"n": 10}]
    session.register("Events", tmp_path / "w.parquet")
    assert session.sql("SELECT count(*) AS n FROM Events").to_pylist() == [{"n": 10}]
    with pytest.raises(vshred.VshredError, match="a table's name is empty"):
        session.register("", tmp_path / "w.parquet")
    two = tmp_path / "two.parquet"
    vshred.encode(['{"a": {"x": 1}, "b": {"y": 2}}'], two, variant_fields=["a", "b"])
    with pytest.raises(vshred.VshredError, match=r"several Variant columns: .*a, b \(column=NAME chooses one\)"):
        vshred.get(two, "$.x")
    assert vshred.get(two, "$.x", "int64", column="a").to_pylist() == [1]
    # A layout from infer() goes back to encode as it is; texts may come as
    # an Arrow array; a URL is for sql.
    layout = vshred.infer(rows, variant_fields="v", shred="spark")
    laid = tmp_path / "laid.parquet"
    vshred.encode(pa.array(rows), laid, variant_fields="v", shred=layout)
    assert vshred.infer(rows, variant_fields="v", shred=str(layout).replace("'", '"')) == layout
    assert vshred.get(laid, "$.a", "int64").to_pylist() == list(range(10))
    tiny = ['{"a": 1}', '{"a": 2}']
    whole = vshred.infer(tiny)
    assert whole == "variant"
    assert vshred.encode(tiny, tmp_path / "whole.parquet", shred=whole)["layout"] == "variant"
    assert vshred.infer(rows, variant_fields="v", shred=layout) == layout
    # A URL names the same file.
    assert vshred.get("file://" + str(laid), "$.a", "int64") == vshred.get(laid, "$.a", "int64")


def test_a_number_no_decimal_holds_is_an_error_unless_a_double_is_asked_for(tmp_path):
    texts = ['{"a": 1}', '{"a": %s}' % ("1234567890" * 4)]
    hint = 'inexact_numbers="double" stores the nearest double'
    with pytest.raises(vshred.VshredError, match="row 1") as raised:
        vshred.parse_json(texts)
    assert "number with 40 digits" in str(raised.value) and hint in str(raised.value)
    doubles = vshred.parse_json(texts, inexact_numbers="double")
    assert vshred.to_json(doubles).to_pylist() == ['{"a":1}', '{"a":1.2345678901234568e39}']
    out = tmp_path / "n.parquet"
    with pytest.raises(vshred.VshredError, match="line 2") as raised:
        vshred.encode(texts, out)
    assert hint in str(raised.value) and not out.exists()
    with pytest.warns(UserWarning, match=r"^1 number that no decimal holds .* \(the first on line 2\)"):
        written = vshred.encode(texts, out, inexact_numbers="double")
    assert (written["rows"], written["inexact_numbers"], written["first_inexact_line"]) == (2, 1, 2)
    with pytest.raises(vshred.VshredError, match='inexact_numbers "nearest" is not error or double'):
        vshred.parse_json(texts, inexact_numbers="nearest")
    # In SQL, the session setting.
    rows = vshred.sql(
        "SELECT to_json(parse_json('%s')) AS j" % texts[1],
        settings={"vshred.inexact_numbers": "double"},
    ).to_pylist()
    assert rows == [{"j": '{"a":1.2345678901234568e39}'}]


def test_a_key_given_twice_is_an_error_unless_the_last_is_asked_for(tmp_path):
    texts = ['{"a": 1}', '{"a": {"b": 1, "b": 2}}']
    hint = 'duplicate_keys="last" keeps the last value'
    with pytest.raises(vshred.VshredError, match="duplicate key at row 1") as raised:
        vshred.parse_json(texts)
    assert '"b" appears twice' in str(raised.value) and hint in str(raised.value)
    last = vshred.parse_json(texts, duplicate_keys="last")
    assert vshred.to_json(last).to_pylist() == ['{"a":1}', '{"a":{"b":2}}']
    out = tmp_path / "d.parquet"
    with pytest.raises(vshred.VshredError, match="line 2") as raised:
        vshred.encode(texts, out)
    assert hint in str(raised.value) and not out.exists()
    assert vshred.encode(texts, out, duplicate_keys="last")["rows"] == 2
    assert vshred.to_json(vshred.read(out).column("v")).to_pylist() == ['{"a":1}', '{"a":{"b":2}}']
    rows = ['{"a": {"b": 1, "b": 2}, "c": 1}'] * 6000
    with pytest.raises(vshred.VshredError, match=hint):
        vshred.infer(rows)
    assert vshred.infer(rows, duplicate_keys="last") == {"a": {"b": "int32"}, "c": "int32"}
    with pytest.raises(vshred.VshredError, match='duplicate_keys "first" is not error or last'):
        vshred.parse_json(texts, duplicate_keys="first")
    rows = vshred.sql(
        "SELECT to_json(parse_json('%s')) AS j" % texts[1],
        settings={"vshred.duplicate_keys": "last"},
    ).to_pylist()
    assert rows == [{"j": '{"a":{"b":2}}'}]


def test_an_arrow_string_array_of_any_kind_encodes_as_its_texts_would(tmp_path):
    pl = pytest.importorskip("polars")
    # Texts across several of the reader's 1 MiB blocks, and chunks.
    texts = [json.dumps({"n": i, "s": "x" * (i % 70)}) for i in range(40_000)]
    expected = vshred.read(_encoded(tmp_path / "from_list.parquet", texts))
    kinds = (pa.string(), pa.large_string(), pa.string_view(), pa.binary(), pa.large_binary(),
             pa.binary_view())
    arrays = [pa.array(texts, kind) if kind in kinds[:3] else
              pa.array([t.encode() for t in texts], kind) for kind in kinds]
    arrays.append(pa.chunked_array([texts[:12_345], [], texts[12_345:]]))
    arrays.append(pl.Series(texts))  # an Arrow stream, string_view
    arrays.append(pa.array(texts).dictionary_encode())
    arrays.append(pa.array(["[]"] * 7 + texts + ["{}"])[7:-1])  # a slice
    for i, array in enumerate(arrays):
        out = _encoded(tmp_path / f"from_array_{i}.parquet", array)
        assert vshred.read(out).equals(expected), type(array)
    # An array's null or a text over two lines is an error naming its item,
    # bytes that are not UTF-8 one naming their line and byte; an array of
    # anything but strings or binaries, an error naming its type.
    out = tmp_path / "out.parquet"
    with pytest.raises(vshred.VshredError, match="^invalid arguments: item 2 of the input is null"):
        vshred.encode(pa.array(['{"a": 1}', '{"a": 2}', None]), out)
    # Items count across chunks. The items before a null are read before
    # its error is given, so a bad line among them (past the sample, which
    # is read whole first) is reported first.
    with pytest.raises(vshred.VshredError, match="item 3 of the input is null"):
        vshred.encode(pa.chunked_array([['{"a": 1}', '{"a": 2}'], ['{"a": 3}', None]]), out)
    late = ['{"a": 1}'] * 30_000
    late[5_000] = '{"a":'
    for items in (pa.array(late[:25_000] + [None]), late[:25_000] + [7]):
        with pytest.raises(vshred.VshredError, match="line 5001, column 6"):
            vshred.encode(items, out)
    # A text over several lines is one row, its line breaks whitespace;
    # one inside a string (after an escaped quote, too) is not JSON.
    pretty = [json.dumps({"a": 1, "b": {"c": "x\\\n\"y"}}, indent=2), '{"a":"x\\\\"\n}']
    assert "\n" in pretty[0]
    for items in (pretty, pa.array(pretty)):
        assert vshred.encode(items, tmp_path / "pretty.parquet")["rows"] == 2
        rows = vshred.to_json(vshred.read(tmp_path / "pretty.parquet")["v"]).to_pylist()
        assert [json.loads(r) for r in rows] == [json.loads(t) for t in pretty]
    # It is a bad line where it stands, skipped as any is; the rows after
    # it stay with their items (a backslash before it let it end the line).
    # The error names the line and column in the item's own text too.
    for text, at, inside in (('{"a":\n"x\ny"}', 8, (2, 3)), ('{"a":"x\\"\n"}', 9, (1, 10)),
                             ('"\\\n5', 1, (1, 2)), ('{\n  "a": 1,\n  "b": ]\n}', 19, (3, 8)),
                             ('{"a":1}\n{"a":2}', 8, (2, 1))):
        with pytest.raises(vshred.VshredError, match=re.escape(
                f"invalid JSON at row 1, line 2, column {at + 1} (byte {9 + at})") + ".*" + re.escape(
                f"(line {inside[0]}, column {inside[1]} of item 1, a text over several lines)")):
            vshred.encode(pa.array(['{"a": 1}', text]), out)
        with pytest.warns(UserWarning, match="^skipped 1 bad line; the first: invalid JSON at row 1"):
            skipped = vshred.encode(['{"a": 1}', text, '{"a": 3}'],
                                    tmp_path / "skipped.parquet", skip_bad_lines=True)
        assert (skipped["rows"], skipped["bad_lines"]) == (2, 1)
        rows = vshred.to_json(vshred.read(tmp_path / "skipped.parquet")["v"]).to_pylist()
        assert rows == ['{"a":1}', '{"a":3}']
    with pytest.raises(vshred.VshredError, match=r"line 2.*UTF-8"):
        vshred.encode(pa.array([b'{"a": 1}', b'{"a": "\xff"}'], pa.binary()), out)
    with pytest.raises(TypeError, match="^the input array holds Int64, not JSON texts"):
        vshred.encode(pa.array([1, 2]), out)
    with pytest.raises(TypeError, match="^the input array holds Int64, not JSON texts"):
        vshred.encode(pa.chunked_array([[1, 2]]), out)
    for table in (pl.DataFrame({"j": texts[:2]}), pa.table({"j": texts[:2], "k": [1, 2]}),
                  pa.record_batch({"j": texts[:2]}), pa.table({"j": pa.array([], pa.string())})):
        with pytest.raises(TypeError,
                           match=re.escape("is a table of columns j") + ".*" + re.escape('(`table["j"]`)')):
            vshred.encode(table, out)
    # The example is a column of texts, named as Python would.
    with pytest.raises(TypeError, match=re.escape('columns k, j, not JSON texts: give one column of texts (`table["j"]`)')):
        vshred.encode(pa.table({"k": [1], "j": ["{}"]}), out)
    with pytest.raises(TypeError, match=r'columns a"b, not JSON texts: give one column of texts$'):
        vshred.encode(pa.table({'a"b': ["{}"]}), out)
    assert not out.exists()
    with pytest.raises(TypeError, match="the input is a dict, not JSON texts"):
        vshred.encode({"a": 1}, out)
    with pytest.raises(vshred.VshredError, match="line 2"):
        vshred.encode(pa.array(['{"a": 1}', '{"a": ']), out)
    assert not out.exists()
    assert vshred.infer(pa.array(texts)) == vshred.infer(texts)


def test_an_empty_or_blank_item_is_an_error_naming_it(tmp_path):
    # Read as a line, it would be skipped as a blank one, and every row
    # after it would shift against the items; skip_bad_lines does not
    # skip it, as it does not skip a null.
    pl = pytest.importorskip("polars")
    out = tmp_path / "out.parquet"
    kinds = (pa.string(), pa.large_string(), pa.string_view(), pa.binary(), pa.large_binary(),
             pa.binary_view())
    for blank, what in (("", "is empty"), ("   ", "is only whitespace"),
                        ("\t\r", "is only whitespace"), ("\ufeff", "is only whitespace")):
        texts = ['{"a": 1}', blank, '{"a": 3}'] if blank != "\ufeff" else [blank, '{"a": 1}']
        i = texts.index(blank)
        inputs = [texts, pa.chunked_array([texts[:1], texts[1:]]), pl.Series(texts),
                  pa.array(texts).dictionary_encode()]
        inputs += [pa.array([t.encode() for t in texts], kind) if kind in kinds[3:] else
                   pa.array(texts, kind) for kind in kinds]
        for items in inputs:
            message = f"^invalid arguments: item {i} of the input {what}"
            with pytest.raises(vshred.VshredError, match=message):
                vshred.encode(items, out, skip_bad_lines=True)
            with pytest.raises(vshred.VshredError, match=message):
                vshred.infer(items)
    assert not out.exists()
    # Whitespace around a text, and a byte order mark before the first, are
    # the text's.
    assert vshred.encode(['\ufeff{"a": 1}', '  [2]\t'], out)["rows"] == 2
    # An error in a first item over several lines is placed after its mark.
    for text, inside in (('\ufeff{\n]', (2, 1)), ('\ufeff{"a":\n"b" ]}', (2, 5))):
        with pytest.raises(vshred.VshredError, match=re.escape(
                f"(line {inside[0]}, column {inside[1]} of item 0, a text over several lines)")):
            vshred.encode([text], tmp_path / "bom.parquet")


def _encoded(path, input):
    assert vshred.encode(input, path)["rows"] == 40_000
    return path


def test_a_dataset_of_files_is_written_as_the_command_line_writes_it(tmp_path):
    texts = [json.dumps({"id": i}) for i in range(10)]
    texts[4] = '{"id": 4]'  # skipped
    out = tmp_path / "events"
    with pytest.warns(UserWarning, match=r"^skipped 1 bad line; the first: invalid JSON at row 4"):
        written = vshred.encode(texts, out, max_file_rows=3, skip_bad_lines=True)
    assert written["rows"] == 9 and written["bad_lines"] == 1
    assert written["first_bad_line"].startswith("invalid JSON at row 4")
    assert [os.path.basename(f["path"]) for f in written["files"]] == [
        "part-00000.parquet", "part-00001.parquet", "part-00002.parquet", "part-00003.parquet"]
    assert [f["rows"] for f in written["files"]] == [3, 2, 3, 1]
    assert sum(f["bytes"] for f in written["files"]) == written["bytes"]
    assert written["files"][0]["layout"] == "variant"
    # The result is data: it serialises as JSON, paths and all.
    assert json.loads(json.dumps(written))["files"][0]["path"] == str(out / "part-00000.parquet")
    assert vshred.get(out, "$.id", "int64").to_pylist() == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    # A directory that holds a dataset is refused, unless appending.
    with pytest.raises(vshred.VshredError, match=r"holds a dataset already .*\(append=True adds to it\)"):
        vshred.encode(texts[:2], out, max_file_rows=3)
    more = vshred.encode(texts[:2], out, max_file_bytes=1 << 20, append=True)
    assert os.path.basename(more["files"][0]["path"]) == "part-00004.parquet"
    assert len(vshred.get(out, "$.id", "int64")) == 11
    # Days under other keys than the days beside them are refused.
    vshred.encode(texts[:2], tmp_path / "logs" / "day=1", max_file_rows=3)
    with pytest.raises(vshred.VshredError, match="its files would be under the keys day, region"):
        vshred.encode(texts[:2], tmp_path / "logs" / "day=2" / "region=eu", max_file_rows=3)
    # A file whose every line is bad is not written; the next takes its number.
    with pytest.warns(UserWarning, match="skipped 3 bad lines"):
        skipped = vshred.encode(texts[:3] + ["{"] * 3 + texts[6:8], tmp_path / "skipped",
                                max_file_rows=3, skip_bad_lines=True)
    assert [os.path.basename(f["path"]) for f in skipped["files"]] == [
        "part-00000.parquet", "part-00001.parquet"]
    assert skipped["bad_lines"] == 3
    # A bloom filter that a re-inferred file's layout does not shred is
    # left out of it, and said.
    drift = [json.dumps({"a": i}) for i in range(2000)] + [json.dumps({"b": i}) for i in range(2000)]
    with pytest.warns(UserWarning, match='part-00001.parquet: no bloom filter for \\$\\.a'):
        drifted = vshred.encode(drift, tmp_path / "drift", max_file_rows=2000,
                                bloom_filters="$.a")
    assert [f["reinferred"] for f in drifted["files"]] == [False, True]
    assert [f["bloom_filters_left_out"] for f in drifted["files"]] == [[], ["$.a"]]
    with pytest.raises(vshred.VshredError, match="append adds files to a dataset"):
        vshred.encode(texts, tmp_path / "one.parquet", append=True)
    for count in ("max_file_rows", "max_file_bytes"):
        for n in (0, -1):
            with pytest.raises(vshred.VshredError, match=f"{count} must be .* from 1, not {n}"):
                vshred.encode(texts, tmp_path / "zero", **{count: n})
    assert not (tmp_path / "zero").exists()
    # Without skip_bad_lines the bad line fails the run, naming it.
    with pytest.raises(vshred.VshredError, match="line 5"):
        vshred.encode(texts, tmp_path / "strict", max_file_rows=3)
    with pytest.raises(vshred.VshredError, match="every line is bad"):
        vshred.encode(["{", "["], tmp_path / "bad.parquet", skip_bad_lines=True)
    assert not (tmp_path / "bad.parquet").exists()


def test_limits_of_inference_with_a_layout_given_are_warned_of(tmp_path):
    out = tmp_path / "out.parquet"
    with pytest.warns(UserWarning, match=r"^max_depth limits what is inferred, and a layout "
                                         r"given as shred is written as it is$"):
        vshred.encode(['{"a": {"b": 1}}'], out, shred={"a": {"b": "int64"}}, max_depth=1)
    with pytest.warns(UserWarning, match=r"^max_columns, min_frequency limit what is inferred, "
                                         r"and shred='none' infers nothing$"):
        vshred.encode(['{"a": 1}'], out, shred="none", max_columns=3, min_frequency=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vshred.encode(['{"a": 1}'], out, shred="spark", max_depth=1)
        vshred.infer(['{"a": 1}'], shred="spark", max_depth=1)
    with pytest.warns(UserWarning, match=r"^max_depth limits what is inferred, and shred='none' "
                                         r"infers nothing$"):
        vshred.infer(['{"a": 1}'], shred="none", max_depth=3)


def test_an_item_cut_short_is_not_taken_for_pretty_printed_json(tmp_path):
    # A file's first line cut short after `{"a":` looks like pretty-printed
    # JSON, and the command line says how to make JSON Lines of it; an
    # item is one whole text, so it is only cut short.
    out = tmp_path / "out.parquet"
    for items in (['{"a":'], ['[1,'], ['{"a":', '[1,']):
        with pytest.raises(vshred.VshredError, match="unexpected end of input") as raised:
            vshred.encode(items, out, skip_bad_lines=len(items) > 1)
        assert "jq" not in str(raised.value) and "JSON Lines" not in str(raised.value), raised.value
    with pytest.warns(UserWarning, match="^skipped 1 bad line") as said:
        vshred.encode(['{"a":', '{"a": 1}'], out, skip_bad_lines=True)
    assert "jq" not in str(said[0].message), said[0].message
    # A file given by its path is JSON Lines, and told so.
    lines = tmp_path / "in.json"
    lines.write_text('{"a":\n1}\n')
    with pytest.raises(vshred.VshredError, match=re.escape("jq -c . in.json")):
        vshred.encode(lines, out)


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
    # A directory takes a dataset; a name ending in / gave "Not a directory
    # (os error 20)", then "is a directory" of one not made yet.
    for directory in (tmp_path, tmp_path / "new" / ""):
        with pytest.raises(vshred.VshredError, match="a directory takes a dataset of files, "
                           "which max_file_rows or max_file_bytes writes"):
            vshred.encode(['{"a": 1}'], str(directory) + os.sep)
    assert not (tmp_path / "new").exists()
    # Of the data, as a null item is, so reported in its place.
    with pytest.raises(vshred.VshredError, match="item 1 of the input is not a str or bytes"):
        vshred.encode(['{"a": 1}', 7], out)
    # Bytes are texts as a file's are, checked as UTF-8.
    assert vshred.encode([b'{"a": 1}', '{"a": 2}'], tmp_path / "bytes.parquet")["rows"] == 2
    with pytest.raises(vshred.VshredError, match=r"line 2.*UTF-8"):
        vshred.encode([b'{"a": 1}', b'{"a": "\xff"}'], tmp_path / "bytes.parquet")
    for count in ("sample_rows", "row_group_rows"):
        for n in (0, -3):
            with pytest.raises(vshred.VshredError, match=f"{count} must be .* from 1, not {n}"):
                vshred.encode(['{"a": 1}'], out, **{count: n})
    assert not out.exists()
    with pytest.raises(vshred.VshredError, match="not a preset"):
        vshred.encode(['{"a": 1}'], out, shred="sprak")
    with pytest.raises(vshred.VshredError, match="nothing.parquet"):
        vshred.get(tmp_path / "nothing.parquet", "$.a")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
    with pytest.raises(vshred.VshredError, match="corrupt.parquet"):
        vshred.read(corrupt)


def test_sql_reads_files_by_path_and_tables_by_name(events):
    by_path = vshred.sql(
        f"SELECT variant_get(v, '$.user.id', 'bigint') AS uid FROM '{events}' "
        "WHERE variant_get(v, '$.kind', 'string') = 'view' ORDER BY id"
    )
    assert by_path.column("uid").to_pylist() == [1000 + i for i in range(0, 300, 3)]
    # A Variant result is a Variant column, whose JSON is the input's.
    named = vshred.sql("SELECT id, v FROM e ORDER BY id", tables={"e": str(events)})
    assert named.schema.field("v").metadata[b"ARROW:extension:name"] == b"arrow.parquet.variant"
    text = vshred.to_json(named["v"]).to_pylist()
    assert [json.loads(t) for t in text] == [json.loads(r)["v"] for r in ROWS]
    # Statements run in turn in one session; the last one's rows are returned.
    session = vshred.Session({"datafusion.execution.batch_size": 64})
    session.register("e", events)
    answer = session.sql(
        "CREATE VIEW views AS SELECT * FROM e WHERE variant_get(v, '$.kind', 'string') = 'view';"
        "SELECT count(*) AS n FROM views"
    )
    assert answer.to_pylist() == [{"n": 100}]
    assert session.sql("SELECT count(*) AS n FROM views").to_pylist() == [{"n": 100}]
    assert session.sql("SHOW datafusion.execution.batch_size")["value"].to_pylist() == ["64"]


def test_a_name_registered_again_names_the_new_source_in_lower_case(tmp_path, events):
    # Registering again failed ("The table t already exists"), though the
    # docstring says it reads files added since.
    data = tmp_path / "data"
    data.mkdir()
    vshred.encode(['{"a": 1}'], data / "one.parquet")
    session = vshred.Session()
    session.register("t", data)
    vshred.encode(['{"a": 2}', '{"a": 3}'], data / "two.parquet")
    assert session.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 1}]
    session.register("T", str(data).encode())
    assert session.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 3}]
    session.register("T", pa.table({"a": [1]}))
    assert session.sql("SELECT count(*) AS n FROM T").to_pylist() == [{"n": 1}]
    # Two names that SQL reads as one: the first would be lost.
    with pytest.raises(vshred.VshredError, match="tables 'T' and 't' are one name"):
        vshred.sql("SELECT 1", tables={"T": pa.table({"a": [1]}), "t": pa.table({"a": [2]})})
    assert vshred.sql('SELECT a FROM "a.B"', tables={"a.B": pa.table({"a": [4]})}).to_pylist() == [{"a": 4}]


def test_a_polars_frame_with_a_column_of_nulls_is_a_table():
    pl = pytest.importorskip("polars")
    # Its C stream has buffers for the nulls, which Arrow's import refused.
    frame = pl.DataFrame({"a": [1, 2], "n": [None, None]})
    table = vshred.sql("SELECT a, n FROM t ORDER BY a", tables={"t": frame})
    assert table.to_pylist() == [{"a": 1, "n": None}, {"a": 2, "n": None}]


def test_paths_given_as_bytes_are_read_as_encode_takes_them(events):
    as_bytes = str(events).encode()
    assert vshred.read(as_bytes).equals(vshred.read(events))
    assert vshred.get(as_bytes, "$.kind", "string").equals(vshred.get(events, "$.kind", "string"))


def test_sql_joins_pyarrow_polars_and_duckdb_tables(events):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    names = pa.table({"id": pa.array(range(0, 300, 2), pa.int64()),
                      "label": [f"even-{i}" for i in range(0, 300, 2)]})
    weights = pl.DataFrame({"id": list(range(0, 300, 5)), "w": [1.5] * 60})
    kinds = duckdb.sql("SELECT * FROM (VALUES ('click', 1), ('view', 2)) AS k(kind, code)")
    joined = vshred.sql(
        "SELECT e.id, n.label, w.w, k.code FROM e "
        "JOIN n ON e.id = n.id JOIN w ON e.id = w.id "
        "JOIN k ON variant_get(e.v, '$.kind', 'string') = k.kind ORDER BY e.id",
        tables={"e": events, "n": names, "w": weights, "k": kinds},
    )
    ids = list(range(0, 300, 10))
    assert joined.column("id").to_pylist() == ids
    assert joined.column("label").to_pylist() == [f"even-{i}" for i in ids]
    assert joined.column("code").to_pylist() == [2 if i % 3 == 0 else 1 for i in ids]
    # Variant columns of an Arrow table are Variants in SQL too.
    table = vshred.read(events)
    kinds = vshred.sql("SELECT variant_get(v, '$.kind', 'string') AS kind FROM t", tables={"t": table})
    assert kinds.column("kind").to_pylist() == vshred.get(events, "$.kind", "string").to_pylist()


def test_sql_copy_writes_a_shredded_dataset(tmp_path, events):
    out = tmp_path / "copied"
    vshred.sql(f"COPY (SELECT * FROM '{events}') TO '{out}/'")
    files = sorted(p.name for p in out.iterdir())
    assert files and all(name.endswith(".parquet") for name in files)
    assert vshred.read(out).sort_by("id").equals(vshred.read(events))
    assert vshred.get(out, "$.kind", "string").null_count == 0


def test_key_value_directories_come_back_as_columns(tmp_path, events):
    out = tmp_path / "by-kind"
    vshred.sql(f"COPY (SELECT variant_get(v, '$.kind', 'string') AS kind, v FROM '{events}') TO '{out}/' PARTITIONED BY (kind)")
    assert all(p.name.startswith("kind=") for p in out.iterdir())
    table = vshred.read(out)
    assert table.column_names == ["v", "kind"]
    assert sorted(table.column("kind").to_pylist()) == sorted(vshred.get(events, "$.kind", "string").to_pylist())
    kind = table.column("kind")[0].as_py()
    kept = vshred.get(out, "$.kind", "string", where=f'kind == "{kind}"')
    assert kept.to_pylist() == [kind] * vshred.get(events, "$.kind", "string").to_pylist().count(kind)


def test_sql_plans_long_expressions_and_deep_queries(events):
    # Planned on the runtime's threads, which overflowed tokio's 2 MiB
    # stacks (a debug build, 100 terms): the interpreter died of SIGSEGV.
    ors = " OR ".join(f"v:event::string = 'e{i}'" for i in range(300))
    assert vshred.sql(f"SELECT count(*) AS n FROM '{events}' WHERE {ors}").to_pylist() == [{"n": 0}]
    assert vshred.sql("SELECT " + "+".join(["1"] * 150) + " AS s").to_pylist() == [{"s": 150}]
    nested = "SELECT 1 AS a"
    for i in range(20):
        nested = f"SELECT a FROM ({nested}) t{i}"
    assert vshred.sql(nested).to_pylist() == [{"a": 1}]


def test_sql_errors_are_vshred_errors_saying_what(tmp_path):
    missing = tmp_path / "nothing.parquet"
    with pytest.raises(vshred.VshredError) as raised:
        vshred.sql(f"SELECT * FROM '{missing}'")
    assert str(raised.value) == f"{missing}: I/O error: No such file or directory (os error 2)"
    with pytest.raises(vshred.VshredError, match="^SQL syntax error: Expected: an SQL statement, found: SELEC"):
        vshred.sql("SELEC 1")
    with pytest.raises(vshred.VshredError, match="^statement 2 of 2: No field named nope"):
        vshred.sql("SELECT 1; SELECT nope")
    with pytest.raises(vshred.VshredError, match="table t: a source is a path, a URL or an Arrow table.*int$"):
        vshred.sql("SELECT 1", tables={"t": 7})
    # A stream of one array has no columns: not a table either (it was a
    # ValueError of the C data interface, naming no table).
    pl = pytest.importorskip("polars")
    for column, given in ((pl.Series("j", ["1"]), "Series"),
                          (pa.chunked_array([["1"]]), "ChunkedArray")):
        with pytest.raises(vshred.VshredError,
                           match=rf"^table c: a source is a path, a URL or an Arrow table \(an "
                                 rf"object whose __arrow_c_stream__ gives record batches: a "
                                 rf"pyarrow Table, a polars DataFrame\), not {given}: "):
            vshred.sql("SELECT 1", tables={"c": column})
    with pytest.raises(vshred.VshredError, match="setting datafusion.execution.batch_sise"):
        vshred.Session({"datafusion.execution.batch_sise": 1})
    with pytest.raises(vshred.VshredError,
                       match="no object store for gs://nobody/: vshred reads file:// and s3:// URLs"):
        vshred.sql("SELECT 1", tables={"t": "gs://nobody/events/"})


def test_ctrl_c_stops_a_running_query():
    # Counting 10^10 rows takes minutes in a debug build (10^9: 23 s). Not a
    # speed target: without the stop, the exception would come only once
    # the query had finished.
    interrupted = []
    timer = threading.Timer(0.5, lambda: (interrupted.append(time.monotonic()),
                                          os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            vshred.sql("SELECT count(*) FROM generate_series(1, 10000000000)")
    finally:
        timer.cancel()
    assert time.monotonic() - interrupted[0] < 10
    # The session's runtime still serves the next query.
    assert vshred.sql("SELECT 41 + 1 AS n").to_pylist() == [{"n": 42}]


def test_ctrl_c_stops_an_encode_and_leaves_the_old_output(tmp_path):
    # The encoder works with the interpreter released: the exception came
    # only once it had finished, the output replaced. 20 MiB of input,
    # half a second of a debug build's encode after its temporary file
    # appears, and the signal is sent as soon as it does.
    texts = ['{"n": %d, "s": "%s"}' % (i, "x" * 480) for i in range(40_000)]
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(texts) + "\n")
    out = tmp_path / "out" / "old.parquet"
    out.parent.mkdir()
    vshred.encode(['{"old": 1}'], out)
    old = out.read_bytes()
    for input in (lines, texts, pa.array(texts)):
        started = threading.Event()

        def interrupt():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if any(name.endswith(".tmp") for name in os.listdir(out.parent)):
                    started.set()
                    os.kill(os.getpid(), signal.SIGINT)
                    return
                time.sleep(0.001)

        thread = threading.Thread(target=interrupt)
        thread.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                vshred.encode(input, out)
        finally:
            thread.join()
        assert started.is_set(), type(input)
        assert out.read_bytes() == old, type(input)
        assert os.listdir(out.parent) == ["old.parquet"], type(input)


def assert_stopped_partway(calls, within):
    # Runs each call whole, then again with SIGALRM a tenth of the way in:
    # the handler's own exception must come out of the call, as itself,
    # before `within` of the whole call's time has passed (not once the
    # call was over). The whole call is timed again after, and the slower
    # time taken, so that a machine slowed between the runs is not taken
    # for a call that ran on.
    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop()

    before = signal.signal(signal.SIGALRM, stop)
    try:
        for call in calls:
            began = time.monotonic()
            call()
            whole = time.monotonic() - began
            signal.setitimer(signal.ITIMER_REAL, whole / 10)
            began = time.monotonic()
            try:
                with pytest.raises(Stop):
                    call()
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            stopped = time.monotonic() - began
            began = time.monotonic()
            call()
            whole = max(whole, time.monotonic() - began)
            assert stopped < whole * within, (stopped, whole)
    finally:
        signal.signal(signal.SIGALRM, before)


def test_a_signal_stops_get_and_read_between_batches(tmp_path):
    # They scanned to the end before the signal's exception came (a debug
    # build reads these 1M rows in about 0.8 s, gets them in 0.25).
    out = tmp_path / "f.parquet"
    vshred.encode(['{"a": %d, "b": "x%d"}' % (i, i % 100) for i in range(1_000_000)], out)
    assert_stopped_partway((lambda: vshred.read(out), lambda: vshred.get(out, "$.b")), 1 / 2)


def test_a_signal_stops_parse_json_and_to_json_between_chunks():
    # Each converted the whole array before the signal's exception came;
    # now it comes at the first chunk's end after the signal (a sixth of
    # the way).
    rows = 400_000
    texts = pa.array(['{"a": %d, "b": ["x%d", 1.5]}' % (i, i) for i in range(rows)])
    variants = vshred.parse_json(texts)
    assert_stopped_partway(
        (lambda: vshred.parse_json(texts), lambda: vshred.to_json(variants)), 0.6)
    # Done a chunk at a time (of 65,536 rows), the same values, and an
    # error names its row in the whole array.
    back = vshred.to_json(variants)
    assert len(back) == rows
    for i in (0, 65_535, 65_536, 131_072, rows - 1):
        assert back[i].as_py() == '{"a":%d,"b":["x%d",1.5]}' % (i, i)
    bad = pa.array(["1"] * 300_000 + ["{"])
    with pytest.raises(vshred.VshredError, match="row 300000"):
        vshred.parse_json(bad)


def test_the_inference_limits_are_the_command_lines(tmp_path):
    rows = ['{"id": 1, "a": {"b": {"c": 1}}}'] * 5000
    assert vshred.infer(rows) == {"a": {"b": {"c": "int32"}}, "id": "int32"}
    assert vshred.infer(rows, max_depth=1) == {"id": "int32"}
    assert vshred.infer(rows, max_columns=1) == "variant"
    # Fields in 2% of the rows: below the default share, above 0.01.
    rare = rows[:100] + ['{"other": 1}'] * 4900
    assert "id" not in vshred.infer(rare)
    assert "id" in vshred.infer(rare, min_frequency=0.01)
    written = vshred.encode(rows, tmp_path / "t.parquet", max_depth=1)
    assert written["layout"] == {"id": "int32"}
    for limits, says in ((dict(max_depth=-1), "max_depth must be a whole number from 0, not -1"),
                         (dict(min_frequency=2.0), "min_frequency must be a share from 0 to 1"),
                         (dict(max_columns=0), "max_columns must be a whole number from 1, not 0")):
        with pytest.raises(vshred.VshredError, match=re.escape(says)):
            vshred.infer(rows, **limits)
    # A wrong type is a TypeError naming the argument given.
    for name, given in (("min_frequency", "0.5"), ("max_columns", "300"), ("max_depth", 2.5)):
        for call in (lambda: vshred.infer(rows, **{name: given}),
                     lambda: vshred.encode(rows, tmp_path / "u.parquet", **{name: given})):
            with pytest.raises(TypeError, match="'%s'" % name):
                call()
    # A schema file's path, as a str or a path.
    schema = tmp_path / "layout.json"
    schema.write_text('{"id": "int64"}')
    assert vshred.infer(rows, shred=schema) == vshred.infer(rows, shred=str(schema)) == {
        "id": "int64"}


def test_pyarrow_reads_the_file_and_infer_gives_the_layout(events):
    assert pq.read_table(events).num_rows == 300
    # Spark's preset shreds every field; ours weighs what each saves: the
    # price, a string or a number, stays in the residual; the user's id
    # and name, distinct, pay as deltas. (Sampled from a longer input: the
    # 300 rows as a file of their own are smaller unshredded.)
    assert vshred.infer(ROWS, variant_fields=["v"], sample_rows=200) == LAYOUT
    assert vshred.infer(ROWS, variant_fields=["v"]) == "variant"
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


def test_slices_of_nested_arrays_read_as_their_rows(tmp_path):
    # arrow-rs 59 imports a slice of structs wrongly (apache/arrow-rs#9235):
    # the module passes copies, so a slice reads as its own rows.
    path = tmp_path / "p.parquet"
    vshred.encode(['{"id": %d}' % i for i in range(5000)], path)
    v = pq.read_table(path)["v"].combine_chunks()
    assert vshred.to_json(v.slice(1, 2)).to_pylist() == ['{"id":1}', '{"id":2}']
    nested = pa.table({"s": pa.array([{"a": {"b": i}} for i in range(5)])})
    for source in (nested.slice(1, 2), nested.to_batches()[0].slice(1, 2),
                   nested.slice(1, 2).to_reader()):
        got = vshred.sql("SELECT s['a']['b'] AS b FROM t", tables={"t": source})
        assert got.column("b").to_pylist() == [1, 2]
    import pyarrow.dataset as ds
    reader = ds.dataset(path).scanner(batch_size=1000).to_reader()
    assert vshred.sql("SELECT count(*) AS n FROM t", tables={"t": reader}).to_pylist() == [{"n": 5000}]


def _query_in_child(queue):
    queue.put(vshred.sql("SELECT 1 AS x").to_pylist())


def test_a_forked_child_runs_queries_of_its_own():
    # A child forked after the parent ran a query has the parent's runtime
    # but none of its threads: it makes its own (it waited for ever).
    import multiprocessing
    assert vshred.sql("SELECT 1 AS x").to_pylist() == [{"x": 1}]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_query_in_child, args=(queue,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the child's query did not end"
    assert queue.get(timeout=5) == [{"x": 1}]


# A program that ends while a daemon thread encodes a generator: the
# generator waits, so the interpreter finalizes while the encoder's reader
# is in its Python code (the process aborted with "Fatal Python error:
# PyGILState_Release").
_EXIT_DURING_ENCODE = """
import sys, threading, time
import vshred

started = threading.Event()
def lines():
    for i in range(100_000):
        if i == 100:
            started.set()
        if i >= 100:
            time.sleep(0.01)
        yield '{"a": %d}' % i

out = sys.argv[1]
threading.Thread(target=lambda: vshred.encode(lines(), out), daemon=True).start()
started.wait()
"""


def test_a_program_ends_while_a_daemon_thread_encodes_a_generator(tmp_path):
    out = tmp_path / "x.parquet"
    ended = subprocess.run([sys.executable, "-c", _EXIT_DURING_ENCODE, str(out)],
                           capture_output=True, text=True, timeout=60)
    assert (ended.returncode, ended.stderr) == (0, "")
    # The encode was stopped, as the thread was: no file in place.
    assert not out.exists()


_EXIT_DURING_BLOCKED_ENCODE = """
import sys, threading
import vshred

started = threading.Event()
def lines():
    yield '{"a": 1}'
    started.set()
    threading.Event().wait()  # an input that never comes
    yield '{"a": 2}'

threading.Thread(target=lambda: vshred.encode(lines(), sys.argv[1]), daemon=True).start()
started.wait()
"""


def test_a_program_ends_while_a_daemon_thread_encodes_a_generator_that_waits_for_ever(tmp_path):
    # The module waits a second at most for the generator to yield.
    ended = subprocess.run([sys.executable, "-c", _EXIT_DURING_BLOCKED_ENCODE,
                            str(tmp_path / "x.parquet")],
                           capture_output=True, text=True, timeout=30)
    assert (ended.returncode, ended.stderr) == (0, "")


# An `atexit` function registered before vshred's own (so run after it)
# encodes on the main thread: it is not held as a daemon thread's reader.
_ENCODE_AT_EXIT = """
import atexit, sys
def encode_at_exit():
    import vshred
    written = vshred.encode(('{"a": %d}' % i for i in range(10)), sys.argv[1])
    print(written["rows"])
atexit.register(encode_at_exit)
import vshred
"""


def test_an_atexit_function_on_the_main_thread_still_encodes(tmp_path):
    out = tmp_path / "x.parquet"
    ended = subprocess.run([sys.executable, "-c", _ENCODE_AT_EXIT, str(out)],
                           capture_output=True, text=True, timeout=60)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "10\n", "")
    assert pq.read_table(out).num_rows == 10


def test_a_corrupt_file_is_a_vshred_error_and_nothing_on_stderr():
    # The parquet crate panics on this dictionary page header (a division
    # by zero); the core turns that into an error, and the default panic
    # hook printed the panic and a backtrace header on stderr besides.
    corrupt = os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "corrupt",
                           "dictionary-page-header-divides-by-zero.parquet")
    script = """
import sys, vshred
for read in (lambda: vshred.read(sys.argv[1]),
             lambda: vshred.sql("SELECT * FROM '%s'" % sys.argv[1])):
    try:
        read()
    except vshred.VshredError as e:
        print("divide by zero" in str(e))
"""
    quiet = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    ended = subprocess.run([sys.executable, "-c", script, os.path.abspath(corrupt)],
                           capture_output=True, text=True, timeout=60, env=quiet)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "True\nTrue\n", "")
    # RUST_BACKTRACE set keeps Rust's default hook: the panic is shown.
    traced = subprocess.run([sys.executable, "-c", script, os.path.abspath(corrupt)],
                            capture_output=True, text=True, timeout=60,
                            env={**quiet, "RUST_BACKTRACE": "1"})
    assert traced.stdout == "True\nTrue\n" and "panicked at" in traced.stderr, traced.stderr


# A daemon thread encodes a generator; an `atexit` function ends the
# generator and joins the thread, to have the file written. Registered
# after `import vshred` (the usual order), it runs before vshred's own
# (atexit runs the last registered first): the call goes on to its end.
# Registered before, it runs after vshred's, which holds the thread once
# the program is ending: the join must not hang, and the call fails.
_JOIN_AT_EXIT = """
import atexit, sys, threading, time
if sys.argv[2] == "vshred first":
    import vshred
stop = threading.Event()
def lines():
    i = 0
    while not stop.is_set():
        time.sleep(0.01)
        yield '{"a": %d}' % i
        i += 1
def finish():
    stop.set()
    worker.join()
    print("joined")
atexit.register(finish)
import vshred
def work():
    try:
        print("wrote", vshred.encode(lines(), sys.argv[1])["rows"] > 0)
    except vshred.VshredError as e:
        print("failed:", str(e) == "stopped: the Python interpreter is exiting")
worker = threading.Thread(target=work, daemon=True)
worker.start()
time.sleep(0.3)
"""


@pytest.mark.parametrize("order, said", [("vshred first", "wrote True"),
                                         ("finish first", "failed: True")])
def test_an_atexit_function_that_ends_and_joins_a_daemon_threads_encode(tmp_path, order, said):
    out = tmp_path / "x.parquet"
    ended = subprocess.run([sys.executable, "-c", _JOIN_AT_EXIT, str(out), order],
                           capture_output=True, text=True, timeout=30)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, said + "\njoined\n", "")
    if order == "vshred first":
        assert pq.read_table(out).num_rows > 0
    else:
        assert not out.exists()
