"""The partitioned writes of the interop check, shared by spark_side.py and
duckdb_side.py: data.jsonl with two columns kept in key=value directories."""
import json

# The partition columns of the partitioned writes, in SQL both engines take.
PARTITION_COLUMNS = (
    "CASE WHEN id % 11 = 5 THEN NULL ELSE id % 4 - 1 END AS p_int",
    "CASE id % 5 WHEN 0 THEN 'a/b' WHEN 1 THEN 'x=y' WHEN 2 THEN '50% é' "
    "WHEN 3 THEN 'sp ace' ELSE NULL END AS p_str",
)


def row_with_partitions(v_json, p_int, p_str):
    """A row's JSON: v (as the engine printed it) and the partition columns."""
    v = "null" if v_json is None else v_json
    return f'{{"v":{v},"p_int":{json.dumps(p_int)},"p_str":{json.dumps(p_str, ensure_ascii=False)}}}'
