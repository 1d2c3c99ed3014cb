#!/usr/bin/env python3
"""Generates the interop test data (deterministic: fixed seed).

usage: gen_data.py OUT_DIR [ROWS]

Writes
  OUT_DIR/data.jsonl   ROWS JSON objects (default 2000) with varied values:
                       ints of every width, decimals (104.8, 12.345, 1.50,
                       decimal16, integers beyond int64), doubles in exponent
                       form, strings (short, long, unicode, escapes), booleans,
                       nulls, nested objects, arrays of strings / objects /
                       arrays, a field that is an int in some rows and a string
                       in others, fields missing from most rows, empty {} / [],
                       objects whose keys sort otherwise in UTF-16 (Spark's).
  OUT_DIR/mixed.jsonl  300 top-level values that are not all objects
                       (ints, decimals, doubles, strings, arrays, objects, null),
                       mostly ints so that shredders pick a typed top level.

Numbers are written as text exactly as given here, so what each line holds is
what the JSON text says: a number with an exponent is a double, a number with
a '.' is an exact decimal (scale kept), other numbers are integers.
"""
import json
import random
import sys

rng = random.Random(20240611)

WORDS = ["alpha", "beta", "gamma", "delta", "café", "naïve", "日本語", "emoji 🎉",
         "tab\there", "quote \" and \\ backslash", "new\nline", "ctrl \u0001 char", ""]


def dec(intpart_digits, scale, neg=False):
    """A decimal literal with the given digits; keeps trailing zeros."""
    ip = str(rng.randrange(10 ** (intpart_digits - 1) if intpart_digits > 1 else 0, 10 ** intpart_digits))
    fp = "".join(str(rng.randrange(10)) for _ in range(scale))
    s = ip + ("." + fp if scale else "")
    return ("-" if neg else "") + s


def dbl():
    """A double, always written with an exponent (so it parses as a double)."""
    x = rng.choice([rng.uniform(-1e6, 1e6), rng.uniform(0, 1), rng.uniform(-1e-5, 1e-5),
                    rng.uniform(1e15, 1e22), 0.1 + 0.2, 1.5e3, 6.02214076e23, 2e-308, 1.7976931348623157e308])
    return f"{x:.17e}" if rng.random() < 0.3 else repr(x) if "e" in repr(x) else f"{x:e}"


def raw(text):
    """Marks a number literal that must be written verbatim."""
    return Raw(text)


class Raw(str):
    pass


def dump(v):
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dump(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=rng.random() < 0.5)


def int_of_width(i):
    w = i % 4
    if w == 0:
        return rng.randint(-128, 127)
    if w == 1:
        return rng.randint(-32768, 32767)
    if w == 2:
        return rng.randint(-2**31, 2**31 - 1)
    return rng.choice([rng.randint(-2**63, 2**63 - 1), 2**63 - 1, -2**63])


def row(i):
    r = {"id": i}
    r["n"] = int_of_width(i)                      # int8 .. int64 in one field
    r["small"] = rng.randint(0, 100)              # always int8
    r["ts"] = 1732838400000000 + i * 1000003      # int64
    r["url"] = f"/catalog/items/{i * 13:07d}"     # distinct, sharing prefixes: DELTA_BYTE_ARRAY
    r["price"] = raw(rng.choice(["104.8", "19.99", "104.80", "0.5", dec(3, 1), dec(2, 2), dec(5, 2, neg=True)]))
    r["rate"] = raw(rng.choice(["12.345", dec(2, 3), "1.50", dec(1, 6)]))
    r["score"] = raw(dbl())
    r["latency_ms"] = raw(rng.choice(["1.5e3", "1.5e2", "2.5E-3", "1e0", "-4.25e1"]))
    r["event"] = rng.choice(["click", "purchase", "login", "error"])
    r["title"] = rng.choice(WORDS) + (" x" * rng.randint(0, 40))   # short and long strings
    r["ok"] = rng.random() < 0.5
    r["maybe"] = None if rng.random() < 0.5 else rng.randint(0, 9)
    r["detail"] = None
    user = {"id": f"u-{rng.randint(0, 99):02d}"}
    if rng.random() < 0.8:
        user["plan"] = rng.choice(["pro", "free"])
    if rng.random() < 0.6:
        user["geo"] = {"lat": raw(dec(2, 4)), "lon": raw(dec(3, 3)), "alt": raw(dbl())}
    r["user"] = user
    r["tags"] = [rng.choice(["a", "b", "c", "dd", "ééé"]) for _ in range(rng.randint(0, 4))]
    r["items"] = [
        {"sku": f"X-{rng.randint(0, 999)}", "n": rng.randint(1, 5), "price": raw(dec(2, 2))}
        | ({"note": rng.choice(WORDS)} if rng.random() < 0.2 else {})
        for _ in range(rng.randint(0, 3))
    ]
    # int in some rows, string in others
    r["code"] = rng.randint(0, 500) if rng.random() < 0.6 else f"E{rng.randint(0, 99)}"
    if rng.random() < 0.3:
        r["opt"] = {"k": rng.randint(0, 3), "s": rng.choice(WORDS)}
    if rng.random() < 0.4:
        r["amount"] = raw(dec(12, 2, neg=rng.random() < 0.3))  # precision 14: decimal8 / INT64
    if rng.random() < 0.4:
        r["big_dec"] = raw(dec(20, 3))                         # precision 23: decimal16 / FLBA(10)
    if rng.random() < 0.03:
        r["rare"] = raw("12345678901234567890.123")           # decimal16, too rare to shred
    if rng.random() < 0.2:
        r["huge"] = raw(str(rng.randrange(10**19, 10**30)))   # beyond int64 -> decimal(p,0)
    if rng.random() < 0.1:
        r["empty_obj"] = {}
        r["empty_arr"] = []
    if rng.random() < 0.1:
        r["matrix"] = [[rng.randint(0, 9) for _ in range(rng.randint(0, 3))] for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.05:
        r["mixed_arr"] = [1, "a", None, {"k": 1}, raw("2.50"), True]
    if rng.random() < 0.1:
        r["deep"] = {"a": {"b": {"c": {"d": [{"e": rng.randint(0, 9)}]}}}}
    if i % 50 == 7:
        # Keys whose order differs in UTF-8 bytes (the spec's, ours) and in
        # UTF-16 code units (Java's, Spark's): U+FEFF against an emoji.
        r["keyed"] = {"\ufeff": i, "\U0001F600": i + 1, "a": i + 2, "\uff21": i + 3}
    keys = list(r)
    rng.shuffle(keys)                             # key order varies; the encoding sorts
    return {k: r[k] for k in keys}


def mixed(i):
    c = i % 10
    if c < 6:
        return int_of_width(i)
    return rng.choice([raw("104.8"), raw(dbl()), "a string", [1, 2, "x"], {"a": 1, "b": [True]}, None, True,
                       raw("12345678901234567890.123")])


def main():
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    with open(f"{out}/data.jsonl", "w", encoding="utf-8") as f:
        for i in range(rows):
            f.write(dump(row(i)) + "\n")
    with open(f"{out}/mixed.jsonl", "w", encoding="utf-8") as f:
        for i in range(300):
            f.write(dump(mixed(i)) + "\n")


if __name__ == "__main__":
    main()
