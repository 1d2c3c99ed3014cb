//! Datasets read from object stores by URL, through a real DataFusion
//! session and the `object_store` crate's in-memory and local stores:
//! answers equal to the same files read by path, and errors naming the
//! URL.

use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use datafusion::object_store::memory::InMemory;
use datafusion::object_store::path::Path as Location;
use datafusion::object_store::{ObjectStoreExt, PutPayload};
use datafusion::prelude::{SessionConfig, SessionContext};

mod common;
use common::{DATASET_PRUNING, DATASET_QUERIES, seed_file};

async fn try_query(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let batches = try_query(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
}

/// Three files of 5000, 2000 and 3000 rows in `dir/{a,b,c}/seed.parquet`,
/// the same in a session's `memory://` store under `events/`, with a
/// `_SUCCESS` marker and a hidden file the dataset must skip.
async fn seed(dir: &Path) -> SessionContext {
    let memory = Arc::new(InMemory::new());
    for (name, rows) in [("a", 5000), ("b", 2000), ("c", 3000)] {
        std::fs::create_dir(dir.join(name)).unwrap();
        let (path, _) = seed_file(&dir.join(name), rows);
        let bytes = std::fs::read(&path).unwrap();
        let location = Location::from(format!("events/{name}/seed.parquet"));
        memory
            .put(&location, PutPayload::from(bytes))
            .await
            .unwrap();
    }
    for skipped in [
        "events/_SUCCESS",
        "events/a/.seed.parquet.crc",
        "events/_tmp/x.parquet",
    ] {
        memory
            .put(
                &Location::from(skipped),
                PutPayload::from_static(b"not parquet"),
            )
            .await
            .unwrap();
    }
    let mut config = SessionConfig::new().with_target_partitions(3);
    config.options_mut().optimizer.repartition_file_min_size = 0;
    let ctx = vshred_datafusion::context(config);
    let url = url::Url::parse("memory://").unwrap();
    ctx.register_object_store(&url, memory);
    ctx
}

#[tokio::test]
async fn a_dataset_in_a_store_reads_as_the_same_files_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    let by_path = format!("{}/", dir.path().display());
    let by_file_url = format!("file://{}/", dir.path().display());
    for sql in DATASET_QUERIES {
        let expected = text(&ctx, &sql.replace("{}", &by_path)).await;
        for url in ["memory:///events/", by_file_url.as_str()] {
            assert_eq!(
                text(&ctx, &sql.replace("{}", url)).await,
                expected,
                "{sql} on {url}"
            );
        }
    }
    // Pruned by the footers' statistics as by path: two files and four of
    // the first's five row groups.
    let analyzed = text(
        &ctx,
        &format!(
            "EXPLAIN ANALYZE {}",
            DATASET_QUERIES[2].replace("{}", "memory:///events/")
        ),
    )
    .await;
    for figure in DATASET_PRUNING {
        assert!(analyzed.contains(figure), "{figure} in {analyzed}");
    }
}

#[tokio::test]
async fn globs_and_external_tables_name_files_in_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    for (url, rows) in [
        ("memory:///events/*/seed.parquet", 10_000),
        ("memory:///events/[ab]/*.parquet", 7000),
        ("memory:///events/c/seed.parquet", 3000),
        ("memory:///events/b/", 2000),
    ] {
        let counted = text(&ctx, &format!("SELECT count(*) AS n FROM '{url}'")).await;
        assert!(counted.contains(&format!("| {rows} ")), "{url}: {counted}");
    }
    try_query(
        &ctx,
        "CREATE EXTERNAL TABLE events STORED AS PARQUET LOCATION 'memory:///events/'",
    )
    .await
    .unwrap();
    let counted = text(&ctx, "SELECT count(*) AS n, sum(id) AS s FROM events").await;
    let by_path = text(
        &ctx,
        &format!(
            "SELECT count(*) AS n, sum(id) AS s FROM '{}/'",
            dir.path().display()
        ),
    )
    .await;
    assert_eq!(counted, by_path);
}

#[tokio::test]
async fn a_missing_or_corrupt_object_is_an_error_naming_its_url() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    let memory = ctx
        .runtime_env()
        .object_store(
            datafusion::execution::object_store::ObjectStoreUrl::parse("memory://").unwrap(),
        )
        .unwrap();
    memory
        .put(
            &Location::from("bad/x.parquet"),
            PutPayload::from_static(b"PAR1 not really"),
        )
        .await
        .unwrap();
    for (url, expected) in [
        (
            "memory:///nothing/",
            "memory:///nothing/: invalid arguments: no Parquet file here",
        ),
        ("memory:///bad/x.parquet", "memory:///bad/x.parquet"),
        (
            "gs://nobody/x.parquet",
            "no object store for gs://nobody/: vshred reads",
        ),
        (
            "file://testdata/x.parquet",
            "file://testdata/x.parquet names the host \"testdata\": a file:// URL takes an absolute path after its two slashes",
        ),
    ] {
        let e = try_query(&ctx, &format!("SELECT count(*) FROM '{url}'"))
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "{url}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// A reader blocks the thread it runs on, one of DataFusion's tokio
/// workers, whose task may have spent its tokio budget by then (a filter
/// reading many pages in one poll did): the read must still complete.
#[test]
fn a_read_completes_on_a_thread_whose_tokio_budget_is_spent() {
    use vshred::dataset::storage::Storage;
    use vshred_datafusion::store::StoreFiles;

    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let read = runtime.block_on(async {
            let memory = Arc::new(InMemory::new());
            let location = Location::from("x/a.parquet");
            memory
                .put(&location, PutPayload::from_static(b"0123456789"))
                .await
                .unwrap();
            let url =
                datafusion::execution::object_store::ObjectStoreUrl::parse("memory://").unwrap();
            let files = StoreFiles::new(memory, &url);
            let runtime = runtime_task(async move {
                // Spend the task's budget: each ready receive takes a unit.
                let (send, mut receive) = tokio::sync::mpsc::unbounded_channel();
                for i in 0..1000 {
                    send.send(i).unwrap();
                }
                let mut spent = 0;
                while futures::FutureExt::now_or_never(receive.recv()).is_some() {
                    spent += 1;
                }
                assert!(spent < 1000, "the budget was never spent");
                let source = files.open(Path::new("memory:///x/a.parquet")).unwrap();
                source.read_range(2..6).unwrap()
            });
            runtime.await
        });
        done.send(read).unwrap();
    });
    let read = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the read never completed");
    assert_eq!(&read[..], b"2345");
}

/// `work` as a task of the current runtime, as DataFusion runs a stream.
async fn runtime_task<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    tokio::spawn(work).await.unwrap()
}

#[tokio::test]
async fn copy_to_a_store_writes_files_that_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    let copied = text(
        &ctx,
        "COPY (SELECT id, v FROM 'memory:///events/' WHERE id % 3 = 0) TO 'memory:///copied/' STORED AS PARQUET OPTIONS (shred 'spark')",
    )
    .await;
    assert!(copied.contains("| 3334 "), "{copied}");
    let sql = "SELECT count(*) AS n, sum(id) AS ids, sum(variant_get(v, '$.n.a', 'bigint')) AS a, min(to_json(v)) AS first FROM '{}'";
    let back = text(&ctx, &sql.replace("{}", "memory:///copied/")).await;
    let source = text(
        &ctx,
        &sql.replace("{}", "memory:///events/").replace(
            "FROM 'memory:///events/'",
            "FROM 'memory:///events/' WHERE id % 3 = 0",
        ),
    )
    .await;
    assert_eq!(back, source);
    // The files are shredded, as a local COPY's are (`auto` would leave
    // these few regular rows unshredded, which writes them smaller).
    let memory = ctx
        .runtime_env()
        .object_store(
            datafusion::execution::object_store::ObjectStoreUrl::parse("memory://").unwrap(),
        )
        .unwrap();
    let listed: Vec<_> =
        futures::TryStreamExt::try_collect(memory.list(Some(&Location::from("copied"))))
            .await
            .unwrap();
    assert!(!listed.is_empty());
    for object in listed {
        let bytes = memory
            .get(&object.location)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let local = dir.path().join("copied.parquet");
        std::fs::write(&local, &bytes).unwrap();
        let file = vshred::parquet::ParquetFile::open(&local).unwrap();
        let leaves: Vec<String> = file
            .leaf_sizes()
            .into_iter()
            .map(|leaf| leaf.path.join("."))
            .collect();
        assert!(
            leaves
                .iter()
                .any(|l| l == "v.typed_value.n.typed_value.a.typed_value"),
            "{} has {leaves:?}",
            object.location
        );
    }
}

/// A `COPY ... PARTITIONED BY` to a store reads back with its
/// `key=value` directories as a column, as on the local file system.
#[tokio::test]
async fn a_partitioned_copy_to_a_store_reads_back_with_its_directories_column() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    text(
        &ctx,
        "COPY (SELECT id % 4 AS k, id, v FROM 'memory:///events/') TO 'memory:///parts/' STORED AS PARQUET PARTITIONED BY (k)",
    )
    .await;
    let back = text(
        &ctx,
        "SELECT k, count(*) AS n, sum(id) AS ids FROM 'memory:///parts/' WHERE k > 0 GROUP BY k ORDER BY k",
    )
    .await;
    let source = text(
        &ctx,
        "SELECT id % 4 AS k, count(*) AS n, sum(id) AS ids FROM 'memory:///events/' WHERE id % 4 > 0 GROUP BY k ORDER BY k",
    )
    .await;
    assert_eq!(back, source);
    assert_eq!(back.lines().count(), 7, "{back}");
}

/// Read through a store's URL, a directory whose name holds `%` (a
/// writer's escape: `k=b%3Dc` is `k=b=c`) is found, and its column is
/// the value it escapes, as read by path.
#[tokio::test]
async fn a_directory_named_with_escapes_reads_the_same_by_url_and_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = seed(dir.path()).await;
    for (name, rows) in [("k=b%3Dc", 3000), ("k=sp ace", 2000), ("k=d", 5000)] {
        let part = dir.path().join("parts").join(name);
        std::fs::create_dir_all(&part).unwrap();
        seed_file(&part, rows);
    }
    let sql = "SELECT k, count(*) AS n FROM '{}' GROUP BY k ORDER BY k";
    let by_path = text(
        &ctx,
        &sql.replace("{}", &format!("{}/parts/", dir.path().display())),
    )
    .await;
    assert!(by_path.contains("| b=c    | 3000 |"), "{by_path}");
    let by_url = format!("file://{}/parts/", dir.path().display());
    assert_eq!(text(&ctx, &sql.replace("{}", &by_url)).await, by_path);
    // A glob is a URL too: its escapes decoded (`%20` a space, `%25` a
    // `%`) as a path's are, it matches the names as the store lists them.
    for (glob, rows) in [
        ("k=sp ace/*.parquet", 2000),
        ("k=sp%20ace/*.parquet", 2000),
        ("k=sp*/*.parquet", 2000),
        ("k=sp*", 2000),
        ("k=b%253Dc/*.parquet", 3000),
        ("k=b%3Dc/*.parquet", 0),
        ("k=*/*.parquet", 10_000),
        ("*", 10_000),
    ] {
        let url = format!("file://{}/parts/{glob}", dir.path().display());
        let counted = try_query(&ctx, &format!("SELECT count(*) AS n FROM '{url}'")).await;
        match counted {
            Ok(batches) => {
                let n = arrow::util::pretty::pretty_format_batches(&batches)
                    .unwrap()
                    .to_string();
                assert!(n.contains(&format!("| {rows} ")), "{glob}: {n}");
            }
            Err(e) => assert_eq!(rows, 0, "{glob}: {e}"),
        }
    }
}
