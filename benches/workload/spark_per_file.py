#!/usr/bin/env python3
"""Writes each IN_DIR/*.jsonl as one Parquet file OUT_DIR/<stem>.parquet with
Spark 4.3 (v VARIANT = parse_json(line), default settings: Spark infers the
shredding of each file from its own first rows), to compare with the layouts
of `vshred encode --max-file-rows` (benches/README.md, "Writing datasets:
drift").

usage: spark_per_file.py IN_DIR OUT_DIR   (with tests/interop/.venv's python)
"""
import glob
import os
import shutil
import sys

from pyspark.sql import SparkSession


def main():
    in_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    spark = (SparkSession.builder.master("local[2]")
             .appName("vshred-drift")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "2g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for path in sorted(glob.glob(os.path.join(in_dir, "*.jsonl"))):
        stem = os.path.basename(path)[:-len(".jsonl")]
        with open(path, encoding="utf-8") as f:
            lines = [(line.rstrip("\n"),) for line in f]
        df = spark.createDataFrame(lines, "line STRING").selectExpr("parse_json(line) AS v")
        tmp = os.path.join(out_dir, stem + ".dir")
        shutil.rmtree(tmp, ignore_errors=True)
        df.coalesce(1).write.option("compression", "zstd").parquet(tmp)
        parts = glob.glob(os.path.join(tmp, "part-*.parquet"))
        if len(parts) != 1:
            raise RuntimeError(f"{path}: expected one part file, got {parts}")
        shutil.move(parts[0], os.path.join(out_dir, stem + ".parquet"))
        shutil.rmtree(tmp)
        print(f"spark_per_file: {path}: {len(lines)} rows", file=sys.stderr)
    spark.stop()


if __name__ == "__main__":
    main()
