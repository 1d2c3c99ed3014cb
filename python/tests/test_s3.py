"""Datasets in S3, named by their s3:// URLs: read by the module and by the
`vshred` command, written by COPY, through a real S3 server (moto's) on
loopback, each bucket's store made from the AWS_* environment."""

import json
import os
import socket
import subprocess
import uuid

import boto3
import pyarrow as pa
import pytest
from moto.server import ThreadedMotoServer

import vshred

ROWS = [
    json.dumps({"id": i, "v": {"user": {"id": 1000 + i}, "kind": "click" if i % 3 else "view",
                               "price": f"{i}.25" if i % 2 else i}})
    for i in range(300)
]


@pytest.fixture(scope="module")
def endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def bucket(endpoint, monkeypatch):
    """A new bucket, and the environment that points the stores at it."""
    settings = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT": endpoint, "AWS_ALLOW_HTTP": "true"}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    name = f"lake-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return client, name


@pytest.fixture
def lake(tmp_path, bucket):
    """The same key=value tree of files on disk and in the bucket."""
    client, name = bucket
    local = tmp_path / "events"
    for day, rows in [("2024-03-01", ROWS[:120]), ("2024-03-02", ROWS[120:])]:
        path = local / f"day={day}" / "part-0.parquet"
        path.parent.mkdir(parents=True)
        vshred.encode(rows, path, variant_fields=["v"], row_group_rows=50)
        client.upload_file(str(path), name, f"events/day={day}/part-0.parquet")
    return local, f"s3://{name}/events/"


def cli(*args):
    done = subprocess.run([os.environ["VSHRED_CLI"], *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def test_a_dataset_in_s3_reads_as_its_files_on_disk(lake):
    local, url = lake
    query = ("SELECT day, count(*) AS n, sum(variant_get(v, '$.user.id', 'bigint')) AS ids "
             "FROM '{}' WHERE variant_get(v, '$.kind', 'string') = 'click' GROUP BY day ORDER BY day")
    from_s3 = vshred.sql(query.format(url))
    assert from_s3 == vshred.sql(query.format(f"{local}/"))
    assert from_s3.column("n").to_pylist() == [80, 120]
    assert vshred.read(url) == vshred.read(local)
    where = 'day == "2024-03-02" and id >= 250'
    assert vshred.get(url, "$.user.id", "int64", where) == vshred.get(local, "$.user.id", "int64", where)
    # The command reads the same URLs.
    for args in [["cat"], ["get", "$.price", "--where", 'day == "2024-03-01"']]:
        command, flags = args[0], args[1:]
        by_url, by_path = cli(command, url, *flags), cli(command, str(local), *flags)
        assert by_url[0] == 0, by_url[2]
        assert by_url[1] == by_path[1] and by_url[1].count("\n") in (120, 300)
    code, out, err = cli("sql", query.format(url))
    assert code == 0 and "| 2024-03-02 | 120 |" in out, err


def test_copy_to_s3_writes_files_that_read_back_the_same(tmp_path, bucket):
    client, name = bucket
    source = tmp_path / "events.parquet"
    vshred.encode(ROWS, source, variant_fields=["v"])
    vshred.sql(f"COPY (SELECT * FROM '{source}') TO 's3://{name}/copied/'")
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=name)["Contents"]]
    assert keys and all(k.startswith("copied/") and k.endswith(".parquet") for k in keys), keys
    back = vshred.sql(f"SELECT id, to_json(v) AS v FROM 's3://{name}/copied/' ORDER BY id")
    assert back == vshred.sql(f"SELECT id, to_json(v) AS v FROM '{source}' ORDER BY id")
    assert back.num_rows == 300


def test_a_bucket_that_is_not_there_is_an_error_naming_the_url(bucket):
    with pytest.raises(vshred.VshredError, match=r"(?s)s3://no-such-bucket-here/x/.*NoSuchBucket"):
        vshred.read("s3://no-such-bucket-here/x/")
    code, _, err = cli("cat", "s3://no-such-bucket-here/x/")
    assert code != 0 and "s3://no-such-bucket-here/x/" in err and "NoSuchBucket" in err, err


def test_a_table_built_from_arrow_and_one_in_s3_join(lake):
    _, url = lake
    kinds = pa.table({"kind": ["click", "view"], "weight": [1, 10]})
    joined = vshred.sql(
        "SELECT sum(weight) AS w FROM events JOIN kinds "
        "ON variant_get(events.v, '$.kind', 'string') = kinds.kind",
        tables={"events": url, "kinds": kinds})
    assert joined.column("w").to_pylist() == [200 * 1 + 100 * 10]
