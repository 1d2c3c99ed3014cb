//! Scan plans are worked out from the footer before any data is read, and
//! the executor runs them the same on any number of threads.

use std::num::NonZeroUsize;

use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::parquet::{Decision, GetRequest, ParquetFile, ScanOptions, SkipReason, WriteOptions};
use vshred::predicate::{Comparison, Literal, Op, Operand, Predicate};
use vshred::shred::ShreddingSchema;

/// Four row groups of 100 rows, `id` ascending (shredded as int64), `tag`
/// in every row group (a string), a bloom filter on `$.tag`.
fn file(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!(
            "{{\"id\":{i},\"tag\":\"t{}\",\"x\":{i}}}\n",
            i % 10
        ));
    }
    let path = dir.join("f.parquet");
    let options = EncodeOptions {
        shred: ShredMode::Schema(r#"{"id":"int64","tag":"string","x":"int64"}"#.parse().unwrap()),
        write: WriteOptions {
            row_group_rows: 100,
            ..WriteOptions::default()
        },
        bloom_filters: vec!["$.tag".into()],
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    path
}

fn request(filter: &str) -> GetRequest {
    GetRequest {
        column: "v".into(),
        path: "$.x".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: Some(Predicate::parse(filter).unwrap()),
    }
}

/// The leaves of a plan's read row groups, by their dotted paths.
fn leaf_names(file: &ParquetFile, leaves: &[usize]) -> Vec<String> {
    leaves
        .iter()
        .map(|&l| file.parquet_schema().column(l).path().string())
        .collect()
}

#[test]
fn a_plan_says_which_row_groups_are_skipped_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let file = ParquetFile::open(&file(dir.path())).unwrap();
    let plan = file.plan_get(&request("$.id >= 250"), &[]).unwrap();
    let decisions: Vec<Option<SkipReason>> = plan
        .row_groups()
        .iter()
        .map(|p| match &p.decision {
            Decision::Skip(reason) => Some(*reason),
            Decision::Read { .. } => None,
        })
        .collect();
    assert_eq!(
        decisions,
        [
            Some(SkipReason::Statistics),
            Some(SkipReason::Statistics),
            None,
            None
        ]
    );
    assert_eq!(plan.stats().skipped_by_statistics, 2);
    assert_eq!(plan.stats().row_groups_read, 2);

    // Every row group holds tags t0..t9: only the bloom filter rules out t42.
    let plan = file.plan_get(&request("$.tag == \"t42\""), &[]).unwrap();
    assert!(
        plan.row_groups()
            .iter()
            .all(|p| matches!(p.decision, Decision::Skip(SkipReason::BloomFilter)))
    );
    assert_eq!(plan.stats().skipped_by_bloom_filters, 4);
}

#[test]
fn a_plan_reads_only_the_leaves_the_path_and_the_filter_need() {
    let dir = tempfile::tempdir().unwrap();
    let file = ParquetFile::open(&file(dir.path())).unwrap();
    let plan = file.plan_get(&request("$.id < 50"), &[]).unwrap();
    let Decision::Read { leaves, .. } = &plan.row_groups()[0].decision else {
        panic!("row group 0 holds ids below 50")
    };
    // Both paths are typed with nothing in `value`: their typed leaves,
    // no `value` leaf; the filter keeps the metadata, as it reads its
    // values as Variants.
    assert_eq!(
        leaf_names(&file, leaves),
        [
            "v.metadata",
            "v.typed_value.id.typed_value",
            "v.typed_value.x.typed_value"
        ]
    );
    let unfiltered = GetRequest {
        filter: None,
        ..request("$.id < 50")
    };
    let plan = file.plan_get(&unfiltered, &[]).unwrap();
    let Decision::Read { leaves, .. } = &plan.row_groups()[0].decision else {
        panic!("nothing to skip without a filter")
    };
    assert_eq!(leaf_names(&file, leaves), ["v.typed_value.x.typed_value"]);
    let whole = file.plan_columns(None).unwrap();
    let Decision::Read { leaves, .. } = &whole.row_groups()[0].decision else {
        panic!("a plan of whole rows reads every row group")
    };
    assert_eq!(leaves.len(), file.parquet_schema().num_columns());
}

#[test]
fn the_executor_gives_the_same_batches_in_order_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let file = ParquetFile::open(&file(dir.path())).unwrap();
    let plan = file.plan_columns(None).unwrap();
    let rows_with = |threads: usize| {
        let options = ScanOptions {
            batch_size: 30,
            threads: NonZeroUsize::new(threads),
        };
        let mut firsts = Vec::new();
        file.scan(
            &plan,
            &options,
            |batch| Ok(batch.num_rows()),
            |n| {
                firsts.push(n);
                Ok(())
            },
        )
        .unwrap();
        firsts
    };
    let one = rows_with(1);
    assert_eq!(one.iter().sum::<usize>(), 400);
    // Row groups of 100 in batches of 30: 30, 30, 30, 10 each.
    assert_eq!(&one[..4], [30, 30, 30, 10]);
    for threads in [2, 3, 8] {
        assert_eq!(rows_with(threads), one, "{threads} threads");
    }
    let mut lines = Vec::new();
    file.json_lines(None, &ScanOptions::new(7), |text| {
        lines.extend(
            String::from_utf8(text)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        );
        Ok(())
    })
    .unwrap();
    let ids: Vec<String> = (0..400).map(|i| format!("{{\"v\":{{\"id\":{i},")).collect();
    assert!(
        lines
            .iter()
            .zip(&ids)
            .all(|(l, id)| l.starts_with(id.as_str()))
    );
    assert_eq!(lines.len(), 400);
}

/// A path read as a type (`$.t as int64`) is judged by its statistics
/// converted as its values are: 100.5 read as an integer is 100, so the
/// row group holding it is read, where `$.t == 100` skips every one; and
/// the rows passed are those whose converted value passes.
#[test]
fn a_path_read_as_a_type_is_judged_by_its_converted_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..400)
        .map(|i| format!("{{\"t\":{i}.5e0,\"tag\":\"t{}\"}}\n", i % 10))
        .collect();
    let path = dir.path().join("halves.parquet");
    let options = EncodeOptions {
        shred: ShredMode::Schema(r#"{"t":"double","tag":"string"}"#.parse().unwrap()),
        write: WriteOptions {
            row_group_rows: 100,
            ..WriteOptions::default()
        },
        bloom_filters: vec!["$.tag".into()],
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let request = |filter: &str| t_where(Predicate::parse(filter).unwrap());
    let read = |filter: &str| {
        let plan = file.plan_get(&request(filter), &[]).unwrap();
        let stats = plan.stats();
        (stats.row_groups_read, stats.skipped_by_bloom_filters)
    };
    assert_eq!(read("$.t == 100"), (0, 0));
    assert_eq!(read("$.t as int64 == 100"), (1, 0));
    assert_eq!(read("$.t as decimal(5,0) >= 399"), (1, 0));
    // Strings read as strings are still ruled out by the bloom filter;
    // read as numbers, by nothing.
    assert_eq!(read("$.tag as string == \"t42\""), (0, 4));
    assert_eq!(read("$.tag as int64 == 42"), (4, 0));
    let values = doubles(&file, &request("$.t as int64 in (100, 399)"));
    assert_eq!(values, [100.5, 399.5]);
}

/// A get of `$.t` as a double, of the rows `filter` passes.
fn t_where(filter: Predicate) -> GetRequest {
    GetRequest {
        column: "v".into(),
        path: "$.t".parse().unwrap(),
        as_type: ShreddingSchema::Double,
        strict: false,
        filter: Some(filter),
    }
}

/// The doubles (none null) that `request` gets from `file`.
fn doubles(file: &ParquetFile, request: &GetRequest) -> Vec<f64> {
    let mut values = Vec::new();
    file.get(request, 1024, |array| {
        let array = array
            .as_any()
            .downcast_ref::<arrow::array::Float64Array>()
            .unwrap();
        values.extend(array.iter().flatten());
        Ok(())
    })
    .unwrap();
    values
}

/// NaN is above every number (as in Spark and SQL), and writers leave it
/// out of a double leaf's statistics: a row group whose max is below the
/// literal may still hold a NaN that passes `>`, so it is read.
#[test]
fn nan_passes_greater_than_though_the_statistics_leave_it_out() {
    use std::sync::Arc;

    use vshred::parquet::{ColumnSpec, ParquetWriter};
    use vshred::shred::Shredder;
    use vshred::variant::VariantBuilder;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.parquet");
    let schema: ShreddingSchema = r#"{"t":"double"}"#.parse().unwrap();
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: schema.clone(),
    }];
    let options = WriteOptions {
        row_group_rows: 2,
        ..WriteOptions::default()
    };
    let mut writer = ParquetWriter::create(&path, &columns, &options).unwrap();
    let mut shredder = Shredder::new(&schema);
    for t in [f64::NAN, 1.0, 2.0, 3.0] {
        let mut builder = VariantBuilder::new();
        builder.begin_object();
        builder.key("t");
        builder.double(t);
        builder.end_object().unwrap();
        let (metadata, value) = builder.finish();
        shredder.append_variant(metadata, value).unwrap();
    }
    let batch = arrow::array::RecordBatch::try_new(
        writer.schema().clone(),
        vec![Arc::new(shredder.finish())],
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();

    let file = ParquetFile::open(&path).unwrap();
    // `== NaN` (SQL's `= 'NaN'::double`, or a join's key), alone and in a
    // list, which the filter syntax cannot write.
    let equal = |literal| {
        Predicate::Compare(Comparison {
            operand: Operand::Path("$.t".parse().unwrap()),
            op: Op::Eq,
            literal,
        })
    };
    let is_nan = equal(Literal::Double(f64::NAN));
    let in_list = Predicate::Or(vec![equal(Literal::Double(7.0)), is_nan.clone()]);
    let filters = [
        "$.t > 5",
        "$.t as double >= 5",
        "$.t != 1",
        "$.t as float > 5",
    ]
    .map(|f| Predicate::parse(f).unwrap())
    .into_iter()
    .chain([is_nan, in_list]);
    for filter in filters {
        let values = doubles(&file, &t_where(filter.clone()));
        assert!(
            values.first().is_some_and(|v| v.is_nan()),
            "{filter}: {values:?}"
        );
    }
    // Converted to an integer, NaN is null: the statistics still rule out.
    let plan = file.plan_get(&request("$.t as int64 > 5"), &[]).unwrap();
    assert_eq!(plan.stats().row_groups_read, 0);
}

/// A bloom filter with no bit set rules out every value. A writer writes
/// one only for a chunk of nulls alone; damaged (its bitset zeroed), it
/// made a filter skip a row group holding matching rows. Such a filter is
/// not used.
#[test]
fn a_bloom_filter_with_no_bit_set_rules_nothing_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path());
    let count = |file: &ParquetFile| {
        let mut rows = 0;
        file.get(&request("$.tag == \"t3\""), 1024, |array| {
            rows += array.len();
            Ok(())
        })
        .unwrap();
        rows
    };
    assert_eq!(count(&ParquetFile::open(&path).unwrap()), 40);
    // Row group 1's filter: a header, then a bitset whose length is a
    // power of two.
    let column = ParquetFile::open(&path)
        .unwrap()
        .metadata()
        .row_group(1)
        .columns()
        .iter()
        .find(|c| c.bloom_filter_offset().is_some())
        .cloned()
        .unwrap();
    let (offset, length) = (
        column.bloom_filter_offset().unwrap() as usize,
        column.bloom_filter_length().unwrap() as usize,
    );
    let bitset = 1 << length.ilog2();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset + length - bitset..offset + length].fill(0);
    std::fs::write(&path, &bytes).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let plan = file.plan_get(&request("$.tag == \"t3\""), &[]).unwrap();
    assert_eq!(plan.stats().skipped_by_bloom_filters, 0);
    assert_eq!(count(&file), 40);
    // The other row groups' filters still rule out what they do not hold.
    let plan = file.plan_get(&request("$.tag == \"t42\""), &[]).unwrap();
    assert_eq!(plan.stats().skipped_by_bloom_filters, 3);
}
