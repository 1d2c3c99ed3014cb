#!/usr/bin/env python3
"""Regenerates the engine-written files of testdata/datasets/engines/.

usage: tests/interop/.venv/bin/python tests/interop/make_fixtures.py
       (the venv run.sh makes: pyspark 4.3, duckdb 2.0; Java 17+ on PATH)

From testdata/datasets/engines/rows.jsonl (40 lines {"id":N,"v":{...}}) it
writes, beside it, small shredded files of (id BIGINT, v VARIANT), each a
slice of the rows so that the slices overlap:

  spark.parquet         rows 0..29, Spark 4.3 defaults (shredding inference on)
  spark-legacy.parquet  rows 10..39, spark.sql.parquet.writeLegacyFormat=true
                        (FLBA decimals)
  duckdb.parquet        rows 10..39, DuckDB 2.0 with shredding forced on
                        (variant_minimum_shredding_size = 0: by default DuckDB
                        shreds only row groups of 30000+ rows)

Each engine parses the `v` object of a line itself (Spark's parse_json,
DuckDB's JSON -> VARIANT cast), so the files hold what that engine makes of
the JSON: DuckDB turns the fractions into doubles, Spark keeps decimals.
crates/cli/tests/engine_datasets.rs reads them beside files vshred writes from the same
rows.
"""
import glob
import os
import shutil

import duckdb
from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "testdata", "datasets", "engines")
ROWS = os.path.join(OUT, "rows.jsonl")


def lines(first, end):
    with open(ROWS, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][first:end]


def spark_file(spark, name, first, end, legacy):
    spark.conf.set("spark.sql.parquet.writeLegacyFormat", "true" if legacy else "false")
    df = spark.createDataFrame([(line,) for line in lines(first, end)], "line STRING")
    df = df.selectExpr("parse_json(line) AS row").selectExpr(
        "variant_get(row, '$.id', 'bigint') AS id", "variant_get(row, '$.v', 'variant') AS v")
    tmpdir = os.path.join(OUT, name + ".dir")
    shutil.rmtree(tmpdir, ignore_errors=True)
    df.coalesce(1).write.mode("overwrite").option("compression", "zstd").parquet(tmpdir)
    [part] = glob.glob(os.path.join(tmpdir, "part-*.parquet"))
    shutil.move(part, os.path.join(OUT, name))
    shutil.rmtree(tmpdir)


def duckdb_file(name, first, end):
    con = duckdb.connect()
    con.execute("SET variant_minimum_shredding_size = 0")
    con.execute("CREATE TABLE rows (line VARCHAR, n BIGINT)")
    con.executemany("INSERT INTO rows VALUES (?, ?)", [(l, i) for i, l in enumerate(lines(first, end))])
    out = os.path.join(OUT, name).replace("'", "''")
    con.execute(f"""
        COPY (SELECT (line::JSON->>'id')::BIGINT AS id, (line::JSON->'v')::VARIANT AS v
              FROM rows ORDER BY n)
        TO '{out}' (FORMAT parquet, COMPRESSION zstd)""")


def main():
    duckdb_file("duckdb.parquet", 10, 40)
    spark = (SparkSession.builder.master("local[1]")
             .appName("vshred-fixtures")
             .config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark_file(spark, "spark.parquet", 0, 30, legacy=False)
    spark_file(spark, "spark-legacy.parquet", 10, 40, legacy=True)
    spark.stop()


if __name__ == "__main__":
    main()
