#!/usr/bin/env python3
"""What Spark 4.3's try_variant_get gives for each JSON value and type.

usage: spark_casts.py OUT.jsonl

Writes one JSON object per line: {"json": TEXT, "type": TYPE, "result": R},
R being Spark's `try_variant_get(parse_json(TEXT), '$', TYPE)`, or, for a
value JSON cannot write (a date, a timestamp, binary, a float, a byte),
{"sql": EXPR, "variant": V, "type": TYPE, "result": R} with V that value
tagged as R is, as
{"null": true}, {"bool": b}, {"int": "digits"}, {"decimal": "digits"},
{"double": x} (a float type's value as a double; "NaN", "Infinity",
"-Infinity" by name), {"string": s},
{"date": days since 1970-01-01}, {"timestamp": microseconds since
the epoch} (UTC) or {"binary": "hex"}. (A time of day alone, which Spark
reads as a timestamp on the current date, is left out.) testdata/spark-casts.jsonl is its output, and
`variant_get`'s conversions are tested against it (tests/spark_casts.rs);
rerun it with the interop venv's Python (tests/interop/setup.sh) after
changing the lists below.
"""
import datetime
import decimal
import json
import math
import os
import sys

from pyspark.sql import SparkSession

VALUES = [
    "null", "true", "false",
    "0", "1", "-7", "127", "128", "300", "-129", "32768", "2147483647", "2147483648",
    "9223372036854775807", "-9223372036854775808", "123456789012345678901234567890",
    "1.5", "1.55", "-1.5", "-2.5", "2.0", "0.1", "0.125", "99.995", "1.23456789012345678901",
    "1e2", "1.5e300", "1e-5", "-0.0", "2.5e0", "1e10",
    "-1e-300", "1.2345678901234567e-25",
    '"-0.00000000000000000000000000000000000000005"', '"1.23456789012345678901234567890123456789012"',
    '"12"', '" 12 "', '"+12"', '"-12"', '"1.5"', '"1.0"', '"1e3"', '"abc"', '""',
    '"true"', '"TRUE"', '"yes"', '"t"', '"0"', '"1"', '"no"', '"off"',
    '"NaN"', '"Infinity"', '"-Infinity"', '"9223372036854775808"',
    '"2024-03-01"', '"2024-03-01 12:30:00"', '"2024-03-01T12:30:00.5Z"', '"2024-03-01T12:30:00+01:00"',
    '"é"',
    '{"a": 1, "b": [true, null]}', '[1, "x", 2.50]', "[]", "{}",
]

# Values JSON cannot write, as Spark SQL makes them, each with the Variant
# value it is (tests/spark_casts.rs builds that one itself).
SQL_VALUES = [
    ("CAST(DATE'2024-03-01' AS VARIANT)", {"date": 19783}),
    ("CAST(DATE'1969-12-31' AS VARIANT)", {"date": -1}),
    ("CAST(TIMESTAMP'2024-03-01 12:30:00.5' AS VARIANT)", {"timestamp": 1709296200500000}),
    ("CAST(TIMESTAMP'1969-12-31 23:59:59' AS VARIANT)", {"timestamp": -1000000}),
    ("CAST(TIMESTAMP_NTZ'2024-03-01 12:30:00.000123' AS VARIANT)", {"timestamp_ntz": 1709296200000123}),
    ("CAST(X'4142' AS VARIANT)", {"binary": "4142"}),
    ("CAST(CAST(1.1 AS FLOAT) AS VARIANT)", {"float": 1.1}),
    ("CAST(CAST(-7 AS TINYINT) AS VARIANT)", {"int8": -7}),
    ("CAST(CAST(1e10 AS DOUBLE) AS VARIANT)", {"double": 1e10}),
    ("CAST(CAST(0.000123 AS DOUBLE) AS VARIANT)", {"double": 0.000123}),
    ("CAST(CAST(1234567.5 AS DOUBLE) AS VARIANT)", {"double": 1234567.5}),
]

TYPES = [
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
    "decimal(5,2)", "decimal(3,1)", "decimal(38,0)", "decimal(38,10)",
    "string", "date", "timestamp", "timestamp_ntz", "binary",
]


def tagged(v):
    if v is None:
        return {"null": True}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, decimal.Decimal):
        return {"decimal": format(v, "f")}
    if isinstance(v, float):
        # NaN and the infinities by name: JSON has no numbers for them.
        return {"double": v if math.isfinite(v) else repr(v).replace("inf", "Infinity").replace("nan", "NaN")}
    if isinstance(v, str):
        return {"string": v}
    if isinstance(v, datetime.datetime):
        return {"timestamp": (v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)}
    if isinstance(v, datetime.date):
        return {"date": (v - datetime.date(1970, 1, 1)).days}
    if isinstance(v, (bytes, bytearray)):
        return {"binary": bytes(v).hex()}
    raise TypeError(f"{type(v)}: {v!r}")


def main():
    os.environ["TZ"] = "UTC"
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    rows = spark.createDataFrame([(i, v) for i, v in enumerate(VALUES)], "i INT, j STRING")
    rows.createOrReplaceTempView("src")
    columns = ", ".join(
        f"try_variant_get(parse_json(j), '$', '{t}') AS c{k}" for k, t in enumerate(TYPES)
    )
    out = spark.sql(f"SELECT i, {columns} FROM src ORDER BY i").collect()
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        for row in out:
            for k, t in enumerate(TYPES):
                record = {"json": VALUES[row["i"]], "type": t, "result": tagged(row[f"c{k}"])}
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        for sql, variant in SQL_VALUES:
            columns = ", ".join(
                f"try_variant_get({sql}, '$', '{t}') AS c{k}" for k, t in enumerate(TYPES)
            )
            row = spark.sql(f"SELECT {columns}").collect()[0]
            for k, t in enumerate(TYPES):
                record = {"sql": sql, "variant": variant, "type": t, "result": tagged(row[f"c{k}"])}
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
