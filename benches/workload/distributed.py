"""Issue 16's measure: the seed queries on 1, 2 and 3 workers against one
process, side by side in one run, over a dataset of many files.

Makes DIR/seed.jsonl (the seed rows, `examples/workload.rs`) and
DIR/data/ (FILES files of them), starts `vshred worker`s on loopback ports
they choose, and prints per query and per configuration: the median time
of the statement (`--timing`, without the process's start) and of the
whole process, the overhead against one process per task and per file,
the tasks of each stage, and the bytes of the plans sent (`plan_bytes_sent`
of EXPLAIN ANALYZE, all tasks together) and per task. Every answer must be
the single process's, value for value.

    cargo build --release -p vshred-cli && cargo build --release -p vshred --example workload
    python benches/workload/distributed.py DIR [ROWS] [FILES] [RUNS]

VSHRED (default target/release/vshred) and WORKLOAD (default
target/release/examples/workload) name the binaries.
"""

import os
import re
import statistics
import subprocess
import sys
import time

DIR = sys.argv[1]
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
FILES = int(sys.argv[3]) if len(sys.argv) > 3 else 20
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
VSHRED = os.environ.get("VSHRED", "target/release/vshred")
WORKLOAD = os.environ.get("WORKLOAD", "target/release/examples/workload")
DATA = os.path.join(DIR, "data")
TOKEN = os.path.join(DIR, "token")

os.makedirs(DIR, exist_ok=True)
if not os.path.exists(DATA):
    seed = os.path.join(DIR, "seed.jsonl")
    with open(seed, "w") as out:
        subprocess.run([WORKLOAD, "seed", str(ROWS)], stdout=out, check=True)
    subprocess.run(
        [VSHRED, "encode", seed, DATA, "--variant-field", "v",
         "--max-file-rows", str(ROWS // FILES)],
        check=True, capture_output=True,
    )
    os.remove(seed)
with open(TOKEN, "w") as out:
    out.write("a benchmark's secret\n")
files = len([f for f in os.listdir(DATA) if f.endswith(".parquet")])

QUERIES = [
    ("sum f0", "SELECT sum(variant_get(v, '$.f0', 'bigint')) FROM '{d}'"),
    ("count f0 > 500",
     "SELECT count(*) FROM '{d}' WHERE variant_get(v, '$.f0', 'bigint') > 500"),
    ("group by f3 % 10",
     "SELECT variant_get(v, '$.f3', 'bigint') % 10 AS k, count(*) AS n FROM '{d}' GROUP BY k ORDER BY k"),
    ("sum(ts)", "SELECT sum(ts) FROM '{d}'"),
    ("reconstruction", "SELECT sum(length(to_json(v))) FROM '{d}'"),
]


def start_workers(n):
    workers = []
    for _ in range(n):
        p = subprocess.Popen(
            [VSHRED, "worker", "--listen", "127.0.0.1:0", "--token-file", TOKEN,
             "--data-root", DATA],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True,
        )
        line = p.stderr.readline()
        address = line.strip().removeprefix("vshred worker: listening on ")
        workers.append((p, address))
    return workers


def sql(workers, query, timing=False):
    cmd = [VSHRED, "sql", "--format", "csv"]
    if workers:
        cmd += ["--workers", ",".join(a for _, a in workers), "--token-file", TOKEN]
    if timing:
        cmd.append("--timing")
    cmd.append(query)
    started = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    assert r.returncode == 0, (cmd, r.stderr)
    return r, wall


def measure(workers, query):
    statement, whole, answer = [], [], None
    for _ in range(RUNS):
        r, wall = sql(workers, query, timing=True)
        statement.append(float(re.search(r"Elapsed ([0-9.]+)", r.stderr).group(1)) * 1000)
        whole.append(wall * 1000)
        answer = r.stdout
    return statistics.median(statement), statistics.median(whole), answer


def explain(workers, query):
    r, _ = sql(workers, "EXPLAIN ANALYZE " + query)
    text = r.stdout
    sent = re.search(r"plan_bytes_sent=\{0:([0-9.]+) (B|K|KB|MB)\}", text)
    scale = {"B": 1, "K": 1000, "KB": 1000, "MB": 1e6}
    plan_bytes = float(sent.group(1)) * scale[sent.group(2)] if sent else 0
    tasks = [int(t) for t in re.findall(r"Stage \d+ ── tasks=(\d+)", text)]
    return plan_bytes, tasks


print(f"{ROWS} seed rows in {files} files, {RUNS} runs, medians (ms)")
print("| query | workers | statement | process | overhead | per task | per file | stage tasks | plan bytes | per task |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
clusters = {n: start_workers(n) for n in (1, 2, 3)}
try:
    for name, text in QUERIES:
        query = text.format(d=DATA + "/")
        alone, alone_whole, answer = measure(None, query)
        print(f"| {name} | one process | {alone:.0f} | {alone_whole:.0f} | | | | | | |", flush=True)
        for n, workers in clusters.items():
            t, whole, there = measure(workers, query)
            assert there == answer, (name, n, there, answer)
            plan_bytes, tasks = explain(workers, query)
            all_tasks = sum(tasks) or 1
            over = t - alone
            print(
                f"| {name} | {n} | {t:.0f} | {whole:.0f} | {over:+.0f} | {over / all_tasks:+.1f} "
                f"| {over / files:+.2f} | {tasks or 'local'} | {plan_bytes:.0f} "
                f"| {plan_bytes / all_tasks:.0f} |",
                flush=True,
            )
finally:
    for workers in clusters.values():
        for p, _ in workers:
            p.terminate()
            p.wait()
