#!/usr/bin/env python3
"""Compares the Variant column sizes of every writer's file and checks that vshred's read back exactly.

usage: measure.py WORK VSHRED

Reads WORK/files/<name>.<writer>.parquet (writers: vshred-auto, vshred-spark,
vshred-none, arrow-rs, spark, duckdb) and WORK/input/<name>.jsonl,
and writes, besides printing the first:
  WORK/report.md   per data set, the Variant column's compressed bytes (every
                   column chunk of column v, from the Parquet footer) of each
                   writer, vshred auto's ratio to the smallest peer (Spark,
                   DuckDB, arrow-rs) and to Spark, whether shredding
                   made it larger than vshred's unshredded file, and whether
                   `VSHRED cat` of each vshred file gave back every input line
                   (its column v);
                   then the totals and the encode times (WORK/encode.tsv,
                   WORK/peers.tsv)
  WORK/leaves.md   per data set, every leaf of vshred auto's file and of the
                   smallest peer's: compressed and uncompressed bytes, values,
                   encodings, so that a loss can be found leaf by leaf

Exactness: both lines parsed with json.loads(parse_float=Decimal), compared as
values (object key order ignored; 1.50 == 1.5 and 1e3 == 1000.0: the same
number; a string, a key or a digit of difference is a mismatch).
"""

import decimal
import glob
import json
import os
import subprocess
import sys

import duckdb

if len(sys.argv) != 3:
    sys.exit(__doc__)
WORK, VSHRED = sys.argv[1], sys.argv[2]
OURS = ["vshred-auto", "vshred-spark", "vshred-none"]
PEERS = ["spark", "duckdb", "arrow-rs"]
con = duckdb.connect()


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def leaves(path):
    """{leaf path: (compressed, uncompressed, values, encodings)} of a file."""
    rows = con.execute(f"""
        SELECT path_in_schema, sum(total_compressed_size), sum(total_uncompressed_size),
               sum(num_values), string_agg(DISTINCT encodings, ',')
        FROM parquet_metadata({sql_str(path)}) GROUP BY path_in_schema""").fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def column_bytes(path):
    return sum(v[0] for v in leaves(path).values())


def exact(path, want):
    """Mismatching rows of `vshred cat path` against the source values `want` (-1: cat failed)."""
    out = subprocess.run([VSHRED, "cat", path], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"measure: {VSHRED} cat {path}: {out.stderr.strip()}", file=sys.stderr)
        return -1
    got = out.stdout.splitlines()
    bad = abs(len(got) - len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        # cat prints each row as an object of its columns
        row = json.loads(g, parse_float=decimal.Decimal)["v"]
        if row != w:
            if bad == 0:
                print(f"measure: {path} row {i}: {g[:200]} != {str(w)[:200]}", file=sys.stderr)
            bad += 1
    return bad


def fmt(n):
    return f"{n / 1e6:.3f}" if n >= 1e5 else f"{n / 1e6:.4f}"


def read_tsv(name):
    path = os.path.join(WORK, name)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return [line.split("\t") for line in lines[1:]]


def main():
    names = sorted(os.path.basename(p)[: -len(".jsonl")]
                   for p in glob.glob(os.path.join(WORK, "input", "*.jsonl")))
    writers = OURS + PEERS
    head = ["data set", "rows", "JSON MB"] + writers + [
        "auto / smallest peer", "auto / Spark", "shredded > none", "exact"]
    out = ["Variant column, compressed MB (10^6 bytes), from the files' footers.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---:|" * (len(head) - 3)]
    leaf_out = []
    totals = dict.fromkeys(writers, 0)
    for name in names:
        source = os.path.join(WORK, "input", f"{name}.jsonl")
        with open(source, encoding="utf-8") as f:
            want = [json.loads(line, parse_float=decimal.Decimal) for line in f]
        rows = len(want)
        files = {w: os.path.join(WORK, "files", f"{name}.{w}.parquet") for w in writers}
        size = {w: column_bytes(p) for w, p in files.items() if os.path.exists(p)}
        for w in writers:
            totals[w] += size.get(w, 0)
        peer = min((w for w in PEERS if w in size), key=size.get)
        bad = {w: exact(files[w], want) for w in OURS if w in size}
        larger = [w for w in ("vshred-auto", "vshred-spark")
                  if w in size and size[w] > size.get("vshred-none", float("inf"))]
        out.append("| " + " | ".join(
            [name, str(rows), f"{os.path.getsize(source) / 1e6:.2f}"]
            + [fmt(size[w]) if w in size else "-" for w in writers]
            + [f"{size['vshred-auto'] / size[peer]:.2f} ({peer})",
               f"{size['vshred-auto'] / size['spark']:.2f}" if "spark" in size else "-",
               ", ".join(larger) or "no",
               "yes" if all(b == 0 for b in bad.values()) else
               "; ".join(f"{w}: {b} rows differ" for w, b in bad.items() if b)]) + " |")
        leaf_out += leaf_table(name, files["vshred-auto"], peer, files[peer])
    out.append("| **total** | | | " + " | ".join(fmt(totals[w]) for w in writers) + " | "
               + f"{totals['vshred-auto'] / min(totals[w] for w in PEERS):.2f} | "
               + f"{totals['vshred-auto'] / totals['spark']:.2f} | | |")
    encode = read_tsv("encode.tsv")
    if encode:
        out += ["", "Encode, best wall-clock of the runs, in process (`benches/realdata.rs`); "
                "arrow-rs is given the layout that vshred inferred, as vshred is in the "
                "column \"layout given\":", "",
                "| data set | rows | vshred auto ms | vshred, layout given ms | arrow-rs ms "
                "| auto / arrow-rs | layout given / arrow-rs |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        ratio = lambda a, b: f"{float(a) / float(b):.2f}" if "-" not in (a, b) else "-"
        out += [f"| {n} | {r} | {v} | {g} | {a} | {ratio(v, a)} | {ratio(g, a)} |"
                for n, r, _, v, g, a in encode]
    peers = read_tsv("peers.tsv")
    if peers:
        out += ["", "Peers' writes, wall-clock seconds, one run each (`peers.py`):", "",
                "| data set | " + " | ".join(w for w in PEERS if w != "arrow-rs") + " |",
                "|---|" + "---:|" * 2]
        by = {(n, w): s for n, w, s in peers}
        out += [f"| {n} | " + " | ".join(by.get((n, w), "-") for w in PEERS if w != "arrow-rs")
                + " |" for n in names]
    report = "\n".join(out) + "\n"
    with open(os.path.join(WORK, "report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    with open(os.path.join(WORK, "leaves.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(leaf_out) + "\n")
    print(report)
    if any("rows differ" in line for line in out):
        sys.exit("measure: a vshred file did not read back exactly")


def leaf_table(name, ours_path, peer, peer_path):
    lines = [f"## {name}: vshred-auto against {peer}", "",
             "| file | leaf | compressed | uncompressed | values | encodings |",
             "|---|---|---:|---:|---:|---|"]
    for label, path in (("vshred-auto", ours_path), (peer, peer_path)):
        for leaf, (comp, uncomp, values, enc) in sorted(
                leaves(path).items(), key=lambda kv: -kv[1][0]):
            lines.append(f"| {label} | `{leaf}` | {comp} | {uncomp} | {values} | {enc} |")
    return lines + [""]


if __name__ == "__main__":
    main()
