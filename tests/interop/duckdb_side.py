#!/usr/bin/env python3
"""DuckDB 2.0 side of the interop check.

usage: duckdb_side.py WORK

1. Reads every WORK/vshred/*.parquet with read_parquet(..., file_row_number=true)
   and writes WORK/read/<stem>.duckdb.tsv: "<row_index>\t<CAST(v AS JSON)>"
   (SQL NULL -> SQLNULL).
2. Writes shredded files (SET variant_minimum_shredding_size = 0, else DuckDB
   only shreds row groups of 30000+ rows):
   - duckdb_<ds>.parquet for ds = data, events, mixed: (id BIGINT,
     v = line::JSON::VARIANT), v SQL NULL when id % 97 == 13, DuckDB's own
     shredding inference. (DuckDB's JSON -> VARIANT cast turns every JSON
     fraction into a DOUBLE, so these files hold no decimals.)
   - duckdb_typed.parquet: 2000 rows of VARIANTs built from SQL-typed values
     (DECIMAL(9,1)/(18,3)/(38,10), DOUBLE, FLOAT, BIGINT, INTEGER, VARCHAR,
     BOOLEAN, DATE, TIMESTAMP, TIMESTAMPTZ, TIME, UUID, a list, a struct), with
     an explicit SHREDDING schema that types those fields, and every 10th row
     holding a different type in some fields (goes to the residual `value`).
   Then reads each back with DuckDB -> WORK/read/<stem>.duckdb.tsv ("<id>\t<json>").
3. Writes data.jsonl partitioned as spark_side.py does (PARTITION_COLUMNS),
   with PARTITION_BY -> the directory WORK/written/duckdbparts_data.parquet,
   and reads it back with hive_partitioning -> WORK/read/duckdbparts_data.duckdb.tsv.
A failure is written to the .err file beside the expected output, with DuckDB's message.
"""
import glob
import os
import sys
import time

import duckdb

from partitioned import PARTITION_COLUMNS, row_with_partitions

WORK = sys.argv[1]
READ = os.path.join(WORK, "read")
WRITTEN = os.path.join(WORK, "written")


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def guarded(out, fn):
    for p in (out, out + ".err"):
        if os.path.exists(p):
            os.remove(p)
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any engine failure is a reported result
        msg = (type(e).__name__ + ": " + " | ".join(str(e).strip().splitlines()[:6]))[:2000]
        with open(out + ".err", "w", encoding="utf-8") as f:
            f.write(msg + "\n")
        sys.stderr.write(f"duckdb_side: {out}: {msg}\n")


def read_file(con, path, out, id_col=None):
    def go():
        key = id_col if id_col else "file_row_number"
        rows = con.execute(
            f"SELECT {key} AS rid, CAST(v AS JSON)::VARCHAR AS j "
            f"FROM read_parquet({sql_str(path)}, file_row_number = true) ORDER BY rid").fetchall()
        typ = con.execute(f"SELECT typeof(v) FROM read_parquet({sql_str(path)}) LIMIT 1").fetchall()
        if typ and typ[0][0] != "VARIANT":
            raise RuntimeError(f"column v read as {typ[0][0]}, not VARIANT")
        with open(out, "w", encoding="utf-8") as f:
            for rid, j in rows:
                f.write(f"{rid}\t{'SQLNULL' if j is None else j}\n")
    guarded(out, go)


def read_nested(con, path, stem):
    """A `vshred sql` COPY file: id, t (a struct of the Variant v) and l (a list of it)."""
    for kind, value in (("struct", "t.v"), ("list", "l[1]")):
        out = os.path.join(READ, f"{stem}_{kind}.duckdb.tsv")

        def go(value=value, out=out):
            source = f"read_parquet({sql_str(path)})"
            typ = con.execute(f"SELECT typeof({value}) FROM {source} LIMIT 1").fetchall()
            if typ and typ[0][0] != "VARIANT":
                raise RuntimeError(f"{value} read as {typ[0][0]}, not VARIANT")
            rows = con.execute(
                f"SELECT id, CAST({value} AS JSON)::VARCHAR FROM {source} ORDER BY id").fetchall()
            with open(out, "w", encoding="utf-8") as f:
                for rid, j in rows:
                    f.write(f"{rid}\t{'SQLNULL' if j is None else j}\n")
        guarded(out, go)


TYPED_SELECT = """
SELECT i AS id,
  CASE
    WHEN i % 97 = 13 THEN NULL
    WHEN i % 10 = 0 THEN {
        'id': i, 'p': 'not a decimal', 'q': i * 2, 'r': 1.5e3::DOUBLE, 'f': 'x',
        'n': 3000000000 + i, 's': 42, 'b': 'yes', 'd': TIMESTAMP '2024-05-06 07:08:09',
        'arr': 'scalar', 'obj': [1, 2, 3], 'extra': {'k': i}
      }::VARIANT
    ELSE {
        'id': i,
        'p': (i / 10 + 0.05)::DECIMAL(9,1),
        'q': (i * 1234.567)::DECIMAL(18,3),
        'r': ('12345678901234567890.' || lpad((i * 7919)::VARCHAR, 10, '0'))::DECIMAL(38,10),
        'f': (i * 0.1)::DOUBLE,
        'g': (i * 0.25)::FLOAT,
        'n': (i * 1000003)::BIGINT,
        'm': (i % 100)::INTEGER,
        's': 'str-' || i || CASE WHEN i % 3 = 0 THEN ' ünïcödé "q"' ELSE '' END,
        'b': i % 2 = 0,
        'd': DATE '2024-01-01' + (i % 365)::INTEGER,
        'ts': TIMESTAMP '2024-01-02 03:04:05.123456' + to_seconds(i),
        'tz': TIMESTAMPTZ '2024-01-02 03:04:05.5+00' + to_seconds(i),
        'tm': TIME '01:02:03' + to_seconds(i % 3600),
        'u': ('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID,
        'arr': [i, i + 1, i + 2],
        'obj': {'x': i % 7, 'y': 'y' || i}
      }::VARIANT
  END AS v
FROM range(2000) t(i)
"""

TYPED_SHREDDING = ("STRUCT(id BIGINT, p DECIMAL(9,1), q DECIMAL(18,3), r DECIMAL(38,10), f DOUBLE, "
                   "g FLOAT, n BIGINT, m INTEGER, s VARCHAR, b BOOLEAN, d DATE, ts TIMESTAMP, "
                   "tz TIMESTAMPTZ, tm TIME, u UUID, arr BIGINT[], obj STRUCT(x INTEGER, y VARCHAR))")


def main():
    t0 = time.time()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    print(f"duckdb_side: DuckDB {duckdb.__version__}", file=sys.stderr)
    for path in sorted(glob.glob(os.path.join(WORK, "vshred", "*.parquet"))):
        stem = os.path.basename(path)[:-len(".parquet")]
        read_file(con, path, os.path.join(READ, f"{stem}.duckdb.tsv"))

    for path in sorted(glob.glob(os.path.join(WORK, "nested", "*.parquet"))):
        read_nested(con, path, "nested_" + os.path.basename(path)[:-len(".parquet")])

    con.execute("SET variant_minimum_shredding_size = 0")
    for ds in ("data", "events", "mixed"):
        src = os.path.join(WORK, "input", f"{ds}.jsonl")
        out = os.path.join(WRITTEN, f"duckdb_{ds}.parquet")

        def write(src=src, out=out):
            # one line -> one row; generate_subscripts gives the 0-based line number as id
            con.execute(f"""
                COPY (
                  SELECT id, CASE WHEN id % 97 = 13 THEN NULL ELSE line::JSON::VARIANT END AS v
                  FROM (SELECT generate_subscripts(s, 1) - 1 AS id, unnest(s) AS line
                        FROM (SELECT string_split(rtrim(content, chr(10)), chr(10)) AS s
                              FROM read_text({sql_str(src)})))
                  ORDER BY id
                ) TO {sql_str(out)} (FORMAT parquet, COMPRESSION zstd)""")
        guarded(out, write)
        if os.path.exists(out):
            read_file(con, out, os.path.join(READ, f"duckdb_{ds}.duckdb.tsv"), id_col="id")

    out = os.path.join(WRITTEN, "duckdb_typed.parquet")
    guarded(out, lambda: con.execute(
        f"COPY ({TYPED_SELECT}) TO {sql_str(out)} "
        f"(FORMAT parquet, COMPRESSION zstd, SHREDDING {{v: {sql_str(TYPED_SHREDDING)}}})"))
    if os.path.exists(out):
        read_file(con, out, os.path.join(READ, "duckdb_typed.duckdb.tsv"), id_col="id")
    write_partitioned(con)
    print(f"duckdb_side: done in {time.time() - t0:.1f}s", file=sys.stderr)


def write_partitioned(con):
    src = os.path.join(WORK, "input", "data.jsonl")
    out_dir = os.path.join(WRITTEN, "duckdbparts_data.parquet")
    out_tsv = os.path.join(READ, "duckdbparts_data.duckdb.tsv")

    def write():
        con.execute(f"""
            COPY (
              SELECT id, line::JSON::VARIANT AS v, {", ".join(PARTITION_COLUMNS)}
              FROM (SELECT generate_subscripts(s, 1) - 1 AS id, unnest(s) AS line
                    FROM (SELECT string_split(rtrim(content, chr(10)), chr(10)) AS s
                          FROM read_text({sql_str(src)})))
            ) TO {sql_str(out_dir)} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (p_int, p_str))""")
    guarded(out_dir, write)
    if not os.path.exists(out_dir):
        return

    def read():
        rows = con.execute(
            "SELECT id, CAST(v AS JSON)::VARCHAR, p_int, p_str FROM read_parquet("
            f"{sql_str(out_dir + '/**/*.parquet')}, hive_partitioning = true) ORDER BY id").fetchall()
        with open(out_tsv, "w", encoding="utf-8") as f:
            for rid, j, p_int, p_str in rows:
                f.write(f"{rid}\t{row_with_partitions(j, p_int, p_str)}\n")
    guarded(out_tsv, read)


if __name__ == "__main__":
    main()
