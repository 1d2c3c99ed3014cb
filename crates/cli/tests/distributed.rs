//! `vshred sql --workers` on `vshred worker` processes on loopback ports
//! they choose: the answers of one process, value for value, and each
//! refusal a worker owes its network (no token, a file outside its data
//! roots, through a symlink too), a worker that is not there, and a clean
//! stop on SIGTERM.

mod binary;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use binary::{encoded, stderr, stdout, vshred_in};

/// A `vshred worker` process, stopped when dropped.
struct Worker {
    child: Child,
    address: String,
    log: BufReader<ChildStderr>,
}

impl Worker {
    /// A worker on a port the system chooses, reading beneath `root`.
    fn start(dir: &Path, root: &Path) -> Worker {
        Worker::start_with(dir, root, &[])
    }

    /// As [`start`](Self::start), with `args` besides.
    fn start_with(dir: &Path, root: &Path, args: &[&str]) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
            .args(["worker", "--listen", "127.0.0.1:0", "--token-file", "token"])
            .arg("--data-root")
            .arg(root)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("vshred worker runs");
        let mut log = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        log.read_line(&mut line).unwrap();
        let address = line
            .trim()
            .strip_prefix("vshred worker: listening on ")
            .unwrap_or_else(|| panic!("the worker said {line:?}"))
            .to_string();
        Worker {
            child,
            address,
            log,
        }
    }

    /// Sends it SIGTERM `times` times, 0.2 s apart, and waits for it to
    /// exit; its exit status and what it logged since it listened.
    fn terminate(mut self, times: usize) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        for time in 0..times {
            if time > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .expect("kill runs");
        }
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the worker did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.log, &mut rest).unwrap();
        (status, rest)
    }
}

/// The addresses of `workers`, as `--workers` takes them.
fn addresses(workers: &[Worker]) -> String {
    let addresses: Vec<&str> = workers.iter().map(|w| w.address.as_str()).collect();
    addresses.join(",")
}

/// Two workers reading beneath `root`.
fn two_workers(dir: &Path, root: &Path) -> [Worker; 2] {
    [Worker::start(dir, root), Worker::start(dir, root)]
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A dataset of six files in `dir/data`, of differing layouts and row
/// groups, and a small table of keys in `dir/data/keys`; and the token.
fn cluster_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "a cluster's shared secret\n").unwrap();
    for file in 0..6i64 {
        let rows: String = (file * 500..(file + 1) * 500)
            .map(|i| {
                format!(
                    "{{\"id\":{i},\"v\":{{\"k\":{},\"g\":\"g{}\",\"p\":{{\"x\":{},\"y\":\"y{i}\"}}}}}}\n",
                    i % 97,
                    i % 5,
                    i % 13
                )
            })
            .collect();
        let shred = if file % 2 == 0 { "auto" } else { "none" };
        encoded(
            dir.path(),
            &format!("data/events/half={}/part-{file}.parquet", file % 2),
            &rows,
            &[
                "--variant-field",
                "v",
                "--shred",
                shred,
                "--row-group-rows",
                "200",
            ],
        );
    }
    let keys: String = (0..97)
        .filter(|k| k % 3 == 0)
        .map(|k| format!("{{\"key\":{k},\"v\":{{\"name\":\"key-{k}\"}}}}\n"))
        .collect();
    encoded(
        dir.path(),
        "data/keys/keys.parquet",
        &keys,
        &["--variant-field", "v"],
    );
    dir
}

/// The queries the issue names: aggregates over many files (one through a
/// CAST of a sub-Variant), a struct `variant_get`, a GROUP BY on a Variant
/// path, a join of two Variant tables; and one on the column of the files'
/// `half=N` directories, which the workers give too; and one rendering the
/// rows a filter keeps, which the scan runs on its rows.
const QUERIES: [&str; 6] = [
    "SELECT count(*) AS n, sum(variant_get(v, '$.k', 'bigint')) AS k, max(CAST(variant_get(v, '$.k') AS INT)) AS top, sum(id) AS ids, count(*) FILTER (WHERE variant_get(v, '$.k', 'bigint') > 50) AS big FROM 'data/events/'",
    "SELECT id, variant_get(v, '$.p', 'struct<x:bigint,y:string>') AS p FROM 'data/events/' WHERE id % 401 = 0 ORDER BY id",
    "SELECT variant_get(v, '$.g', 'string') AS g, count(*) AS n, sum(id) AS ids FROM 'data/events/' GROUP BY g ORDER BY g",
    "SELECT variant_get(k.v, '$.name', 'string') AS name, count(*) AS n FROM 'data/events/' e JOIN 'data/keys/' k ON variant_get(e.v, '$.k', 'bigint') = k.key GROUP BY name ORDER BY name",
    "SELECT half, count(*) AS n, sum(variant_get(v, '$.k', 'bigint')) AS k FROM 'data/events/' WHERE half = 1 OR id < 10 GROUP BY half ORDER BY half",
    "SELECT id, to_json(v) AS j FROM 'data/events/' WHERE variant_get(v, '$.k', 'bigint') = 7 ORDER BY id",
];

fn sql(dir: &Path, workers: Option<&[Worker]>, query: &str) -> std::process::Output {
    let mut args = vec!["sql".to_string(), "--format".into(), "json".into()];
    if let Some(workers) = workers {
        args.extend([
            "--workers".into(),
            addresses(workers),
            "--token-file".into(),
            "token".into(),
            // The files are small: split them anyway (DataFusion splits
            // no input of fewer rows than a batch).
            "--set".into(),
            "datafusion.optimizer.repartition_file_min_size=0".into(),
            "--set".into(),
            "datafusion.execution.batch_size=100".into(),
        ]);
    }
    args.push(query.into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    vshred_in(dir, &args)
}

#[test]
fn queries_on_workers_give_the_answers_of_one_process() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    for query in QUERIES {
        let here = sql(dir.path(), None, query);
        assert!(here.status.success(), "{query}: {}", stderr(&here));
        assert!(stdout(&here).lines().count() >= 1, "{query}");
        for cluster in [&workers[..1], &workers[..]] {
            let there = sql(dir.path(), Some(cluster), query);
            assert!(there.status.success(), "{query}: {}", stderr(&there));
            assert_eq!(
                stdout(&there),
                stdout(&here),
                "{query} on {} workers",
                cluster.len()
            );
        }
    }
    // The scan was split: each of the two tasks read its share.
    let explained = sql(
        dir.path(),
        Some(&workers),
        &format!("EXPLAIN ANALYZE {}", QUERIES[0]),
    );
    let plan = stdout(&explained);
    assert!(
        plan.contains("task=0 of 2") && plan.contains("task=1 of 2"),
        "{plan}"
    );
    assert!(plan.contains("row_groups=18,"), "{plan}");
    // The filter travels with the scan to the workers, which run it.
    let explained = sql(
        dir.path(),
        Some(&workers),
        &format!("EXPLAIN ANALYZE {}", QUERIES[5]),
    );
    let plan = stdout(&explained);
    assert_eq!(plan.matches("row_filter=[").count(), 2, "{plan}");
    // Of the 3000 rows read, the 31 whose k is 7 left the scans.
    let leaf = &plan[plan.find("DistributedLeafExec").expect(plan)..];
    assert!(
        leaf.starts_with("DistributedLeafExec:, metrics=[output_rows=31,"),
        "{plan}"
    );
}

/// A limit straight over a scan DataFusion plans as one partition (the
/// default settings, a small table): one task reads it, where each of two
/// tasks kept its own first 20 rows (40). Which 20 rows is the engine's
/// choice, so only their count is compared.
#[test]
fn a_limit_over_a_scan_of_one_partition_holds_on_workers() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let query = "SELECT count(*) AS n FROM (SELECT id FROM (SELECT * FROM 'data/events/' LIMIT 20) WHERE id >= 0)";
    let args = [
        "sql",
        "--format",
        "json",
        "--workers",
        &addresses(&workers),
        "--token-file",
        "token",
        query,
    ];
    let out = vshred_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"n\":20}\n");
}

/// A relative path names the client's file, not a file of the same name
/// under a worker's working directory: the workers read what one process
/// reads.
#[test]
fn a_relative_path_is_the_clients_file_on_the_workers_too() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    // The client works in `data/`, the workers in the directory above:
    // `data/x.parquet` is events 500 to 999 to the client and events 0 to
    // 499 to a worker, both beneath the data root.
    std::fs::copy(dir.path().join("token"), data.join("token")).unwrap();
    std::fs::create_dir(data.join("data")).unwrap();
    std::fs::copy(
        data.join("events/half=1/part-1.parquet"),
        data.join("data/x.parquet"),
    )
    .unwrap();
    std::fs::copy(
        data.join("events/half=0/part-0.parquet"),
        data.join("x.parquet"),
    )
    .unwrap();
    let query = "SELECT count(*) AS n, sum(id) AS ids FROM 'data/x.parquet'";
    let here = sql(&data, None, query);
    assert_eq!(
        stdout(&here),
        "{\"n\":500,\"ids\":374750}\n",
        "{}",
        stderr(&here)
    );
    let there = sql(&data, Some(&workers), query);
    assert_eq!(stdout(&there), stdout(&here), "{}", stderr(&there));
    // The scan ran on the workers.
    let explained = sql(&data, Some(&workers), &format!("EXPLAIN ANALYZE {query}"));
    assert!(
        stdout(&explained).contains("task=0 of 2"),
        "{}",
        stdout(&explained)
    );
}

#[test]
fn a_sessions_vshred_settings_reach_the_workers() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    // Each row's text holds a number of 41 to 44 digits, which only
    // `vshred.inexact_numbers = 'double'` parses (as a double), in an
    // object that gives its key twice, which only
    // `vshred.duplicate_keys = 'last'` accepts.
    let query = "SELECT count(*) AS n FROM 'data/events/' WHERE try_parse_json(concat('{\"a\":1', CAST(id AS VARCHAR), '123456789012345678901234567890123456789,\"a\":2}')) IS NOT NULL";
    let inexact = format!("SET vshred.inexact_numbers = 'double'; {query}");
    let both = format!("SET vshred.duplicate_keys = 'last'; {inexact}");
    for (sql_text, expected) in [
        (query, "{\"n\":0}"),
        (inexact.as_str(), "{\"n\":0}"),
        (both.as_str(), "{\"n\":3000}"),
    ] {
        for cluster in [None, Some(&workers[..])] {
            let out = sql(dir.path(), cluster, sql_text);
            assert!(out.status.success(), "{sql_text}: {}", stderr(&out));
            assert_eq!(
                stdout(&out).trim(),
                expected,
                "{sql_text} on {} workers",
                cluster.map_or(0, <[Worker]>::len)
            );
        }
    }
}

#[test]
fn tables_named_by_url_are_read_from_the_workers_object_store() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let url = |table: &str| format!("'file://{}/{table}'", dir.path().display());
    for query in [QUERIES[0], QUERIES[3]] {
        let here = sql(dir.path(), None, query);
        assert!(here.status.success(), "{query}: {}", stderr(&here));
        let by_url = query
            .replace("'data/events/'", &url("data/events/"))
            .replace("'data/keys/'", &url("data/keys/"));
        assert!(by_url.contains("file://"), "{by_url}");
        let there = sql(dir.path(), Some(&workers), &by_url);
        assert!(there.status.success(), "{by_url}: {}", stderr(&there));
        assert_eq!(stdout(&there), stdout(&here), "{by_url}");
    }
}

#[test]
fn a_request_without_the_token_is_refused_and_logged() {
    let dir = cluster_dir();
    let mut worker = Worker::start(dir.path(), &dir.path().join("data"));
    std::fs::write(dir.path().join("wrong"), "not the cluster's secret\n").unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "--workers",
            &worker.address,
            "--token-file",
            "wrong",
            QUERIES[0],
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let error = stderr(&out);
    assert!(
        error.contains(&format!(
            "worker http://{}/ refused the token",
            worker.address
        )),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
    let mut line = String::new();
    worker.log.read_line(&mut line).unwrap();
    assert!(line.contains("refused a request from 127.0.0.1"), "{line}");
}

#[test]
fn files_outside_the_data_roots_are_refused_symlinks_included() {
    let dir = cluster_dir();
    // The workers may read `data/keys` alone. (Two of them: a query that
    // one worker would run as one task runs here, in the coordinator.)
    let keys = dir.path().join("data/keys");
    let workers = two_workers(dir.path(), &keys);
    let inside = dir.path().join("data/keys/events");
    std::os::unix::fs::symlink(dir.path().join("data/events"), &inside).unwrap();
    let by_url = format!("file://{}/data/events/", dir.path().display());
    for table in ["data/events/", "data/keys/events/", &by_url] {
        // A sum reads the rows (a count would come from the footers).
        let query = format!("SELECT sum(id) FROM '{table}'");
        let out = sql(dir.path(), Some(&workers), &query);
        assert_eq!(out.status.code(), Some(1), "{table}: {}", stdout(&out));
        let error = stderr(&out);
        // Not "Error during planning: ": the coordinator planned it.
        assert!(
            error.starts_with("vshred: refused: a plan names ")
                && error.contains("outside this worker's data roots (worker 127.0.0.1:"),
            "{table}: {error}"
        );
        assert_eq!(error.lines().count(), 1, "{error}");
    }
    let keys = sql(
        dir.path(),
        Some(&workers),
        "SELECT sum(key) AS k FROM 'data/keys/keys.parquet'",
    );
    assert!(keys.status.success(), "{}", stderr(&keys));
    let expected: i64 = (0..97).filter(|k| k % 3 == 0).sum();
    assert_eq!(stdout(&keys), format!("{{\"k\":{expected}}}\n"));
}

/// DataFusion's own scans (a CSV table's) are decoded by datafusion-proto,
/// which checks no path: the workers' stores hold them to the data roots
/// (a worker read `/etc/passwd` as a CSV table).
#[test]
fn a_csv_table_outside_the_data_roots_is_refused_and_one_inside_is_read() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let rows: String = (0..97).map(|k| format!("{k},{}\n", k * 10)).collect();
    std::fs::write(dir.path().join("outside.csv"), format!("key,ten\n{rows}")).unwrap();
    std::fs::write(data.join("inside.csv"), format!("key,ten\n{rows}")).unwrap();
    // A join with the events, whose scan is split among the workers, puts
    // the table's scan in a task of theirs.
    let query = |csv: &str| {
        format!(
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{csv}' OPTIONS ('format.has_header' 'true'); \
             SELECT sum(t.ten) AS s FROM 'data/events/' e JOIN t ON variant_get(e.v, '$.k', 'bigint') = t.key"
        )
    };
    let refused = sql(dir.path(), Some(&workers), &query("outside.csv"));
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let error = stderr(&refused);
    assert!(
        error.contains("outside.csv, which is outside this worker's data roots (worker 127.0.0.1:"),
        "{error}"
    );
    let read = sql(dir.path(), Some(&workers), &query("data/inside.csv"));
    assert!(read.status.success(), "{}", stderr(&read));
    let expected: i64 = (0..3000).map(|i| i % 97 * 10).sum();
    assert_eq!(stdout(&read), format!("{{\"s\":{expected}}}\n"));
}

/// The channel speaks plain HTTP/2: `https://` (which sent the token in
/// the clear) and other schemes are refused before anything is sent.
/// A worker's `--memory-limit` holds its tasks: a grouping that needs
/// more fails naming it, as one process under
/// `datafusion.runtime.memory_limit` does (the coordinator's setting did
/// not reach the workers).
#[test]
fn a_workers_memory_limit_holds_its_tasks() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let limited = |limit: &str| {
        [
            Worker::start_with(dir.path(), &data, &["--memory-limit", limit]),
            Worker::start_with(dir.path(), &data, &["--memory-limit", limit]),
        ]
    };
    let query =
        "SELECT id % 7 AS k, array_agg(to_json(v)) AS a FROM 'data/events/' GROUP BY k ORDER BY k";
    let small = limited("64K");
    let refused = sql(dir.path(), Some(&small), query);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    // Which worker, and what set its size.
    assert!(
        stderr(&refused).contains("Resources exhausted: worker 127.0.0.1:")
            && stderr(&refused)
                .contains("holds its tasks within its --memory-limit of 65536 bytes: "),
        "{}",
        stderr(&refused)
    );
    let ample = limited("1G");
    let answered = sql(dir.path(), Some(&ample), query);
    assert!(answered.status.success(), "{}", stderr(&answered));
    assert_eq!(stdout(&answered).lines().count(), 7);
}

#[test]
fn a_worker_url_of_another_scheme_than_http_is_refused() {
    let dir = cluster_dir();
    for worker in ["https://127.0.0.1:7400", "ftp://127.0.0.1:7400"] {
        let out = vshred_in(
            dir.path(),
            &[
                "sql",
                "--workers",
                worker,
                "--token-file",
                "token",
                "SELECT 1",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stderr(&out),
            format!(
                "vshred: --workers {worker}: a worker is reached by http:// (TLS between machines is not built in)\n"
            )
        );
    }
}

#[test]
fn a_worker_that_is_not_there_is_named() {
    let dir = cluster_dir();
    // A port that was free a moment ago.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "--workers",
            &address,
            "--token-file",
            "token",
            "SELECT 1",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let error = stderr(&out);
    assert!(
        error.contains(&format!("worker http://{address}/ is not reachable")),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_worker_stops_cleanly_on_sigterm() {
    let dir = cluster_dir();
    let worker = Worker::start(dir.path(), &dir.path().join("data"));
    let (status, log) = worker.terminate(1);
    assert!(status.success(), "{status:?}: {log}");
    assert!(log.contains(STOPPING), "{log}");
}

#[test]
fn a_worker_needs_a_token_file_and_a_data_root() {
    let dir = cluster_dir();
    let missing = vshred_in(
        dir.path(),
        &[
            "worker",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            "nope",
            "--data-root",
            "data",
        ],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("nope"), "{}", stderr(&missing));
    // A token that could be guessed, for a worker or for its client.
    std::fs::write(dir.path().join("short"), "\u{feff}secret\n").unwrap();
    for args in [
        &["worker", "--listen", "127.0.0.1:0", "--data-root", "data"][..],
        &["sql", "--workers", "127.0.0.1:1", "SELECT 1"][..],
    ] {
        let short = vshred_in(dir.path(), &[args, &["--token-file", "short"]].concat());
        assert_eq!(short.status.code(), Some(1));
        assert!(
            stderr(&short).contains(
                "short: the token file's first line has 6 characters: a cluster's shared secret takes at least 16"
            ) && !stderr(&short).contains("listening"),
            "{}",
            stderr(&short)
        );
    }
    let no_root = vshred_in(dir.path(), &["worker", "--token-file", "token"]);
    assert_ne!(no_root.status.code(), Some(0));
    assert!(
        stderr(&no_root).contains("--data-root"),
        "{}",
        stderr(&no_root)
    );
    // A root that is not there, or is a file (the worker listened, reading
    // nothing), fails before the worker says it listens.
    for (root, why) in [("nosuch", "No such file"), ("token", "not a directory")] {
        let bad_root = vshred_in(
            dir.path(),
            &[
                "worker",
                "--listen",
                "127.0.0.1:0",
                "--token-file",
                "token",
                "--data-root",
                root,
            ],
        );
        assert_eq!(bad_root.status.code(), Some(1));
        assert!(
            stderr(&bad_root).contains(&format!("data root {root}: {why}"))
                && !stderr(&bad_root).contains("listening"),
            "{}",
            stderr(&bad_root)
        );
    }
}

/// `--token-file` alone was ignored (the query ran in one process), and
/// an empty address said "empty host".
#[test]
fn sql_refuses_a_token_without_workers_and_an_empty_worker() {
    let dir = cluster_dir();
    let alone = vshred_in(dir.path(), &["sql", "--token-file", "token", "SELECT 1"]);
    assert_eq!(alone.status.code(), Some(1));
    assert!(
        stderr(&alone).contains("required arguments were not provided: --workers"),
        "{}",
        stderr(&alone)
    );
    for workers in ["", "127.0.0.1:1,,127.0.0.1:2"] {
        let empty = vshred_in(
            dir.path(),
            &[
                "sql",
                "--workers",
                workers,
                "--token-file",
                "token",
                "SELECT 1",
            ],
        );
        assert_eq!(empty.status.code(), Some(1));
        assert!(
            stderr(&empty).contains("--workers: an empty address (give HOST:PORT"),
            "{}",
            stderr(&empty)
        );
    }
}

/// `query` running on `workers`, with the settings that keep its work
/// on them.
fn endless(dir: &Path, workers: &[Worker], query: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args([
            "sql",
            "--workers",
            &addresses(workers),
            "--token-file",
            "token",
        ])
        .args(["--set", "datafusion.optimizer.repartition_file_min_size=0"])
        // The series stays the join's broadcast side, the scan its
        // probe: the work is the workers'.
        .args(["--set", "datafusion.optimizer.join_reordering=false"])
        .args(["--set", "datafusion.execution.batch_size=100", query])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `query` on two workers, kills the second two seconds in, and
/// returns the query's error and how long after the kill it came.
fn kill_a_worker_during(query: &str) -> (String, String, Duration) {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let mut workers = two_workers(dir.path(), &data);
    let mut sql = endless(dir.path(), &workers, query);
    // Until the worker to be killed has computed for half a second (of
    // CPU time): its task is under way, past the coordinator's check of
    // the workers, however slow the machine.
    computed(&workers[1], 50);
    assert!(
        sql.try_wait().unwrap().is_none(),
        "the query ended before the kill"
    );
    workers[1].child.kill().unwrap();
    let killed = Instant::now();
    let status = loop {
        if let Some(status) = sql.try_wait().unwrap() {
            break status;
        }
        if killed.elapsed() > Duration::from_secs(60) {
            let _ = sql.kill();
            panic!("no answer 60 s after a worker was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let after = killed.elapsed();
    let out = sql.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(1), "{}", stdout(&out));
    (stderr(&out).to_string(), workers[1].address.clone(), after)
}

/// Minutes of work for the workers if nothing stops it: each of 3000 rows
/// against 2,000,000. (Against 200,000, an idle machine finished an
/// orphaned task within the 10 s a stopping worker waits for it.)
const ENDLESS: &str = "FROM generate_series(1, 2000000) g CROSS JOIN 'data/events/' e";

#[test]
fn a_worker_killed_mid_query_is_a_one_line_error_naming_it() {
    let (error, killed, after) =
        kill_a_worker_during(&format!("SELECT count(*), sum(id * g.value) {ENDLESS}"));
    assert_eq!(error.lines().count(), 1, "{error}");
    // Tonic's status says what it is without its code before it.
    assert!(
        error.starts_with(&format!(
            "vshred: worker http://{killed}/ stopped answering: "
        )),
        "{error}"
    );
    assert!(after < Duration::from_secs(60), "{after:?}");
}

#[test]
fn a_worker_killed_mid_shuffle_is_a_one_line_error() {
    let (error, _, after) = kill_a_worker_during(&format!(
        "SELECT (id * g.value) % 1000 AS m, count(*) AS n {ENDLESS} GROUP BY m ORDER BY m"
    ));
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.starts_with("vshred: worker http://"), "{error}");
    assert!(error.contains("stopped answering"), "{error}");
    assert!(after < Duration::from_secs(60), "{after:?}");
}

/// The figure `name=N` of an `EXPLAIN ANALYZE`, added up over the nodes
/// that show it.
fn figure(plan: &str, name: &str) -> u64 {
    plan.match_indices(&format!("{name}="))
        .map(|(at, m)| {
            let digits: String = plan[at + m.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<u64>().unwrap()
        })
        .sum()
}

#[test]
fn a_joins_runtime_filter_prunes_on_the_workers_as_in_one_process() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let ordered: String = (0..3000)
        .map(|i| format!("{{\"id\":{i},\"v\":{{\"x\":{i}}}}}\n"))
        .collect();
    // Shredded whatever it costs: in row groups of 200 rows, `auto`
    // leaves `x` unshredded, which is smaller so.
    encoded(
        dir.path(),
        "data/ordered/o.parquet",
        &ordered,
        &[
            "--variant-field",
            "v",
            "--row-group-rows",
            "200",
            "--shred",
            "spark",
        ],
    );
    encoded(
        dir.path(),
        "data/pick/p.parquet",
        "{\"v\":{\"x\":5}}\n{\"v\":{\"x\":2990}}\n",
        &["--variant-field", "v"],
    );
    let workers = two_workers(dir.path(), &data);
    let query = "SELECT count(*) AS n, sum(o.id) AS s FROM 'data/ordered/' o JOIN 'data/pick/' p ON variant_get(o.v, '$.x', 'bigint') = variant_get(p.v, '$.x', 'bigint')";
    let here = sql(dir.path(), None, &format!("EXPLAIN ANALYZE {query}"));
    let there = sql(
        dir.path(),
        Some(&workers),
        &format!("EXPLAIN ANALYZE {query}"),
    );
    let (here, there) = (stdout(&here), stdout(&there));
    assert!(there.contains("task=1 of 2"), "{there}");
    // 13 of the 15 row groups hold neither key.
    assert_eq!(
        figure(here, "row_groups_pruned_runtime_filter"),
        13,
        "{here}"
    );
    assert_eq!(
        figure(there, "row_groups_pruned_runtime_filter"),
        13,
        "{there}"
    );
    let answer = sql(dir.path(), Some(&workers), query);
    assert_eq!(stdout(&answer).trim(), r#"{"n":2,"s":2995}"#);
}

#[test]
fn copy_to_a_directory_is_written_by_the_workers_each_task_its_files() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let copy = sql(
        dir.path(),
        Some(&workers),
        "COPY (SELECT id, v FROM 'data/events/') TO 'data/copied/'",
    );
    assert!(copy.status.success(), "{}", stderr(&copy));
    assert_eq!(stdout(&copy).trim(), r#"{"count":3000}"#);
    let mut names: Vec<String> = std::fs::read_dir(data.join("copied"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    // `{write}_{task}_{partition}.parquet`: both tasks wrote.
    let task_of = |name: &str| name.rsplit('_').nth(1).map(str::to_string);
    let tasks: std::collections::BTreeSet<_> = names.iter().filter_map(|n| task_of(n)).collect();
    assert_eq!(
        tasks.into_iter().collect::<Vec<_>>(),
        ["0", "1"],
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.ends_with(".parquet")), "{names:?}");
    // Value for value what was read.
    let rows = "SELECT id, to_json(v) AS v FROM '{}' ORDER BY id";
    let back = sql(dir.path(), None, &rows.replace("{}", "data/copied/"));
    let source = sql(dir.path(), None, &rows.replace("{}", "data/events/"));
    assert!(back.status.success(), "{}", stderr(&back));
    assert_eq!(stdout(&back).lines().count(), 3000);
    assert_eq!(stdout(&back), stdout(&source));
    // No rows: no file, nor a directory, as in one process (the
    // directory was left, empty).
    let none = sql(
        dir.path(),
        Some(&workers),
        "COPY (SELECT id, v FROM 'data/events/' WHERE id < 0) TO 'data/none/'",
    );
    assert!(none.status.success(), "{}", stderr(&none));
    assert_eq!(stdout(&none).trim(), r#"{"count":0}"#);
    assert!(!data.join("none").exists());
    // A limit holds over all the tasks (each wrote every row it read).
    for (query, rows) in [
        ("SELECT id, v FROM 'data/events/' LIMIT 10", 10),
        (
            "SELECT id, v FROM 'data/events/' WHERE id % 7 = 0 LIMIT 5",
            5,
        ),
        ("SELECT id, v FROM 'data/events/' LIMIT 10 OFFSET 5", 10),
        ("SELECT id, v FROM 'data/events/' ORDER BY id LIMIT 7", 7),
    ] {
        let target = format!("data/limited-{}/", query.len());
        let copy = sql(
            dir.path(),
            Some(&workers),
            &format!("COPY ({query}) TO '{target}'"),
        );
        assert!(copy.status.success(), "{}", stderr(&copy));
        assert_eq!(
            stdout(&copy).trim(),
            format!(r#"{{"count":{rows}}}"#),
            "{query}"
        );
        let back = sql(
            dir.path(),
            None,
            &format!("SELECT count(*) AS n FROM '{target}'"),
        );
        assert_eq!(
            stdout(&back).trim(),
            format!(r#"{{"n":{rows}}}"#),
            "{query}"
        );
    }
    // Outside the workers' roots: refused, nothing made.
    let outside = dir.path().join("elsewhere");
    let refused = sql(
        dir.path(),
        Some(&workers),
        &format!(
            "COPY (SELECT id, v FROM 'data/events/') TO '{}/'",
            outside.display()
        ),
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("outside this worker's data roots"),
        "{}",
        stderr(&refused)
    );
    assert!(!outside.exists());
}

/// Two runs that began one new dataset in one directory at the same time
/// both put their files there, every row twice. The files go into place
/// under the directory's writers' lock, held here while another writer's
/// file appears: the `COPY` fails, and leaves nothing of its own.
#[test]
fn a_copy_whose_new_directory_another_writer_filled_meanwhile_fails() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let out = data.join("raced");
    std::fs::create_dir(&out).unwrap();
    let held = std::fs::File::open(&out).unwrap();
    held.lock().unwrap();
    let copy = endless(
        dir.path(),
        &workers,
        "COPY (SELECT id, v FROM 'data/events/') TO 'data/raced/'",
    );
    let names = || -> Vec<String> {
        std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    };
    // The tasks stage their files under hidden names.
    let start = Instant::now();
    while !names().iter().any(|n| n.starts_with('.')) {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing staged");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(out.join("theirs.parquet"), b"").unwrap();
    held.unlock().unwrap();
    let copy = copy.wait_with_output().unwrap();
    assert_eq!(copy.status.code(), Some(1), "{}", stderr(&copy));
    assert!(
        stderr(&copy).contains("another writer: another run wrote theirs.parquet here while this one began a new dataset"),
        "{}",
        stderr(&copy)
    );
    assert_eq!(names(), ["theirs.parquet"]);
}

/// A distributed `COPY` that fails on one task leaves no file from any:
/// the other tasks stop with the query, and what they had written goes
/// (they went on writing after the client had exited, and their files
/// appeared there seconds later).
#[test]
fn a_copy_that_fails_on_one_worker_leaves_no_file_from_the_others() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    // Rows enough to write for a while; the first row of a file fails.
    let copy = endless(
        dir.path(),
        &workers,
        "COPY (SELECT e.id, e.v, g.value, CAST(CASE WHEN e.id = 0 AND g.value = 1 THEN 'x' ELSE '1' END AS INT) AS one \
         FROM generate_series(1, 1000) g CROSS JOIN 'data/events/' e) TO 'data/copied/'",
    );
    let out = copy.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("'x'"), "{}", stderr(&out));
    // Until neither worker has computed for three seconds (one second
    // without a tick may be a loaded machine's pause).
    let started = Instant::now();
    let mut ticks = workers.each_ref().map(cpu_ticks);
    let mut idle = 0;
    while idle < 3 {
        std::thread::sleep(Duration::from_secs(1));
        let now = workers.each_ref().map(cpu_ticks);
        idle = if now == ticks { idle + 1 } else { 0 };
        ticks = now;
        assert!(started.elapsed() < Duration::from_secs(120), "still busy");
    }
    let left: Vec<_> = std::fs::read_dir(data.join("copied"))
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A distributed `COPY` whose one task fails after the other has
/// written its file leaves neither: the tasks' files are renamed into
/// place by the coordinator once all are written (the finished task's
/// file stayed, a directory of some of the rows that read as a whole
/// table).
#[test]
fn a_copy_that_fails_late_on_one_worker_leaves_no_file_of_a_task_that_finished() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    // Ids 0 and 2999 are in the first and the last file, read by two
    // partitions (of one task or of two): the one with 0 writes 10 rows
    // and ends, the one with 2999 writes 200,000 and fails at the last.
    let copy = endless(
        dir.path(),
        &workers,
        "COPY (SELECT e.id, e.v, g.value, CAST(CASE WHEN e.id = 2999 AND g.value = 200000 THEN 'x' ELSE '1' END AS INT) AS one \
         FROM generate_series(1, 200000) g CROSS JOIN 'data/events/' e \
         WHERE e.id = 2999 OR (e.id = 0 AND g.value <= 10)) TO 'data/copied/'",
    );
    let out = copy.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("'x'"), "{}", stderr(&out));
    // Nor the directory it made (an empty one stayed).
    assert!(!data.join("copied").exists());
    // The same query without the failure writes both tasks' files.
    let copy = endless(
        dir.path(),
        &workers,
        "COPY (SELECT e.id, e.v, g.value FROM generate_series(1, 200000) g CROSS JOIN 'data/events/' e \
         WHERE e.id = 2999 OR (e.id = 0 AND g.value <= 10)) TO 'data/copied/'",
    );
    let out = copy.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("200010"), "{}", stdout(&out));
    let mut names: Vec<String> = std::fs::read_dir(data.join("copied"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| !n.starts_with('.') && n.ends_with(".parquet")),
        "{names:?}"
    );
}

/// The CPU time a worker has had, in clock ticks (hundredths of a second).
fn cpu_ticks(worker: &Worker) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", worker.child.id())).unwrap();
    // Fields 14 and 15, user and system time, after the command's name
    // in parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Returns once `worker` has computed `ticks` more of CPU time.
fn computed(worker: &Worker, ticks: u64) {
    let started = Instant::now();
    let computing = cpu_ticks(worker) + ticks;
    while cpu_ticks(worker) < computing {
        assert!(started.elapsed() < Duration::from_secs(60), "no work");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two workers and a query of minutes on them, the first worker's task
/// under way (it has computed for a second of CPU time).
fn busy_cluster() -> (tempfile::TempDir, [Worker; 2], Child) {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let sql = endless(
        dir.path(),
        &workers,
        &format!("SELECT count(*), sum(id * g.value) {ENDLESS}"),
    );
    computed(&workers[0], 100);
    (dir, workers, sql)
}

#[test]
fn a_stopping_worker_waits_for_an_orphaned_task_only_its_grace() {
    let (_dir, workers, mut sql) = busy_cluster();
    // The coordinator goes; its tasks on the workers are left computing.
    sql.kill().unwrap();
    sql.wait().unwrap();
    let mut workers = workers.into_iter();
    let worker = workers.next().unwrap();
    let started = Instant::now();
    let (status, log) = worker.terminate(1);
    let took = started.elapsed();
    // The task is either still computing, and the worker stops once its
    // grace is over, saying so, or it ended with its coordinator's
    // connection (which of the two depends on when the worker notices
    // the connection gone); either way the worker stops within its grace.
    // The grace, 10 s, and time for a loaded machine to end a process.
    assert!(took < Duration::from_secs(20), "{took:?}: {log}");
    if log.contains("vshred worker: stopped with tasks unfinished after 10 s") {
        assert!(took >= Duration::from_secs(10), "{took:?}: {log}");
        // As SIGTERM ends a process that does not finish its work.
        assert_eq!(status.code(), Some(143), "{log}");
    } else {
        assert!(status.success(), "{status:?}: {log}");
        assert!(log.ends_with(STOPPING), "{log}");
    }
}

/// What a worker says on its first signal.
const STOPPING: &str = "vshred worker: stopping (a second signal stops it at once)\n";

/// A second signal ends a worker whose task is under way at once, where
/// it was ignored for the 10 s of grace.
#[test]
fn a_second_signal_stops_a_busy_worker_at_once() {
    let (_dir, workers, mut sql) = busy_cluster();
    let mut workers = workers.into_iter();
    let started = Instant::now();
    let (status, log) = workers.next().unwrap().terminate(2);
    let took = started.elapsed();
    let _ = sql.kill();
    let _ = sql.wait();
    assert_eq!(status.code(), Some(143), "{log}");
    assert!(
        log.ends_with(&format!(
            "{STOPPING}vshred worker: stopped at once, with tasks unfinished\n"
        )),
        "{log}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}: {log}");
}

/// A value that does not convert on a worker is named as in one process:
/// the file, its row and the way out, without the "External error: " that
/// DataFusion puts before an error the distributed engine relays.
#[test]
fn a_conversion_failure_on_a_worker_reads_as_in_one_process() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    let query = "SELECT count(*) AS n FROM 'data/events/' WHERE variant_get(v, '$.g', 'int') > 0";
    for cluster in [None, Some(&workers[..])] {
        let out = sql(dir.path(), cluster, query);
        assert_eq!(out.status.code(), Some(1));
        let error = stderr(&out);
        assert!(
            error.starts_with("vshred: ")
                && !error.contains("External error")
                && error.contains(".parquet: conversion failed at row ")
                && error.contains(
                    "does not convert to int32 (try_variant_get or TRY_CAST gives null instead)"
                ),
            "{error}"
        );
    }
}

/// Integer arithmetic and sums past their type fail on a worker as in one
/// process (the workers have vshred's `sum` and checked arithmetic, not
/// DataFusion's, which wrap).
#[test]
fn integer_overflow_on_a_worker_reads_as_in_one_process() {
    let dir = cluster_dir();
    let data = dir.path().join("data");
    let workers = two_workers(dir.path(), &data);
    for (query, error) in [
        (
            "SELECT variant_get(v, '$.g', 'string') AS g, sum(id * 3074457345618258) AS s FROM 'data/events/' GROUP BY g",
            "integer overflow: sum(",
        ),
        (
            "SELECT max(id * 3074457345618258000) AS m FROM 'data/events/'",
            " * 3074457345618258000 does not fit Int64",
        ),
    ] {
        for cluster in [None, Some(&workers[..])] {
            let out = sql(dir.path(), cluster, query);
            assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
            assert!(stderr(&out).contains(error), "{query}: {}", stderr(&out));
        }
    }
}
