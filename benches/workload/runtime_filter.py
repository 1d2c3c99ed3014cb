"""The runtime-filter join of issue 13, on 2M rows, side by side in one run.

A big table of Variant rows {"key", "x", "payload"} (keys in the order
written, as ids and timestamps are; a bloom filter on $.key) is joined with
a small table of its 1000 smallest and 1000 largest keys, half of them kept
by `x % 2 = 0`. Prints, for `vshred sql` with runtime filters, without
them (`datafusion.optimizer.enable_dynamic_filter_pushdown = false`) and
for DuckDB on the same files: the median query time, the answer, and the
row groups read.

    python benches/workload/runtime_filter.py DIR [ROWS] [RUNS]

needs `duckdb` (tests/interop/.venv has it) and VSHRED (default
target/release/vshred).
"""

import os
import re
import statistics
import subprocess
import sys
import time

import duckdb

DIR = sys.argv[1]
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 7
VSHRED = os.environ.get("VSHRED", "target/release/vshred")
os.makedirs(DIR, exist_ok=True)
big = os.path.join(DIR, "big.parquet")
small = os.path.join(DIR, "small.parquet")

if not os.path.exists(big):
    lines = os.path.join(DIR, "big.jsonl")
    with open(lines, "w") as out:
        for k in range(ROWS):
            out.write(f'{{"key":{k},"x":{k % 10},"payload":"event-{k:08d}-{"ab" * (k % 16)}"}}\n')
    subprocess.run([VSHRED, "encode", lines, big, "--bloom-filter", "$.key"], check=True)
    os.remove(lines)
con = duckdb.connect()
if not os.path.exists(small):
    keys = list(range(1000)) + list(range(ROWS - 1000, ROWS))
    values = ",".join(f"({k}, {k // 3})" for k in keys)
    con.sql(f"COPY (SELECT col0 AS k, col1 AS x FROM (VALUES {values})) TO '{small}' (FORMAT parquet)")

sql = (
    f"SELECT count(*) AS n, sum(length(variant_get(b.v, '$.payload', 'string'))) AS bytes "
    f"FROM '{big}' b JOIN (SELECT k FROM '{small}' WHERE x % 2 = 0) s "
    f"ON variant_get(b.v, '$.key', 'bigint') = s.k"
)
duck = (
    f"SELECT count(*) AS n, sum(length(CAST(b.v.payload AS VARCHAR))) AS bytes "
    f"FROM read_parquet('{big}') b JOIN (SELECT k FROM read_parquet('{small}') WHERE x % 2 = 0) s "
    f"ON CAST(b.v.key AS BIGINT) = s.k"
)


def vshred(dynamic):
    args = [VSHRED, "sql", "--format", "csv", "--timing",
            "--set", f"datafusion.optimizer.enable_dynamic_filter_pushdown={str(dynamic).lower()}"]
    times, answer = [], None
    for _ in range(RUNS):
        r = subprocess.run(args + [sql], capture_output=True, text=True, check=True)
        times.append(float(re.search(r"Elapsed ([0-9.]+)", r.stderr).group(1)) * 1000)
        answer = r.stdout.strip().splitlines()[-1]
    r = subprocess.run(args + ["EXPLAIN ANALYZE " + sql], capture_output=True, text=True, check=True)
    scan = next(l for l in r.stdout.splitlines() if "VariantScanExec" in l and "$.key" in l)
    metric = lambda name: re.search(name + r"=([0-9.]+(?: [KM])?)", scan).group(1)
    read = f"{metric('row_groups_read')} of {metric('row_groups')} row groups read, " \
           f"{metric('row_groups_pruned_runtime_filter')} pruned by the runtime filter, {metric('rows_read')} rows"
    return statistics.median(times), answer, read


def duckdb_time():
    times, answer = [], None
    for _ in range(RUNS):
        t = time.perf_counter()
        answer = con.sql(duck).fetchall()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), answer


on, on_answer, on_read = vshred(True)
off, off_answer, off_read = vshred(False)
d, d_answer = duckdb_time()
print(f"rows {ROWS}, {RUNS} runs, medians")
print(f"vshred sql, runtime filters on:  {on:8.1f} ms  {on_answer}  ({on_read})")
print(f"vshred sql, runtime filters off: {off:8.1f} ms  {off_answer}  ({off_read})")
print(f"DuckDB {duckdb.__version__}:                  {d:8.1f} ms  {d_answer}")
print(f"off / on: {off / on:.2f}x; DuckDB / on: {d / on:.2f}x")
