#!/usr/bin/env python3
"""Writes Spark 4.3's and DuckDB 2.0's files of every real data set, each with its own inference.

usage: peers.py WORK

For every WORK/input/<name>.jsonl (one JSON value per line), one Parquet file
per writer with a single Variant column v, zstd, in WORK/files:
  <name>.spark.parquet          Spark: parse_json(line), default settings (4.3
                                infers a shredding schema from the first rows of
                                each file), one file (coalesce(1))
  <name>.duckdb.parquet         DuckDB: line::JSON::VARIANT, default settings
                                (its inference on; variant_minimum_shredding_size
                                = 0 made the same files, measured)
Each writer's time goes to WORK/peers.tsv (dataset, writer, seconds).
"""

import glob
import os
import shutil
import sys
import time

WORK = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)
FILES = os.path.join(WORK, "files")


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def inputs():
    return sorted(glob.glob(os.path.join(WORK, "input", "*.jsonl")))


def name_of(path):
    return os.path.basename(path)[: -len(".jsonl")]


def duckdb_files(timings):
    import duckdb

    print(f"peers: DuckDB {duckdb.__version__}", file=sys.stderr)
    con = duckdb.connect()
    for path in inputs():
        out = os.path.join(FILES, f"{name_of(path)}.duckdb.parquet")
        t0 = time.time()
        con.execute(f"""
            COPY (
              SELECT line::JSON::VARIANT AS v
              FROM (SELECT unnest(string_split(rtrim(content, chr(10)), chr(10))) AS line
                    FROM read_text({sql_str(path)}))
            ) TO {sql_str(out + '.part')} (FORMAT parquet, COMPRESSION zstd)""")
        os.replace(out + ".part", out)
        timings.append((name_of(path), "duckdb", time.time() - t0))
    con.close()


def spark_files(timings):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]")
             .appName("vshred-realdata")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "6g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(f"peers: Spark {spark.version}", file=sys.stderr)
    for path in inputs():
        out = os.path.join(FILES, f"{name_of(path)}.spark.parquet")
        tmpdir = out + ".dir"
        shutil.rmtree(tmpdir, ignore_errors=True)
        t0 = time.time()
        (spark.read.text(path).selectExpr("parse_json(value) AS v")
         .coalesce(1).write.option("compression", "zstd").parquet(tmpdir))
        parts = glob.glob(os.path.join(tmpdir, "part-*.parquet"))
        if len(parts) != 1:
            raise RuntimeError(f"{path}: expected one part file, got {parts}")
        os.replace(parts[0], out)
        shutil.rmtree(tmpdir)
        timings.append((name_of(path), "spark", time.time() - t0))
    spark.stop()


def main():
    os.makedirs(FILES, exist_ok=True)
    timings = []
    duckdb_files(timings)
    spark_files(timings)
    with open(os.path.join(WORK, "peers.tsv"), "w", encoding="utf-8") as f:
        f.write("dataset\twriter\tseconds\n")
        for row in timings:
            f.write("%s\t%s\t%.3f\n" % row)


if __name__ == "__main__":
    main()
