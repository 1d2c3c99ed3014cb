//! A Variant scan and a write in a task's plan: what is sent comes back
//! the same, and what a worker receives is checked, whatever the bytes: no
//! panic, an error for anything malformed, oversized, too deeply nested or
//! outside its data roots.

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use vshred::dataset::Dataset;
use vshred::encode::{EncodeOptions, encode};
use vshred::get::OnFailure;
use vshred::parquet::{Projected, Projection};
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;
use vshred_datafusion::copy::CopyOptions;
use vshred_datafusion::scan::VariantScanExec;
use vshred_datafusion::write_partitions::WritePartitionsExec;
use vshred_distributed::codec::VariantCodec;

fn file(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let text = "{\"a\": 1, \"b\": {\"c\": \"x\"}}\n{\"a\": 2, \"b\": {\"c\": \"y\"}}\n";
    encode(
        &mut text.as_bytes(),
        &path,
        &EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    path
}

fn scan(files: Vec<std::path::PathBuf>, filter: Option<&str>) -> VariantScanExec {
    let dataset = Arc::new(Dataset::from_files(files));
    let projection = Projection {
        outputs: vec![
            ("whole".into(), Projected::Column("v".into())),
            ("text".into(), Projected::Json("v".into())),
            (
                "b".into(),
                Projected::Path {
                    column: "v".into(),
                    path: "$.b".parse().unwrap(),
                    as_type: ShreddingSchema::parse_type_name(
                        "struct<c:string,`odd name`:decimal(9,2)>",
                    )
                    .unwrap(),
                    on_failure: OnFailure::Error,
                },
            ),
            (
                "a".into(),
                Projected::Path {
                    column: "v".into(),
                    path: "$.a".parse().unwrap(),
                    as_type: ShreddingSchema::Int64,
                    on_failure: OnFailure::Null,
                },
            ),
            (
                "entries".into(),
                Projected::Explode {
                    column: "v".into(),
                    outer: true,
                },
            ),
        ],
        filter: filter.map(|f| ("v".into(), Predicate::parse(f).unwrap())),
        ..Projection::default()
    };
    let schema = dataset.projection_schema(&projection).unwrap();
    VariantScanExec::from_parts(dataset, projection, schema, 3, (1, 4)).unwrap()
}

#[test]
fn a_scan_comes_back_as_it_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    let files = vec![file(dir.path(), "a.parquet"), file(dir.path(), "b.parquet")];
    let sent = scan(
        files,
        Some("$.a >= 2 and ($.b.c == \"y\" or $.a in (5, 7))"),
    );
    let codec = VariantCodec::with_data_roots(&[dir.path().to_path_buf()]).unwrap();
    let bytes = codec.encode_scan(&sent).unwrap();
    let received = codec.decode_scan(&bytes, &task(0, 1)).unwrap();
    let (dataset, projection, partitions, task) = received.parts();
    let (sent_dataset, sent_projection, ..) = sent.parts();
    assert_eq!(dataset.files(), sent_dataset.files());
    assert_eq!(projection, sent_projection);
    assert_eq!((partitions, task), (3, (1, 4)));
    assert_eq!(
        datafusion::physical_plan::ExecutionPlan::schema(&received),
        datafusion::physical_plan::ExecutionPlan::schema(&sent)
    );
}

#[test]
fn a_tasks_share_comes_back_with_its_numbering() {
    let dir = tempfile::tempdir().unwrap();
    let files = (0..5)
        .map(|i| file(dir.path(), &format!("{i}.parquet")))
        .collect();
    // One row group a file; task 1 of 2 (of 3 partitions each) holds
    // shares 1, 3 and 5 of 6: the files of row groups 1 and 3.
    let whole = scan(files, None);
    let sent = whole.for_task(1, 2).unwrap();
    let codec = VariantCodec::with_data_roots(&[dir.path().to_path_buf()]).unwrap();
    let received = codec
        .decode_scan(&codec.encode_scan(&sent).unwrap(), &task(1, 2))
        .unwrap();
    let dataset = received.parts().0;
    let planned = whole.parts().0.files();
    assert_eq!(dataset.files(), [planned[1].clone(), planned[3].clone()]);
    assert_eq!(dataset.numbering(), Some(&[1, 3][..]));
    assert_eq!(received.parts().3, (1, 2));
    // With the files' sizes: a worker whose file is not the planner's
    // (here rewritten with another row) fails naming it, where it read
    // other row groups than the plan's.
    let size = |i: usize| {
        std::fs::metadata(dir.path().join(format!("{i}.parquet")))
            .unwrap()
            .len()
    };
    let sizes: Vec<u64> = dataset
        .expected_files()
        .unwrap()
        .iter()
        .map(|f| f.size)
        .collect();
    assert_eq!(sizes, [size(1), size(3)]);
    dataset.rows().unwrap();
    let other = "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n";
    let path = dir.path().join("3.parquet");
    encode(
        &mut other.as_bytes(),
        &path,
        &EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let received = codec
        .decode_scan(&codec.encode_scan(&sent).unwrap(), &task(1, 2))
        .unwrap();
    let error = received.parts().0.rows().unwrap_err().to_string();
    assert!(
        error.contains("3.parquet: incompatible files: the file is ")
            && error.contains("bytes where the query was planned: every worker must see the same files at the same paths"),
        "{error}"
    );
    // A file of the same size with other values has another footer (its
    // statistics): refused too, where the worker's size alone read other
    // rows without a word.
    let path = dir.path().join("4.parquet");
    let same_size = "{\"a\": 3, \"b\": {\"c\": \"z\"}}\n{\"a\": 4, \"b\": {\"c\": \"w\"}}\n";
    encode(
        &mut same_size.as_bytes(),
        &path,
        &EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(size(4), sizes[1], "the test's rewrite keeps the size");
    let sent = scan(vec![path.clone()], None).for_task(0, 1).unwrap();
    let sent_files = sent.parts().0.expected_files().unwrap().to_vec();
    file(dir.path(), "4.parquet");
    let received = codec
        .decode_scan(&codec.encode_scan(&sent).unwrap(), &task(0, 1))
        .unwrap();
    assert_eq!(
        received.parts().0.expected_files().unwrap(),
        &sent_files[..]
    );
    let error = received.parts().0.rows().unwrap_err().to_string();
    assert!(
        error.contains("4.parquet: incompatible files: the file's footer here is not the one where the query was planned (the file is ")
            && error.contains("every worker must see the same files at the same paths"),
        "{error}"
    );
}

/// Row groups go round robin over the tasks before their partitions:
/// six files of a row group each, in three tasks of three partitions,
/// give each task two files (numbered by task first, they went 3, 3, 0).
#[test]
fn every_task_gets_row_groups_while_there_are_as_many_as_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let files = (0..6)
        .map(|i| file(dir.path(), &format!("{i}.parquet")))
        .collect();
    let whole = scan(files, None);
    let shares: Vec<Vec<usize>> = (0..3)
        .map(|t| {
            let share = whole.for_task(t, 3).unwrap();
            share.parts().0.numbering().unwrap().to_vec()
        })
        .collect();
    assert_eq!(shares, [vec![0, 3], vec![1, 4], vec![2, 5]]);
}

#[test]
fn a_worker_refuses_files_outside_its_roots_symlinks_included() {
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("inside");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let secret = file(&outside, "secret.parquet");
    let link = inside.join("link.parquet");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let codec = VariantCodec::with_data_roots(std::slice::from_ref(&inside)).unwrap();
    for path in [secret, link, inside.join("../outside/secret.parquet")] {
        let bytes = VariantCodec::new()
            .encode_scan(&scan(vec![path.clone()], None))
            .unwrap();
        let error = codec
            .decode_scan(&bytes, &task(0, 1))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("outside this worker's data roots"),
            "{}: {error}",
            path.display()
        );
    }
    let ok = file(&inside, "ok.parquet");
    let bytes = VariantCodec::new()
        .encode_scan(&scan(vec![ok], None))
        .unwrap();
    codec.decode_scan(&bytes, &task(0, 1)).unwrap();
}

/// The message of `bytes` (their JSON) with `edit` applied, reframed.
#[tokio::test]
async fn a_scan_of_a_store_reads_from_the_workers_store_beneath_its_url_roots() {
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion::object_store::memory::InMemory;
    use datafusion::object_store::{ObjectStoreExt, PutPayload};
    use vshred_datafusion::store::StoreFiles;

    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(file(dir.path(), "a.parquet")).unwrap();
    let memory = Arc::new(InMemory::new());
    for name in ["data/a.parquet", "other/a.parquet"] {
        memory
            .put(&name.into(), PutPayload::from(bytes.clone()))
            .await
            .unwrap();
    }
    let url = ObjectStoreUrl::parse("memory://").unwrap();
    let context = Arc::new(task(0, 1));
    context
        .runtime_env()
        .register_object_store(url.as_ref(), memory.clone());
    let scan_of = |name: &str| {
        let storage = Arc::new(StoreFiles::new(memory.clone(), &url));
        let dataset = Dataset::find_in(Path::new(name), storage).unwrap();
        let projection = Projection {
            outputs: vec![("text".into(), Projected::Json("v".into()))],
            ..Projection::default()
        };
        let schema = dataset.projection_schema(&projection).unwrap();
        VariantScanExec::new(Arc::new(dataset), projection, schema)
    };
    let codec = VariantCodec::with_data_roots(&["memory:///data/".into()]).unwrap();
    let bytes = codec.encode_scan(&scan_of("memory:///data/")).unwrap();
    let received = codec.decode_scan(&bytes, &context).unwrap();
    let batches: Vec<_> = datafusion::physical_plan::collect(Arc::new(received), context.clone())
        .await
        .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(text.contains(r#"{"a":2,"b":{"c":"y"}}"#), "{text}");
    // Outside the roots, by name or by `..`, or in a store the worker has
    // not registered: refused.
    let outside = codec.encode_scan(&scan_of("memory:///other/")).unwrap();
    let climbing = edited(&outside, |m| {
        m["files"][0] = "memory:///data/%2E%2E/other/a.parquet".into()
    });
    for (bytes, expected) in [
        (
            outside,
            "memory:///other/a.parquet, which is outside this worker's data roots",
        ),
        (
            climbing,
            "memory:///data/%2E%2E/other/a.parquet, which is outside",
        ),
    ] {
        let error = codec.decode_scan(&bytes, &context).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
    }
    let elsewhere = VariantCodec::with_data_roots(&["memory:///".into()]).unwrap();
    let error = elsewhere
        .decode_scan(
            &codec.encode_scan(&scan_of("memory:///data/")).unwrap(),
            &task(0, 1),
        )
        .unwrap_err()
        .to_string();
    assert!(error.contains("no object store for memory:///"), "{error}");
}

fn edited(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let length = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    let mut message: serde_json::Value = serde_json::from_slice(&bytes[4..4 + length]).unwrap();
    edit(&mut message);
    let json = serde_json::to_vec(&message).unwrap();
    let mut out = (json.len() as u32).to_le_bytes().to_vec();
    out.extend(json);
    out.extend_from_slice(&bytes[4 + length..]);
    out
}

#[test]
fn crafted_counts_and_nesting_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sent = scan(vec![file(dir.path(), "a.parquet")], None);
    let codec = VariantCodec::with_data_roots(&[dir.path().to_path_buf()]).unwrap();
    let bytes = codec.encode_scan(&sent).unwrap();
    let nested = format!("{}$.a == 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "partitions",
            edited(&bytes, |m| m["partitions"] = 1u64.wrapping_shl(40).into()),
        ),
        (
            "no partitions",
            edited(&bytes, |m| m["partitions"] = 0.into()),
        ),
        (
            "task",
            edited(&bytes, |m| m["task"] = serde_json::json!([4, 4])),
        ),
        (
            "tasks",
            edited(&bytes, |m| m["task"] = serde_json::json!([0, 1u64 << 40])),
        ),
        (
            "no files",
            edited(&bytes, |m| m["files"] = serde_json::json!([])),
        ),
        ("version", edited(&bytes, |m| m["version"] = 99.into())),
        (
            "sizes of other files",
            edited(&bytes, |m| {
                m["expected_files"] = serde_json::json!([[1, null], [2, 7], [3, null]])
            }),
        ),
        (
            "directory column type",
            edited(&bytes, |m| {
                m["hive"] = serde_json::json!(["/d", [["k", "date"]]])
            }),
        ),
        (
            "directory columns twice",
            edited(&bytes, |m| {
                m["hive"] = serde_json::json!(["/d", [["k", "int64"], ["k", "string"]]])
            }),
        ),
        (
            "no directory columns",
            edited(&bytes, |m| m["hive"] = serde_json::json!(["/d", []])),
        ),
        (
            "filter",
            edited(&bytes, |m| m["filter"] = serde_json::json!(["v", nested])),
        ),
        (
            "type",
            edited(&bytes, |m| {
                m["outputs"][2]["as_type"] =
                    format!("{}bigint{}", "array<".repeat(5000), ">".repeat(5000)).into()
            }),
        ),
        (
            "outputs",
            edited(&bytes, |m| {
                m["outputs"]
                    .as_array_mut()
                    .unwrap()
                    .pop()
                    .map(drop)
                    .unwrap()
            }),
        ),
        ("length", {
            let mut b = bytes.clone();
            b[..4].copy_from_slice(&u32::MAX.to_le_bytes());
            b
        }),
        ("short", bytes[..2].to_vec()),
        ("schema", bytes[..bytes.len() - 100].to_vec()),
    ];
    for (what, bytes) in cases {
        let error = codec
            .decode_scan(&bytes, &task(0, 1))
            .unwrap_err()
            .to_string();
        assert!(error.contains("refused"), "{what}: {error}");
    }
}

/// The bytes of a sent scan. Its file is gone by then: decoding reads only
/// the bytes, and a static's directory would never be removed.
fn sent_bytes() -> &'static Vec<u8> {
    static SENT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SENT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let sent = scan(vec![file(dir.path(), "a.parquet")], Some("$.a > 1"));
        let bytes = VariantCodec::new().encode_scan(&sent).unwrap();
        drop(dir);
        // Unchanged, they decode: the changes below reach past the checks.
        VariantCodec::new()
            .decode_scan(&bytes, &task(0, 1))
            .unwrap();
        bytes
    })
}

/// The bytes of a scan sent with a row filter, `a@3 IS NOT NULL AND a@3 >
/// 2`, its file gone as [`sent_bytes`]'s is.
fn sent_with_row_filter() -> &'static Vec<u8> {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion::physical_expr::expressions::{BinaryExpr, Column, IsNotNullExpr, lit};
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    static SENT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SENT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let a = Arc::new(Column::new("a", 3)) as Arc<dyn PhysicalExpr>;
        let filter = BinaryExpr::new(
            Arc::new(IsNotNullExpr::new(a.clone())),
            Operator::And,
            Arc::new(BinaryExpr::new(a, Operator::Gt, lit(2i64))),
        );
        let sent = scan(vec![file(dir.path(), "a.parquet")], None)
            .with_row_filter(Some(Arc::new(filter)))
            .unwrap();
        let mut bytes = Vec::new();
        VariantCodec::new()
            .try_encode(
                Arc::new(sent),
                &mut bytes,
                &DefaultPhysicalProtoConverter {},
            )
            .unwrap();
        drop(dir);
        // Unchanged, they decode, the filter with them.
        let received = VariantCodec::new()
            .try_decode(&bytes, &[], &task(0, 1), &DefaultPhysicalProtoConverter {})
            .unwrap();
        let received = received.downcast_ref::<VariantScanExec>().unwrap();
        assert!(received.row_filter().is_some());
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes, and any change to a sent scan's bytes: an answer or an
    /// error, never a panic.
    #[test]
    fn any_bytes_are_an_error_or_a_scan(
        noise in proptest::collection::vec(any::<u8>(), 0..600),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let codec = VariantCodec::new();
        let _ = codec.decode_scan(&noise, &task(0, 1));
        let mut bytes = sent_bytes().clone();
        for (at, byte) in flips {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        let _ = codec.decode_scan(&bytes, &task(0, 1));
    }

    /// Any change to the bytes of a scan sent with a row filter (the
    /// filter's protobuf among them): an answer or an error, never a panic.
    #[test]
    fn any_change_to_a_row_filter_is_an_error_or_a_scan(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
        let mut bytes = sent_with_row_filter().clone();
        for (at, byte) in flips {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        let codec = VariantCodec::new();
        let _ = codec.try_decode(&bytes, &[], &task(0, 1), &DefaultPhysicalProtoConverter {});
    }

    /// Likewise for a write.
    #[test]
    fn any_bytes_are_an_error_or_a_write(
        noise in proptest::collection::vec(any::<u8>(), 0..300),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let (input, sent) = sent_write();
        let codec = VariantCodec::new();
        let _ = codec.decode_write(&noise, input.clone(), &task(0, 1));
        let mut bytes = sent.clone();
        for (at, byte) in flips {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        let _ = codec.decode_write(&bytes, input.clone(), &task(0, 1));
    }
}

/// A write's input and bytes, its files gone as a sent scan's are.
fn sent_write() -> &'static (Arc<dyn datafusion::physical_plan::ExecutionPlan>, Vec<u8>) {
    type Sent = (Arc<dyn datafusion::physical_plan::ExecutionPlan>, Vec<u8>);
    static SENT: std::sync::OnceLock<Sent> = std::sync::OnceLock::new();
    SENT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let sent = write(dir.path(), &[("shred", "none"), ("sample_rows", "10")]);
        let input = datafusion::physical_plan::ExecutionPlan::children(&sent)[0].clone();
        let bytes = VariantCodec::new().encode_write(&sent).unwrap();
        drop(dir);
        VariantCodec::new()
            .decode_write(&bytes, input.clone(), &task(0, 1))
            .unwrap();
        (input, bytes)
    })
}

fn write(dir: &Path, options: &[(&str, &str)]) -> WritePartitionsExec {
    let input = Arc::new(scan(vec![file(dir, "in.parquet")], None));
    let options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    WritePartitionsExec::new(
        input,
        dir.join("out/more"),
        "w1".into(),
        CopyOptions::parse(options).unwrap(),
    )
}

/// A task context as a worker's, task `index` of `count`.
fn task(index: usize, count: usize) -> datafusion::execution::TaskContext {
    let config = datafusion::prelude::SessionConfig::new().with_extension(Arc::new(
        datafusion_distributed::DistributedTaskContext {
            task_index: index,
            task_count: count,
        },
    ));
    datafusion::execution::TaskContext::default().with_session_config(config)
}

#[test]
fn a_write_comes_back_with_its_task_in_its_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let sent = write(
        dir.path(),
        &[
            ("shred", "spark"),
            ("compression", "zstd(3)"),
            ("decimal", "flba"),
        ],
    );
    let codec = VariantCodec::with_data_roots(&[dir.path().to_path_buf()]).unwrap();
    let bytes = codec.encode_write(&sent).unwrap();
    let input = datafusion::physical_plan::ExecutionPlan::children(&sent)[0].clone();
    let received = codec.decode_write(&bytes, input, &task(3, 4)).unwrap();
    let (dir_back, prefix, options) = received.parts();
    assert_eq!(dir_back, sent.parts().0);
    assert_eq!(prefix, "w1_3");
    assert_eq!(options.given(), sent.parts().2.given());
}

#[test]
fn a_worker_refuses_a_write_outside_its_roots_or_oddly_named() {
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().join("inside");
    std::fs::create_dir_all(&inside).unwrap();
    let codec = VariantCodec::with_data_roots(std::slice::from_ref(&inside)).unwrap();
    let sent = write(dir.path(), &[]);
    let input = datafusion::physical_plan::ExecutionPlan::children(&sent)[0].clone();
    let bytes = codec.encode_write(&sent).unwrap();
    let outside = codec
        .decode_write(&bytes, input.clone(), &task(0, 1))
        .unwrap_err()
        .to_string();
    assert!(
        outside.contains("outside this worker's data roots"),
        "{outside}"
    );
    let inside_write = write(&inside, &[]);
    let bytes = codec.encode_write(&inside_write).unwrap();
    codec
        .decode_write(&bytes, input.clone(), &task(0, 1))
        .unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "up",
            edited(&bytes, |m| {
                m["dir"] = format!("{}/../x", inside.display()).into()
            }),
        ),
        ("relative", edited(&bytes, |m| m["dir"] = "x/y".into())),
        (
            "prefix",
            edited(&bytes, |m| m["prefix"] = "../../etc/x".into()),
        ),
        (
            "long prefix",
            edited(&bytes, |m| m["prefix"] = "a".repeat(65).into()),
        ),
        (
            "schema file",
            edited(&bytes, |m| m["options"]["shred"] = "/etc/passwd".into()),
        ),
        (
            "option",
            edited(&bytes, |m| m["options"]["path"] = "x".into()),
        ),
        ("node", edited(&bytes, |m| m["node"] = "scan".into())),
    ];
    for (what, bytes) in cases {
        let error = codec
            .decode_write(&bytes, input.clone(), &task(0, 1))
            .unwrap_err()
            .to_string();
        assert!(error.contains("refused"), "{what}: {error}");
    }
}

/// The filter a scan runs on its rows travels with it; one that is no
/// condition on the scan's outputs (a column beyond them, a value that is
/// not true or false) is refused.
#[test]
fn a_row_filter_comes_back_and_one_not_on_the_outputs_is_refused() {
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion::physical_expr::expressions::{Column, IsNotNullExpr};
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    let dir = tempfile::tempdir().unwrap();
    let files = vec![file(dir.path(), "a.parquet")];
    let codec = VariantCodec::with_data_roots(&[dir.path().to_path_buf()]).unwrap();
    let sent_and_received = |filter: Arc<dyn PhysicalExpr>| {
        let sent = scan(files.clone(), None)
            .with_row_filter(Some(filter))
            .unwrap();
        let mut bytes = Vec::new();
        codec
            .try_encode(
                Arc::new(sent),
                &mut bytes,
                &DefaultPhysicalProtoConverter {},
            )
            .unwrap();
        codec.try_decode(&bytes, &[], &task(0, 1), &DefaultPhysicalProtoConverter {})
    };
    let a = |index| Arc::new(Column::new("a", index)) as Arc<dyn PhysicalExpr>;
    let received = sent_and_received(Arc::new(IsNotNullExpr::new(a(3)))).unwrap();
    let received = received.downcast_ref::<VariantScanExec>().unwrap();
    assert_eq!(
        received.row_filter().map(|f| f.to_string()),
        Some("a@3 IS NOT NULL".to_string())
    );
    for refused in [
        Arc::new(IsNotNullExpr::new(a(9))) as Arc<dyn PhysicalExpr>,
        a(3),
    ] {
        let error = sent_and_received(refused.clone()).unwrap_err().to_string();
        assert!(
            error.contains("a row filter that is not a condition on the scan's 5 outputs"),
            "{refused}: {error}"
        );
    }
}
