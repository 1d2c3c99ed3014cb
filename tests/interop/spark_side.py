#!/usr/bin/env python3
"""Spark 4.3 side of the interop check (one local Spark session for everything).

usage: spark_side.py WORK

1. Reads every WORK/vshred/*.parquet (written by `vshred encode`) and writes
   WORK/read/<stem>.spark.tsv: one line per row, "<row_index>\t<to_json(v)>"
   (row_index from Spark's hidden _metadata.row_index; SQL NULL -> SQLNULL).
2. Writes shredded files from WORK/input/<ds>.jsonl (ds = data, events, mixed):
   (id BIGINT, v VARIANT = parse_json(line)), with v SQL NULL when id % 97 == 13,
   one file each, default 4.3 settings (shredding inference on) ->
   WORK/written/spark_<ds>.parquet; and the same with
   spark.sql.parquet.writeLegacyFormat=true -> WORK/written/sparklegacy_<ds>.parquet.
   Then reads each back with Spark -> WORK/read/<stem>.spark.tsv ("<id>\t<json>").
3. Writes data.jsonl partitioned by an integer and a string (PARTITION_COLUMNS:
   nulls, and characters that directory names escape) with partitionBy ->
   the directory WORK/written/sparkparts_data.parquet, and reads it back ->
   WORK/read/sparkparts_data.spark.tsv, each row's json an object of v and
   the two columns.
A failure is written to the .err file beside the expected output, with Spark's message.
"""
import glob
import os
import shutil
import sys
import time
import traceback

from pyspark.sql import SparkSession

from partitioned import PARTITION_COLUMNS, row_with_partitions

WORK = sys.argv[1]
READ = os.path.join(WORK, "read")
WRITTEN = os.path.join(WORK, "written")


def err_text(e):
    msg = str(e).strip().splitlines()
    return (type(e).__name__ + ": " + " | ".join(msg[:6]))[:2000]


def dump(rows, out):
    with open(out, "w", encoding="utf-8") as f:
        for rid, j in rows:
            f.write(f"{rid}\t{'SQLNULL' if j is None else j}\n")


def guarded(out, fn):
    for p in (out, out + ".err"):
        if os.path.exists(p):
            os.remove(p)
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any engine failure is a reported result
        with open(out + ".err", "w", encoding="utf-8") as f:
            f.write(err_text(e) + "\n")
        sys.stderr.write(f"spark_side: {out}: {err_text(e)}\n")
        traceback.print_exc(file=sys.stderr)


def read_file(spark, path, out, id_col=None):
    def go():
        df = spark.read.parquet(path)
        vtype = dict(df.dtypes).get("v")
        if vtype != "variant":
            raise RuntimeError(f"column v read as {vtype!r}, not variant (schema {df.dtypes})")
        key = id_col if id_col else "_metadata.row_index"
        rows = df.selectExpr(f"{key} AS rid", "to_json(v) AS j").orderBy("rid").collect()
        dump([(r.rid, r.j) for r in rows], out)
    guarded(out, go)


def read_nested(spark, path, stem):
    """A `vshred sql` COPY file: id, t (a struct of the Variant v) and l (a list of it)."""
    for kind, column, expected, value in (("struct", "t", "struct<v:variant>", "t.v"),
                                          ("list", "l", "array<variant>", "l[0]")):
        out = os.path.join(READ, f"{stem}_{kind}.spark.tsv")

        def go(column=column, expected=expected, value=value, out=out):
            df = spark.read.parquet(path)
            read_as = dict(df.dtypes).get(column)
            if read_as != expected:
                raise RuntimeError(f"column {column} read as {read_as!r}, not {expected!r}")
            rows = df.selectExpr("id AS rid", f"to_json({value}) AS j").orderBy("rid").collect()
            dump([(r.rid, r.j) for r in rows], out)
        guarded(out, go)


def write_file(spark, ds, prefix, legacy):
    out_file = os.path.join(WRITTEN, f"{prefix}_{ds}.parquet")
    out_tsv = os.path.join(READ, f"{prefix}_{ds}.spark.tsv")

    def go():
        with open(os.path.join(WORK, "input", f"{ds}.jsonl"), encoding="utf-8") as f:
            lines = [(i, line.rstrip("\n")) for i, line in enumerate(f)]
        spark.conf.set("spark.sql.parquet.writeLegacyFormat", "true" if legacy else "false")
        df = spark.createDataFrame(lines, "id BIGINT, line STRING")
        df = df.selectExpr("id", "CASE WHEN id % 97 = 13 THEN NULL ELSE parse_json(line) END AS v")
        tmpdir = out_file + ".dir"
        shutil.rmtree(tmpdir, ignore_errors=True)
        df.coalesce(1).write.mode("overwrite").option("compression", "zstd").parquet(tmpdir)
        parts = glob.glob(os.path.join(tmpdir, "part-*.parquet"))
        if len(parts) != 1:
            raise RuntimeError(f"expected one part file, got {parts}")
        shutil.move(parts[0], out_file)
        shutil.rmtree(tmpdir, ignore_errors=True)
        spark.conf.set("spark.sql.parquet.writeLegacyFormat", "false")
    guarded(out_file, go)
    if os.path.exists(out_file):
        read_file(spark, out_file, out_tsv, id_col="id")


def write_partitioned(spark):
    out_dir = os.path.join(WRITTEN, "sparkparts_data.parquet")
    out_tsv = os.path.join(READ, "sparkparts_data.spark.tsv")

    def go():
        with open(os.path.join(WORK, "input", "data.jsonl"), encoding="utf-8") as f:
            lines = [(i, line.rstrip("\n")) for i, line in enumerate(f)]
        df = spark.createDataFrame(lines, "id BIGINT, line STRING")
        df = df.selectExpr("id", "parse_json(line) AS v", *PARTITION_COLUMNS)
        shutil.rmtree(out_dir, ignore_errors=True)
        df.write.mode("overwrite").partitionBy("p_int", "p_str").parquet(out_dir)
    guarded(out_dir, go)
    if not os.path.exists(out_dir):
        return

    def read():
        rows = (spark.read.parquet(out_dir)
                .selectExpr("id", "to_json(v) AS j", "p_int", "p_str").collect())
        dump(sorted((r.id, row_with_partitions(r.j, r.p_int, r.p_str)) for r in rows), out_tsv)
    guarded(out_tsv, read)


def main():
    t0 = time.time()
    spark = (SparkSession.builder.master("local[2]")
             .appName("vshred-interop")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(f"spark_side: Spark {spark.version} up in {time.time() - t0:.1f}s", file=sys.stderr)
    for path in sorted(glob.glob(os.path.join(WORK, "vshred", "*.parquet"))):
        stem = os.path.basename(path)[:-len(".parquet")]
        read_file(spark, path, os.path.join(READ, f"{stem}.spark.tsv"))
    for path in sorted(glob.glob(os.path.join(WORK, "nested", "*.parquet"))):
        read_nested(spark, path, "nested_" + os.path.basename(path)[:-len(".parquet")])
    for ds in ("data", "events", "mixed"):
        write_file(spark, ds, "spark", legacy=False)
        write_file(spark, ds, "sparklegacy", legacy=True)
    write_partitioned(spark)
    spark.stop()
    print(f"spark_side: done in {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
