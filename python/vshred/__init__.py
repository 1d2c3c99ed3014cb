"""vshred: Parquet Variant from Python.

Encode JSON lines into Parquet files whose Variant columns are shredded
into typed columns (the layout inferred from the data), and read them back:
a path's values as a typed ``pyarrow.Array``, whole rows as a
``pyarrow.Table``, or the result of SQL (DataFusion, with Spark's Variant
functions) over files and Arrow tables. The work is done by the vshred
Rust crate; arrays cross by the Arrow C data interface, without copies.

>>> import os, tempfile, vshred
>>> out = os.path.join(tempfile.mkdtemp(), "events.parquet")
>>> rows = ['{"id": 1, "v": {"user": {"id": 7}}}', '{"id": 2, "v": {"user": {"id": 9}}}']
>>> vshred.encode(rows, out, variant_fields=["v"])["rows"]
2
>>> vshred.get(out, "$.user.id", "int64").to_pylist()
[7, 9]
"""

import json as _json
import os as _os
import warnings as _warnings
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Union

import pyarrow as _pa

from ._vshred import VshredError, __version__
from . import _vshred

#: A file's path, as :func:`open` takes one.
Path = Union[str, bytes, "_os.PathLike[str]", "_os.PathLike[bytes]"]
#: What :func:`encode` and :func:`infer` read: a JSON lines file's path,
#: an Arrow array of texts (any object with ``__arrow_c_array__`` or
#: ``__arrow_c_stream__``), or an iterable of JSON texts.
Input = Union[Path, Iterable[Union[str, bytes]], Any]
#: A layout, as :func:`infer` gives it: ``"variant"``, or a dict of fields
#: (a list for an array), each a type name or a layout.
Layout = Union[str, Dict[str, Any], List[Any]]
#: One name or several.
Names = Union[str, Sequence[str], None]

__all__ = ["VshredError", "encode", "infer", "get", "read", "parse_json", "to_json",
           "sql", "Session", "__version__"]


def _path(path):
    """A path given as ``bytes`` as ``str``, as :func:`encode` takes it."""
    return _os.fsdecode(path) if isinstance(path, bytes) else path


def _names(names):
    """A list of names from one name or several (``"v"`` or ``["v", "w"]``)."""
    return [names] if isinstance(names, str) else names


class _ArrowChunks:
    """The chunks of a chunked Arrow array, which the native module reads
    one at a time (combined, strings past 2 GiB would overflow)."""

    def __init__(self, chunks):
        self._vshred_arrow_chunks = chunks


def _input(input):
    """A path as ``str``; a chunked Arrow array, or a stream of one (a
    polars Series), as its chunks, whose texts the native module reads
    without a ``str`` each, as it reads an array's; any other iterable as
    it is."""
    if isinstance(input, bytes):
        input = _path(input)
    if isinstance(input, str) and input == "-":
        raise ValueError("input is a file's path, or JSON texts given as an iterable ('-', "
                         "standard input, is the command line's: sys.stdin is an iterable of "
                         "lines)")
    if not hasattr(input, "__arrow_c_array__") and hasattr(input, "__arrow_c_stream__"):
        input = _pa.chunked_array(input)
    if isinstance(input, _pa.ChunkedArray):
        # An empty one's type is checked as a chunk's is (a table of no
        # rows is refused as one of rows is).
        return _ArrowChunks(input.chunks or [_pa.array([], type=input.type)])
    return input


def _array(array):
    """An Arrow array of another library (a polars Series, anything with
    ``__arrow_c_array__`` or ``__arrow_c_stream__``) as a pyarrow one; a
    pyarrow array or chunked array as it is; anything else as it is."""
    if not isinstance(array, (_pa.Array, _pa.ChunkedArray)):
        if hasattr(array, "__arrow_c_array__"):
            array = _pa.array(array)
        elif hasattr(array, "__arrow_c_stream__"):
            array = _pa.chunked_array(array)
    return array


def _unsliced(array):
    """``array``, a copy of it where it is a slice (at an offset) of a
    nested type: arrow-rs 59 imports such a slice of structs wrongly and
    panics (apache/arrow-rs#9235)."""
    if array.offset and array.type.num_fields:
        return _pa.concat_arrays([array])
    return array


def _unsliced_source(source):
    """A pyarrow table, batch or reader as a reader whose batches have no
    sliced nested column (:func:`_unsliced`); a polars DataFrame as its
    pyarrow table (the C stream polars gives has buffers for a column of
    nulls, which Arrow's import refuses); any other source as it is."""
    kind = type(source)
    if kind.__module__.startswith("polars") and kind.__name__ == "DataFrame":
        source = source.to_arrow()
    if isinstance(source, _pa.Table):
        source = source.to_reader()
    elif isinstance(source, _pa.RecordBatch):
        source = _pa.RecordBatchReader.from_batches(source.schema, [source])
    if not isinstance(source, _pa.RecordBatchReader):
        return source
    batches = (_pa.RecordBatch.from_arrays([_unsliced(c) for c in batch.columns],
                                           schema=batch.schema) for batch in source)
    return _pa.RecordBatchReader.from_batches(source.schema, batches)


def _parquet_files(directory):
    """The names of the Parquet files in ``directory``, if it is one."""
    try:
        return {name for name in _os.listdir(directory) if name.endswith(".parquet")}
    except OSError:
        return set()


def _chunk_by_chunk(native, array, *args):
    """``native`` over the chunks of ``array`` (a pyarrow array or chunked
    array), whose results come in parts: a chunked array of them for a
    chunked array, so that a column of more than 2 GiB never has to be one
    array; one array for an array."""
    chunked = isinstance(array, _pa.ChunkedArray)
    # A chunked array of no chunks: one empty chunk, for the result's type.
    chunks = (array.chunks or [_pa.array([], type=array.type)]) if chunked else [array]
    parts = native([_unsliced(chunk) for chunk in chunks], *args)
    if chunked:
        return _pa.chunked_array(parts)
    return parts[0] if len(parts) == 1 else _pa.concat_arrays(parts)


def _shred(shred):
    """``shred`` as the core takes it: a layout as :func:`infer` gives it
    (a dict, a list) as its JSON; a schema file's path as ``str``."""
    if isinstance(shred, (dict, list)):
        return _json.dumps(shred)
    if isinstance(shred, (bytes, _os.PathLike)):
        return _os.fsdecode(shred)
    return shred


def encode(input: Input, output: Path, *, variant_fields: Names = None,
           shred: Union[Layout, Path] = "auto", decimal: Literal["int", "flba"] = "int",
           compression: str = "zstd", row_group_rows: Optional[int] = None,
           sample_rows: Optional[int] = None, max_columns: Optional[int] = None,
           max_depth: Optional[int] = None, min_frequency: Optional[float] = None,
           bloom_filters: Names = None, inexact_numbers: Literal["error", "double"] = "error",
           duplicate_keys: Literal["error", "last"] = "error", skip_bad_lines: bool = False,
           max_file_rows: Optional[int] = None, max_file_bytes: Optional[int] = None,
           append: bool = False) -> Dict[str, Any]:
    """Encodes JSON lines into the Parquet file ``output``, as ``vshred encode``,
    or into a dataset directory of files when ``max_file_rows`` or
    ``max_file_bytes`` is given.

    ``input`` is a path (``str``, ``bytes`` or ``os.PathLike``) of a JSON
    lines file, an Arrow array of strings or binaries (pyarrow's, chunked
    too, a polars Series, any object with ``__arrow_c_array__`` or
    ``__arrow_c_stream__``; its values are read without a Python object
    each), or an iterable of JSON texts (``str``, or UTF-8 ``bytes``): one row each item (a text over
    several lines, pretty-printed, too), so an item that is null, empty,
    only whitespace or not a text is an error naming it, which
    ``skip_bad_lines`` does not skip; an input of another kind (a number,
    an Arrow array of numbers, a table of several columns) is a
    ``TypeError``. Each row is an object whose
    ``variant_fields`` become Variant columns (the whole row is one Variant
    column ``v`` when none are named) and whose other fields are typed
    columns where the sample gives them one type (``int64``, ``double``,
    ``string``, ``boolean``), Variant columns otherwise (decimals, objects,
    arrays, mixed types), so that no digit is lost. ``shred`` is ``"auto"``, ``"spark"`` (Spark 4.3's layout),
    ``"none"``, a layout as :func:`infer` gives it (a dict) or the path of
    a schema file; ``auto`` and ``spark`` infer it from the first
    ``sample_rows`` lines (4096), within ``max_columns`` Parquet leaves per
    Variant column (300), ``max_depth`` levels of nesting (50) and for
    fields in at least ``min_frequency`` of the rows (0.1), as the command
    line's options of those names; ``decimal`` is ``"int"`` or
    ``"flba"``; ``compression`` ``"zstd"`` (level 1, Variant
    ``metadata`` and ``value`` at 3), ``"zstd:N"``, ``"snappy"`` or ``"none"``;
    ``bloom_filters`` names shredded paths (``"$.user.id"``) or columns
    given a bloom filter. A number written without an exponent that no
    decimal holds (more than 38 digits) is an error naming its line, unless
    ``inexact_numbers="double"`` stores the nearest double (as Spark's
    ``parse_json`` does); an object that gives a key twice, which a Variant
    cannot hold, is an error unless ``duplicate_keys="last"`` keeps the value
    given last. A bad line is an error naming it, unless ``skip_bad_lines``
    counts and skips it (an input whose every line is bad is still an
    error): one that is not JSON, or whose JSON the file cannot hold as
    asked (a key given twice, a number no decimal holds, nesting deeper
    than 128, a value of another type than its typed column's, a field of
    a typed column first met after the sample).

    The file is written to a temporary file and renamed into place once
    complete: a failed encode leaves no output, and a file ``output``
    already held stays as it was. Ctrl-C stops an encode, and an exception
    the iterable raises stops it and comes out as itself. Returns what was written:
    ``rows``, ``row_groups``, ``bytes``, the ``layout`` chosen (as
    :func:`infer` gives it), ``bad_lines`` skipped and the
    ``first_bad_line`` with its error, ``inexact_numbers`` stored as
    doubles and the ``first_inexact_line`` (each warned about, as the
    command line warns), the ``unsampled_variant_fields`` (names no
    sampled line has, each also warned about: misspelt, perhaps) and the
    ``unsampled_layout_fields`` (fields of a ``shred`` layout given that no
    sampled line has, as ``COLUMN.path``, warned about likewise), and
    ``left_unshredded``: each Variant ``column`` that ``auto`` wrote
    unshredded because the sample was smaller so, with the
    ``unshredded_bytes`` and ``shredded_bytes`` it measured (of the
    sample written with that column alone in the file's row groups where
    ``in_row_groups``, the whole file where ``whole_file`` too, else of
    the sample's column chunks).

    With ``max_file_rows`` (lines per file) or ``max_file_bytes`` (a file
    ends with the first batch that takes it to that size), ``output`` is a
    directory, made if missing, of files ``part-00000.parquet``, ... that
    each appear whole, each with a layout that fits its rows (as ``vshred
    encode OUT_DIR --max-file-rows N`` writes them). A directory that holds
    Parquet files already is refused unless ``append`` adds to it. The
    result then gives ``files``, each with its ``path`` (a ``str``), ``rows``,
    ``row_groups``, ``bytes``, ``layout``, whether the layout was
    ``reinferred`` for it, and the ``bloom_filters_left_out`` of it (paths
    its layout does not shred, each also warned about), in place of one
    ``layout``.

    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> written = encode(['{"id": 1, "tags": ["a"]}'] * 5000, out)
    >>> written["rows"], written["layout"]
    (5000, {'id': 'int32', 'tags': ['string']})
    """
    input, shred, output = _input(input), _shred(shred), _path(output)
    if str(output) == "-":
        raise ValueError("output is a file's path ('-', standard output, is the "
                         "command line's)")
    variant_fields, bloom_filters = _names(variant_fields), _names(bloom_filters)
    _warn_of_unused_limits(shred, max_columns, max_depth, min_frequency)
    dataset = max_file_rows is not None or max_file_bytes is not None
    before = _parquet_files(output) if dataset else set()
    try:
        written = _vshred.encode(input, output, variant_fields, shred, decimal,
                                 compression, row_group_rows, sample_rows,
                                 max_columns, max_depth, min_frequency, bloom_filters, inexact_numbers, duplicate_keys,
                                 skip_bad_lines, max_file_rows, max_file_bytes, append)
    except BaseException as stopped:
        # A VshredError says which files it left; the iterable's own
        # exception and Ctrl-C's are told here.
        made = sorted(_parquet_files(output) - before) if dataset else []
        if made and not isinstance(stopped, VshredError) and hasattr(stopped, "add_note"):
            stopped.add_note("%d complete file%s written to %s before it stopped: %s "
                             "(append=True adds to them)" % (
                                 len(made), "" if len(made) == 1 else "s", output,
                                 ", ".join(made)))
        raise
    for file in written.get("files", [written]):
        file["layout"] = _json.loads(file["layout"])
        if "path" in file:
            # A str, as every other value of the result, so that it
            # serialises as JSON.
            file["path"] = _os.fsdecode(file["path"])
        for path in file.get("bloom_filters_left_out", []):
            _warnings.warn("%s: no bloom filter for %s: its layout does not shred it"
                           % (_os.path.basename(file["path"]), path), stacklevel=2)
    if written["bad_lines"]:
        _warnings.warn("skipped %d bad line%s; the first: %s" % (
            written["bad_lines"], "" if written["bad_lines"] == 1 else "s",
            written["first_bad_line"]), stacklevel=2)
    _warn_of_sample(written)
    if (not dataset and not variant_fields and written["rows"] == 1
            and isinstance(input, (str, _os.PathLike))
            and _vshred.file_starts_with_an_array(input)):
        _warnings.warn("the input is one line holding a JSON array, written as one row (give "
                       "its elements as an iterable, [json.dumps(e) for e in json.load(f)], "
                       "or as JSON Lines, `jq -c '.[]' %s`, for a row each)" % _os.fsdecode(input),
                       stacklevel=2)
    return written


def _warn_of_unused_limits(shred, max_columns, max_depth, min_frequency):
    """Warns of limits of inference given where nothing is inferred: with
    ``shred`` ``"none"`` or a layout, which is written as it is."""
    limits = [name for name, given in (("max_columns", max_columns), ("max_depth", max_depth),
                                       ("min_frequency", min_frequency)) if given is not None]
    if limits and shred not in ("auto", "spark"):
        given = ("shred='none' infers nothing" if shred == "none"
                 else "a layout given as shred is written as it is")
        _warnings.warn("%s limit%s what is inferred, and %s" % (
            ", ".join(limits), "s" if len(limits) == 1 else "", given), stacklevel=3)


def _warn_of_sample(said):
    """Warns, as the command line does, of what :func:`encode` or
    :func:`infer` found in the sample: numbers stored as doubles, and
    fields named that no line has."""
    if said["inexact_numbers"]:
        _warnings.warn("%d number%s that no decimal holds (more than 38 digits) stored as the "
                       "nearest double (the first on line %d)" % (
                           said["inexact_numbers"],
                           "" if said["inexact_numbers"] == 1 else "s",
                           said["first_inexact_line"]), stacklevel=3)
    for name in said["unsampled_variant_fields"]:
        _warnings.warn('variant_fields: no sampled line has "%s"; its column is null '
                       "(misspelt?)" % name, stacklevel=3)
    for path in said["unsampled_layout_fields"]:
        _warnings.warn("shred: no sampled line has the layout's field %s; its typed column is "
                       "null (misspelt?)" % path, stacklevel=3)


def infer(input: Input, *, variant_fields: Names = None, shred: Union[Layout, Path] = "auto",
          sample_rows: Optional[int] = None, max_columns: Optional[int] = None,
          max_depth: Optional[int] = None, min_frequency: Optional[float] = None,
          inexact_numbers: Literal["error", "double"] = "error",
          duplicate_keys: Literal["error", "last"] = "error") -> Layout:
    """The layout :func:`encode` would choose for ``input``, as a dict (or
    ``"variant"`` for a column left unshredded).

    The layout is the JSON a schema file holds (``vshred infer`` prints the
    same): of the one Variant column, or an object of them by name. The
    arguments are :func:`encode`'s.

    >>> infer(['{"id": 1, "tags": ["a"]}'] * 5000, shred="spark")
    {'id': 'int64', 'tags': ['string']}
    >>> infer(['{"id": 1}', '{"id": 2}'])  # too few rows to pay for a typed column
    'variant'

    """
    variant_fields = _names(variant_fields)
    _warn_of_unused_limits(_shred(shred), max_columns, max_depth, min_frequency)
    said = _vshred.infer(_input(input), variant_fields, _shred(shred), sample_rows, max_columns,
                         max_depth, min_frequency, inexact_numbers, duplicate_keys)
    _warn_of_sample(said)
    return _json.loads(said["layout"])


def get(source: Path, path: str, as_type: str = "variant", where: Optional[str] = None, *,
        column: Optional[str] = None,
        strict: bool = False) -> Union[_pa.Array, _pa.ChunkedArray]:
    """The value at ``path`` of every row of ``source``, as a ``pyarrow.Array``.

    ``source`` is a Parquet file, a directory of them or a glob, whatever
    their layouts, by path or by a ``file://`` or ``s3://`` URL (a bucket's
    store made from the ``AWS_*`` environment, as ``vshred sql`` makes it);
    ``path`` a JSON path (``"$.user.id"``, ``"$.tags[0]"``);
    ``as_type`` a type name (``"int64"``, ``"string"``, ``"decimal(10,2)"``,
    ``"struct<id:bigint,name:string>"``, ``"array<string>"``) or
    ``"variant"`` for the values themselves (a ``pyarrow.ChunkedArray``
    where one array cannot hold them: texts past 2 GiB). Only the leaves the path needs
    are read. ``where`` keeps the rows a filter holds for (``'$.kind ==
    "click"'``), pruning row groups by their statistics. Values convert as
    Spark's ``variant_get`` converts them (``"12"`` to 12, 1.5 to
    ``"1.5"``); one that does not is null, or an error when ``strict``.
    ``column`` chooses the
    Variant column when the files have several. A filter that no row can
    pass (``'$.delay == "5"'`` where every delay is stored as a number) is
    warned about, as the command line warns.
    """
    if where is not None and not isinstance(where, str):
        # The native function would name its own parameter.
        raise TypeError("where must be a filter string, not %s" % type(where).__name__)
    parts, said = _vshred.get(_path(source), path, as_type, where, column, strict)
    for warning in said:
        _warnings.warn(warning, stacklevel=2)
    return parts[0] if len(parts) == 1 else _pa.chunked_array(parts)


def read(source: Path, columns: Names = None) -> _pa.Table:
    """The rows of ``source`` (a file, a directory or a glob, by path or URL, as
    :func:`get` takes it) as a ``pyarrow.Table``.

    ``columns`` are read in the order given (all when ``None``, in the
    order the files have them), null where a file lacks one; the
    ``key=value`` directories of a
    partitioned dataset (``day=2024-03-01/``) are columns after them, as
    ``get``'s ``where`` can name. A Variant column is read whole,
    whatever its layout in each file, as a struct of ``metadata`` and
    ``value`` whose field carries the ``arrow.parquet.variant`` extension
    name; :func:`to_json` gives its JSON text, :func:`get` a typed column.
    """
    names = _names(columns)
    # A column named twice is read once, as `vshred cat --columns` reads it.
    names = None if names is None else list(dict.fromkeys(names))
    return _vshred.read(_path(source), names)


def parse_json(array: Any, *, strict: bool = True,
               inexact_numbers: Literal["error", "double"] = "error",
               duplicate_keys: Literal["error", "last"] = "error",
               ) -> Union[_pa.Array, _pa.ChunkedArray]:
    """The Variant of each JSON text of a string array, as a Variant array
    (a chunked array of a chunked array, chunk by chunk).

    A text that is not JSON is an error naming its row, or null when not
    ``strict``; so is a number written without an exponent that no decimal
    holds (more than 38 digits), unless ``inexact_numbers="double"`` stores
    the nearest double, and an object that gives a key twice, unless
    ``duplicate_keys="last"`` keeps the value given last.

    >>> to_json(parse_json(["{\\"a\\": [1, 2.50]}", None])).to_pylist()
    ['{"a":[1,2.50]}', None]
    """
    if isinstance(array, (str, bytes)):
        # pyarrow would make one row per character.
        raise TypeError("parse_json takes an array or a list of JSON texts; "
                        "for one text, pass [text]")
    array = _array(array)
    if not isinstance(array, (_pa.Array, _pa.ChunkedArray)):
        array = _pa.array(array, type=_pa.string())
    return _chunk_by_chunk(_vshred.parse_json, array, strict, inexact_numbers, duplicate_keys)


def to_json(array: Any) -> Union[_pa.Array, _pa.ChunkedArray]:
    """The JSON text of each value of a Variant array (shredded or not), as
    a string array (a chunked array of a chunked array, chunk by chunk).

    A Variant array is a struct of binary ``metadata`` and ``value``, and
    optionally ``typed_value`` (as :func:`read` and :func:`parse_json`
    give it); any other array is an error.
    """
    array = _array(array)
    if not isinstance(array, (_pa.Array, _pa.ChunkedArray)):
        raise TypeError("to_json takes a Variant array (as read() and parse_json() give "
                        "it), not %s" % type(array).__name__)
    return _chunk_by_chunk(_vshred.to_json, array)


class Session(_vshred.Session):
    """A SQL session (DataFusion, as ``vshred sql`` runs it): Spark's Variant
    functions (``variant_get``, ``parse_json``, ``to_json``, ...), Parquet
    files read by their shredded leaves (``FROM 'events/'``), and tables
    registered by name.

    ``settings`` are DataFusion's (``{"datafusion.execution.batch_size":
    8192}``). ``register(name, source)`` makes ``source`` the table
    ``name``: a Parquet file, directory, glob or ``file://`` or ``s3://``
    URL (as :func:`get` takes it; its files are those there when it is
    registered: register it again to read files added since), or any
    Arrow table or stream of record batches (an object with
    ``__arrow_c_stream__``: a pyarrow Table, a polars DataFrame, a DuckDB
    relation), read once into memory; one column (a polars Series) is not
    a table. A name is read with its ASCII letters in lower case, as SQL
    reads one (``Events``
    is ``events``, as ``FROM Events`` looks it up), but for one with a
    dot, which is itself (``FROM "a.b"``). ``sql(query)`` runs the
    statements of ``query`` in turn and returns the rows of the last as a
    ``pyarrow.Table``; a Variant column's field carries the
    ``arrow.parquet.variant`` extension name. Ctrl-C stops a statement.

    >>> import pyarrow as pa
    >>> session = Session()
    >>> session.register("t", pa.table({"j": ['{"a": 1}', '{"a": 2.5}']}))
    >>> session.sql("CREATE VIEW v AS SELECT parse_json(j) AS v FROM t")
    pyarrow.Table
    <BLANKLINE>
    ----
    >>> session.sql("SELECT sum(variant_get(v, '$.a', 'double')) AS a FROM v").to_pylist()
    [{'a': 3.5}]
    """

    def register(self, name: str, source: Any) -> None:
        """Makes ``source`` the table ``name``: a Parquet file, directory,
        glob or URL, or an Arrow table or stream of record batches, read
        once into memory (the class's text says more)."""
        super().register(name, _unsliced_source(_path(source)))


def sql(query: str, *, tables: Optional[Mapping[str, Any]] = None,
        settings: Optional[Mapping[str, Any]] = None) -> _pa.Table:
    """The rows of ``query`` as a ``pyarrow.Table``, in a new :class:`Session`.

    ``tables`` maps names to sources, as :meth:`Session.register` takes
    them; files are also read by path in the query (``FROM 'events/'``).

    >>> sql("SELECT to_json(parse_json('{\\"a\\": [1, 2.50]}')) AS j").to_pylist()
    [{'j': '{"a":[1,2.50]}'}]
    """
    if tables is not None and not hasattr(tables, "items"):
        raise TypeError("tables maps names to sources: a dict, not a %s"
                        % type(tables).__name__)
    session = Session(settings)
    named = {}
    for name, source in (tables or {}).items():
        # Registered again, a name replaces its table: two that SQL reads
        # as one would keep the last alone.
        same = named.setdefault(_table_name(name), name)
        if same != name:
            raise VshredError("invalid arguments: tables %r and %r are one name: a name "
                              "without a dot is read with its ASCII letters in lower case, "
                              "as SQL reads it" % (same, name))
        session.register(name, source)
    return session.sql(query)


def _table_name(name):
    """``name`` as SQL looks a table up: its ASCII letters in lower case
    (DataFusion's), unless it has a dot."""
    if isinstance(name, str) and "." in name:
        return name
    return "".join(c.lower() if c.isascii() else c for c in str(name))
