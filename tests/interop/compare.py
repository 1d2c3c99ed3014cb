#!/usr/bin/env python3
"""Compares what each reader printed, value for value, and prints the summary table.

usage: compare.py WORK [--show N]      exit status 1 if anything mismatched or failed

Inputs (made by run.sh, spark_side.py, duckdb_side.py):
  WORK/input/<ds>.jsonl                      the JSON Lines source of each data set
  WORK/vshred/<ds>_<decimal>_<shred>.parquet files written by `vshred encode`
  WORK/written/<engine>_<ds>.parquet         files written by Spark / DuckDB
  WORK/read/<stem>.<reader>.{tsv,jsonl,txt}  what each reader printed per row;
                                             <same name>.err when the reader failed

Direction "vshred->engine": each reader's value for row i of a vshred file is
compared with line i of the source JSON (and `vshred cat` is checked the same way).
Direction "engine->vshred": `vshred cat`'s value for the row with id N of an
engine-written file is compared with the engine's own reading of that row.

Comparison rules (both sides parsed as JSON; numbers kept as their exact text):
  * objects: the same set of keys (order ignored), values compared recursively;
    arrays: the same length, elements compared in order;
  * numbers: equal when their exact decimal values are equal, so 104.8 == 104.80,
    1500 == 1500.0 == 1.5E3, 0 == 0.00000 (scale, trailing zeros and int vs
    decimal vs double representation of the SAME value are not differences);
    otherwise equal only when both parse to the same IEEE double AND the value
    is a double. Whether it is a double is decided by the source JSON token at
    that place when there is one (our data writes every double with an exponent
    and every decimal without); only where no source JSON exists (DuckDB's typed
    file) by either printed token having an exponent. This accepts a double
    printed with other digits (Java 17's Double.toString is not always the
    shortest) and nothing else: a source decimal that lost digits is a mismatch.
    Such accepted cases are counted in the "dbl~" column;
  * strings: equal when identical, or when both are ISO-8601 dates / times /
    timestamps that denote the same value (engines print "2024-01-02 03:04:05+00"
    where vshred prints "2024-01-02T03:04:05.000000+00:00");
  * true/false/null as themselves; a SQL NULL row (printed SQLNULL) equals a JSON
    null (`vshred cat` prints a SQL NULL Variant as null);
  * rows are matched by row index (vshred files) or by the id column (engine
    files); a missing or extra row is a mismatch.
"""
import glob
import json
import os
import re
import sys
from decimal import Decimal

WORK = None
SHOW = 5


class Num:
    __slots__ = ("text", "dec", "is_exp")

    def __init__(self, text):
        self.text = text
        self.dec = Decimal(text)
        self.is_exp = "e" in text or "E" in text

    def __repr__(self):
        return self.text


STATS = {"float_eq": 0, "float_eq_examples": []}


def parse(text):
    if text == "SQLNULL":
        return None
    return json.loads(text, parse_float=Num, parse_int=Num)


def to_text(v):
    """JSON text with numbers exactly as they were printed."""
    if isinstance(v, Num):
        return v.text
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + to_text(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(to_text(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def show(v):
    s = to_text(v)
    return s if len(s) <= 200 else s[:197] + "..."


TS = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?)?"
                r"(Z|[+-]\d{2}(?::?\d{2})?)?$")
TM = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$")


def temporal(s):
    m = TS.match(s)
    if m:
        date, h, mi, sec, frac, off = m.groups()
        if h is None and off is None:
            return ("date", date)
        offmin = None
        if off:
            if off == "Z":
                offmin = 0
            else:
                sign = -1 if off[0] == "-" else 1
                digits = off[1:].replace(":", "")
                offmin = sign * (int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) > 2 else 0))
        from datetime import datetime, timedelta
        dt = datetime.fromisoformat(f"{date}T{h or '00'}:{mi or '00'}:{sec or '00'}")
        if offmin is not None:
            dt -= timedelta(minutes=offmin)           # to UTC
        return ("ts", offmin is not None, dt.isoformat(), (frac or "").ljust(9, "0"))
    m = TM.match(s)
    if m:
        h, mi, sec, frac = m.groups()
        return ("time", h, mi, sec, (frac or "").ljust(9, "0"))
    return None


def cmp(exp, act, guide, path):
    """None when equal, else (path, expected, actual)."""
    if isinstance(exp, Num) and isinstance(act, Num):
        if exp.dec == act.dec:
            return None
        if isinstance(guide, Num):
            is_double = guide.is_exp
        else:
            is_double = exp.is_exp or act.is_exp
        try:
            if is_double and float(exp.text) == float(act.text):
                STATS["float_eq"] += 1
                if len(STATS["float_eq_examples"]) < 20:
                    STATS["float_eq_examples"].append((path, exp.text, act.text))
                return None
        except (OverflowError, ValueError):
            pass
        return (path, exp, act)
    if isinstance(exp, dict) and isinstance(act, dict):
        if exp.keys() != act.keys():
            miss = sorted(exp.keys() - act.keys())
            extra = sorted(act.keys() - exp.keys())
            return (path + f" (keys: missing {miss}, extra {extra})", exp, act)
        for k in sorted(exp):
            g = guide.get(k) if isinstance(guide, dict) else None
            r = cmp(exp[k], act[k], g, f"{path}.{k}")
            if r:
                return r
        return None
    if isinstance(exp, list) and isinstance(act, list):
        if len(exp) != len(act):
            return (path + f" (length {len(exp)} vs {len(act)})", exp, act)
        for i, (a, b) in enumerate(zip(exp, act)):
            g = guide[i] if isinstance(guide, list) and i < len(guide) else None
            r = cmp(a, b, g, f"{path}[{i}]")
            if r:
                return r
        return None
    if isinstance(exp, str) and isinstance(act, str):
        if exp == act:
            return None
        te, ta = temporal(exp), temporal(act)
        if te is not None and te == ta:
            return None
        return (path, exp, act)
    if type(exp) is type(act) and exp == act and not isinstance(exp, (Num, dict, list)):
        return None                                   # bool / None
    return (path, exp, act)


# ---------------------------------------------------------------- loading

def err_of(path):
    e = path + ".err"
    if os.path.exists(e):
        with open(e, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "failed (no message)"
    if not os.path.exists(path):
        return "no output (reader did not run)"
    return None


def load_source(ds):
    p = os.path.join(WORK, "input", f"{ds}.jsonl")
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        return {i: parse(line) for i, line in enumerate(f)}


def load_tsv(path):
    """<id>\t<json or SQLNULL> (Spark, DuckDB)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            rid, _, j = line.rstrip("\n").partition("\t")
            out[int(rid)] = parse(j)
    return out


def load_lines(path):
    """One JSON value (or SQLNULL) per line, row index = line number (arrow-rs)."""
    with open(path, encoding="utf-8") as f:
        return {i: parse(line.rstrip("\n")) for i, line in enumerate(f)}


def load_cat(path, whole=False):
    """`vshred cat`: one object per row with every column; key by the id column if there is one.
    The value compared is v, or with `whole` the row without its id (v and the columns of a
    partitioned dataset's key=value directories)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            row = parse(line)
            key = int(row["id"].dec) if isinstance(row.get("id"), Num) else i
            out[key] = {k: x for k, x in row.items() if k != "id"} if whole else row.get("v")
    return out


# ---------------------------------------------------------------- the checks

results = {}     # (engine, direction, mode) -> dict(files, rows, mismatches, errors, examples)


def slot(engine, direction, mode):
    return results.setdefault((engine, direction, mode),
                              {"files": 0, "rows": 0, "mismatches": 0, "float_eq": 0,
                                                      "errors": [], "examples": []})


def compare_rows(s, label, expected, actual, guide):
    s["files"] += 1
    STATS["float_eq"] = 0
    for rid in sorted(set(expected) | set(actual)):
        if rid not in actual or rid not in expected:
            s["rows"] += 1
            s["mismatches"] += 1
            if len(s["examples"]) < SHOW:
                s["examples"].append(f"{label} row {rid}: " + ("missing" if rid not in actual else "extra row"))
            continue
        s["rows"] += 1
        g = guide.get(rid) if guide else None
        r = cmp(expected[rid], actual[rid], g, "$")
        if r:
            s["mismatches"] += 1
            if len(s["examples"]) < SHOW:
                p, e, a = r
                s["examples"].append(f"{label} row {rid} at {p}: expected {show(e)} got {show(a)}")
    s["float_eq"] += STATS["float_eq"]


def compare_read(s, label, src, out, loader):
    """Compares what a reader printed (`out`, read by `loader`) with the source rows, or counts
    the reader's error."""
    e = err_of(out)
    if e:
        s["files"] += 1
        s["errors"].append(f"{label}: {e}")
        return
    compare_rows(s, label, src, loader(out), src)


READERS_1 = [("vshred cat", "vshred.jsonl", load_cat),
             ("spark 4.3", "spark.tsv", load_tsv),
             ("duckdb 2.0", "duckdb.tsv", load_tsv),
             ("arrow-rs 60.1", "arrow-rs.txt", load_lines)]

WRITERS = {"spark": ("spark 4.3", "spark.tsv", "default (inference on)"),
           "sparklegacy": ("spark 4.3", "spark.tsv", "writeLegacyFormat=true"),
           "duckdb": ("duckdb 2.0", "duckdb.tsv", "json::VARIANT, auto shredding"),
           # Directories of files: v and two columns in key=value directories.
           "sparkparts": ("spark 4.3", "spark.tsv", "partitionBy, key=value directories"),
           "duckdbparts": ("duckdb 2.0", "duckdb.tsv", "PARTITION_BY, key=value directories")}

def main():
    global WORK, SHOW
    WORK = sys.argv[1]
    if "--show" in sys.argv:
        SHOW = int(sys.argv[sys.argv.index("--show") + 1])
    sources = {}
    for path in sorted(glob.glob(os.path.join(WORK, "vshred", "*.parquet"))) + \
            sorted(glob.glob(os.path.join(WORK, "vshred", "*.parquet.err"))):
        stem = os.path.basename(path).split(".parquet")[0]
        ds, dmode, smode = stem.rsplit("_", 2)
        mode = f"decimal={dmode} shred={smode}"
        if ds not in sources:
            sources[ds] = load_source(ds)
        src = sources[ds]
        if path.endswith(".err"):                          # vshred encode itself failed
            for engine, _, _ in READERS_1:
                slot(engine, "vshred->engine", mode)["errors"].append(f"{stem}: vshred encode: {err_of(path[:-4])}")
            continue
        for engine, ext, loader in READERS_1:
            out = os.path.join(WORK, "read", f"{stem}.{ext}")
            compare_read(slot(engine, "vshred->engine", mode), stem, src, out, loader)

    for path in sorted(set(glob.glob(os.path.join(WORK, "written", "*.parquet"))) |
                       {p[:-4] for p in glob.glob(os.path.join(WORK, "written", "*.parquet.err"))}):
        stem = os.path.basename(path)[:-len(".parquet")]
        prefix, ds = stem.split("_", 1)
        engine, ext, mode = WRITERS[prefix]
        if stem == "duckdb_typed":
            mode = "typed values, SHREDDING option"
        s = slot(engine, "engine->vshred cat", mode)
        e = err_of(path)
        if e:
            s["files"] += 1
            s["errors"].append(f"{stem}: {engine} could not write it: {e}")
            continue
        eng_out = os.path.join(WORK, "read", f"{stem}.{ext}")
        cat_out = os.path.join(WORK, "read", f"{stem}.vshred.jsonl")
        e = err_of(eng_out)
        if e:
            s["files"] += 1
            s["errors"].append(f"{stem}: {engine} could not read its own file: {e}")
            continue
        e = err_of(cat_out)
        if e:
            s["files"] += 1
            s["errors"].append(f"{stem}: vshred cat: {e}")
            continue
        if ds not in sources:
            sources[ds] = load_source(ds)
        guide = sources[ds]
        whole = prefix.endswith("parts")
        if whole:
            guide = {rid: {"v": g} for rid, g in guide.items()}
        compare_rows(s, stem, load_tsv(eng_out), load_cat(cat_out, whole), guide)

    # `vshred sql` COPY of Variants nested in a struct and a list.
    for path in sorted(glob.glob(os.path.join(WORK, "nested", "*.parquet"))) + \
            sorted(glob.glob(os.path.join(WORK, "nested", "*.parquet.err"))):
        ds = os.path.basename(path).split(".parquet")[0]
        if ds not in sources:
            sources[ds] = load_source(ds)
        src = sources[ds]
        for engine, ext in (("spark 4.3", "spark.tsv"), ("duckdb 2.0", "duckdb.tsv")):
            for kind in ("struct", "list"):
                s = slot(engine, "vshred COPY->engine", f"nested in a {kind}")
                if path.endswith(".err"):
                    s["errors"].append(f"{ds}: vshred sql COPY: {err_of(path[:-4])}")
                    continue
                out = os.path.join(WORK, "read", f"nested_{ds}_{kind}.{ext}")
                compare_read(s, f"nested {ds} ({kind})", src, out, load_tsv)

    # ---------------------------------------------------------------- report

    hdr = ("engine", "direction", "mode", "files", "rows", "mismatches", "dbl~", "result")
    table = []
    failed = False
    for (engine, direction, mode), s in sorted(results.items(), key=lambda kv: (kv[0][1] != "vshred->engine", kv[0])):
        bad = s["mismatches"] > 0 or s["errors"]
        failed |= bool(bad)
        res = "ok" if not bad else ("FAIL: error" if s["errors"] and not s["mismatches"] else "FAIL")
        table.append((engine, direction, mode, str(s["files"]), str(s["rows"]), str(s["mismatches"]),
                      str(s["float_eq"]), res))
    if not table:
        failed = True
    widths = [max(len(r[i]) for r in [hdr] + table) for i in range(len(hdr))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(hdr, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in table]
    report = "\n".join(lines)
    details = []
    for (engine, direction, mode), s in sorted(results.items()):
        if s["errors"] or s["examples"]:
            details.append(f"\n{engine} / {direction} / {mode}:")
            details += [f"  error: {e}" for e in s["errors"]]
            details += [f"  mismatch: {x}" for x in s["examples"]]
    print(report)
    if details:
        print("\nFailures (first %d mismatches per line):" % SHOW + "\n".join(details))
    with open(os.path.join(WORK, "summary.md"), "w", encoding="utf-8") as f:
        f.write(report + "\n" + ("\n".join(details) + "\n" if details else ""))
    total_rows = sum(s["rows"] for s in results.values())
    total_bad = sum(s["mismatches"] for s in results.values())
    total_err = sum(len(s["errors"]) for s in results.values())
    print(f"\ninterop: {total_rows} rows compared, {total_bad} mismatches, {total_err} reader/writer errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
