//! `vshred report`: the layouts compared, the figures each must show, and
//! the page it writes.

use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::infer::Preset;
use vshred::parquet::{DecimalMode, LeafSize};
use vshred::report::{Layout, Query, Report, ReportOptions, compare_layouts, measure_files};
use vshred::shred::ShreddingSchema;

/// Seed-like rows: ints, strings and one-decimal numbers with a small
/// cardinality, a nested object, and an `id` that is unique per row.
fn seed_lines(rows: usize) -> Vec<u8> {
    let mut text = String::new();
    let mut next = numbers();
    for i in 0..rows {
        let (n, s, d, a) = (next(), next(), next(), next());
        text.push_str(&format!(
            "{{\"id\":{i},\"v\":{{\"n\":{n},\"s\":\"s-{s}\",\"d\":{}.{},\"nested\":{{\"a\":{}}}}}}}\n",
            100 + d / 10,
            d % 10,
            a % 100
        ));
    }
    text.into_bytes()
}

/// Numbers below 1000, independent and not periodic, or compression would
/// see through the unshredded rows.
fn numbers() -> impl FnMut() -> usize {
    let mut state = 42u64;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % 1000
    }
}

/// Rows of `fields` integer fields `f00`, `f01`, ... and a one-decimal `d`:
/// as many queries as fields, and every layout.
fn wide_lines(rows: usize, fields: usize) -> Vec<u8> {
    let mut next = numbers();
    let mut text = String::new();
    for _ in 0..rows {
        text.push_str(&format!("{{\"d\":{}.{}", next(), next() % 10));
        for f in 0..fields {
            text.push_str(&format!(",\"f{f:02}\":{}", next()));
        }
        text.push_str("}\n");
    }
    text.into_bytes()
}

fn options(runs: usize) -> ReportOptions {
    ReportOptions {
        variant_fields: vec!["v".into()],
        runs,
        ..ReportOptions::default()
    }
}

fn markdown(report: &Report) -> String {
    let mut out = Vec::new();
    report.write_markdown(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn html(report: &Report) -> String {
    let mut out = Vec::new();
    report.write_html(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// A chart of the page: its `aria-label`, its height and its markup.
struct Chart<'p> {
    label: &'p str,
    height: usize,
    svg: &'p str,
}

/// The value of the first attribute `name` in `markup`.
fn attribute<'m>(markup: &'m str, name: &str) -> &'m str {
    let start = markup.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    &markup[start..start + markup[start..].find('"').unwrap()]
}

fn charts(page: &str) -> Vec<Chart<'_>> {
    page.match_indices("<svg")
        .map(|(start, _)| {
            let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
            Chart {
                label: attribute(svg, "aria-label"),
                height: attribute(svg, "height").parse().unwrap(),
                svg,
            }
        })
        .collect()
}

#[test]
fn every_layout_is_encoded_and_holds_the_same_values() {
    let report = compare_layouts(&seed_lines(3000), "seed", &options(1)).unwrap();
    let layouts: Vec<_> = report.layouts.iter().map(|l| l.layout).collect();
    assert_eq!(layouts, Layout::ENCODED.map(Some));
    assert_eq!(report.rows, 3000);
    // Default queries: every top-level shredded field, as our inference typed it.
    let queries: Vec<String> = report
        .queries
        .iter()
        .map(|(path, as_type)| format!("{path} {as_type}"))
        .collect();
    assert_eq!(
        queries,
        [
            r#"$.d "decimal(4,1)""#,
            r#"$.n "int32""#,
            r#"$.nested "variant""#,
            r#"$.s "string""#
        ]
    );
    for layout in &report.layouts {
        assert!(layout.encode.is_some(), "{}", layout.name);
        assert_eq!(layout.query_values, [3000; 4], "{}", layout.name);
        let sizes: Vec<u64> = layout.leaves.iter().map(|l| l.compressed).collect();
        assert!(
            sizes.is_sorted_by(|a, b| a >= b),
            "{}: {sizes:?}",
            layout.name
        );
        assert!(layout.leaves.iter().all(|l| l.path[0] == "v"));
        assert!(layout.variant_bytes() < layout.file_bytes);
    }
}

#[test]
fn shredding_shows_in_size_and_in_the_typed_share() {
    let report = compare_layouts(&seed_lines(3000), "seed", &options(1)).unwrap();
    let unshredded = &report.layouts[0];
    assert_eq!(unshredded.typed_share(), Some(0.0));
    assert_eq!(unshredded.typed_and_residual_values(), Some((0, 3000)));
    for shredded in &report.layouts[1..] {
        // n, s, d and nested.a, in every row, and nothing left over.
        assert_eq!(
            shredded.typed_and_residual_values(),
            Some((4 * 3000, 0)),
            "{}",
            shredded.name
        );
        // Unshredded rows of distinct values are written plain (1.4x).
        assert!(
            unshredded.variant_bytes() > shredded.variant_bytes() * 5 / 4,
            "unshredded {} vs {} {}",
            unshredded.variant_bytes(),
            shredded.name,
            shredded.variant_bytes()
        );
    }
}

#[test]
fn values_that_do_not_fit_count_as_residuals() {
    let mut text = String::new();
    for i in 0..1000 {
        if i % 10 == 0 {
            text.push_str(&format!("{{\"code\":\"E{i}\"}}\n"));
        } else {
            text.push_str(&format!("{{\"code\":{i}}}\n"));
        }
    }
    let report = compare_layouts(
        text.as_bytes(),
        "codes",
        &ReportOptions {
            runs: 1,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    let auto = &report.layouts[1];
    assert_eq!(auto.typed_and_residual_values(), Some((900, 100)));
    assert_eq!(auto.typed_share(), Some(0.9));
    assert!(markdown(&report).contains("| auto, int decimals |"));
}

#[test]
fn queries_take_a_type_or_the_shredded_one() {
    let lines = seed_lines(3000);
    let report = compare_layouts(
        &lines,
        "seed",
        &ReportOptions {
            queries: vec![
                "$.n as int64".parse().unwrap(),
                "$.nested.a".parse().unwrap(),
                "$.missing".parse().unwrap(),
            ],
            ..options(1)
        },
    )
    .unwrap();
    let types: Vec<&ShreddingSchema> = report.queries.iter().map(|(_, t)| t).collect();
    assert_eq!(
        types,
        [
            &ShreddingSchema::Int64,
            &ShreddingSchema::Int32,
            &ShreddingSchema::Variant
        ]
    );
    for layout in &report.layouts {
        assert_eq!(layout.query_values, [3000, 3000, 0], "{}", layout.name);
    }
    // A key that merely contains " as " is a path, not a type.
    let odd: Query = "$['x as y']".parse().unwrap();
    assert_eq!(odd.as_type, None);
    assert_eq!(odd.path.to_string(), "$['x as y']");
}

#[test]
fn an_unshredded_reference_takes_its_default_queries_from_a_shredded_layout() {
    // Wide rows that repeat whole: `auto` leaves them unshredded, the
    // smallest.
    let fields: String = (0..20).map(|k| format!("\"f{k}\":\"text {k}\",")).collect();
    let lines: String = (0..300)
        .map(|i| format!("{{{fields}\"id\":{i}}}\n"))
        .collect();
    let options = ReportOptions {
        runs: 1,
        ..ReportOptions::default()
    };
    let report = compare_layouts(lines.as_bytes(), "repeated", &options).unwrap();
    let auto = report
        .layouts
        .iter()
        .find(|l| l.name.starts_with("auto"))
        .unwrap();
    let typed = |leaf: &&LeafSize| leaf.path.iter().any(|p| p == "typed_value");
    assert_eq!(
        auto.leaves.iter().filter(typed).count(),
        0,
        "{:?}",
        auto.leaves
    );
    let queries: Vec<String> = report
        .queries
        .iter()
        .map(|(path, _)| path.to_string())
        .collect();
    // Every top-level field, as the Spark preset's layout shreds it (both
    // `auto` layouts are unshredded).
    assert_eq!(queries.len(), 21, "{queries:?}");
    assert!(queries.contains(&"$.id".to_string()), "{queries:?}");
    assert!(
        report
            .queries
            .iter()
            .all(|(_, t)| matches!(t, ShreddingSchema::String | ShreddingSchema::Int64)),
        "{:?}",
        report.queries
    );
}

#[test]
fn markdown_has_a_size_table_a_latency_table_and_the_leaves_of_each_layout() {
    let report = compare_layouts(&seed_lines(3000), "seed.jsonl", &options(3)).unwrap();
    let text = markdown(&report);
    assert!(text.starts_with("# vshred report: seed.jsonl\n"), "{text}");
    assert!(text.contains("medians of 3 runs"), "{text}");
    assert!(text.contains(
        "| layout | file | Variant column | Variant bytes/row | vs auto, int decimals | in typed_value | encode |"
    ));
    assert!(text.contains("| layout | full reconstruction | `$.d as decimal(4,1)` |"));
    assert!(text.contains("| non-null values | 3,000 | 3,000 | 3,000 | 3,000 | 3,000 |"));
    for layout in Layout::ENCODED {
        assert!(
            text.contains(&format!("## Leaves of {}\n", layout.name())),
            "{text}"
        );
    }
    assert!(text.contains("| `v.value` |"));
    assert!(text.contains("| `v.typed_value.d.typed_value` |"));
    // The metadata has no statistics to count its values by; every other
    // leaf does.
    let no_statistics: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("| no statistics |"))
        .collect();
    assert_eq!(no_statistics.len(), Layout::ENCODED.len(), "{text}");
    assert!(
        no_statistics
            .iter()
            .all(|line| line.starts_with("| `v.metadata` |"))
    );
}

#[test]
fn the_page_is_self_contained() {
    let report = compare_layouts(&seed_lines(500), "<seed>", &options(1)).unwrap();
    let mut page = Vec::new();
    report.write_html(&mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(page.starts_with("<!doctype html>"));
    assert!(page.contains("<title>vshred report: &lt;seed&gt;</title>"));
    assert!(!page.contains("<script"));
    assert!(!page.contains("https://"));
    // The only URL is the SVG namespace, which is a name, not a fetch.
    assert_eq!(
        page.matches("http://").count(),
        page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    // A chart of sizes, one of reconstruction, one of the queries, one of
    // leaves per layout.
    assert_eq!(page.matches("<svg").count(), 3 + Layout::ENCODED.len());
    assert_eq!(page.matches("<table>").count(), 2 + Layout::ENCODED.len());
}

#[test]
fn existing_files_are_measured_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    compare_layouts(
        &seed_lines(3000),
        "seed",
        &ReportOptions {
            keep_dir: Some(dir.path().to_path_buf()),
            ..options(1)
        },
    )
    .unwrap();
    let files = [
        dir.path().join("auto-int-decimals.parquet"),
        dir.path().join("unshredded.parquet"),
    ];
    let report = measure_files(&files, &options(1)).unwrap();
    let names: Vec<&str> = report.layouts.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["auto-int-decimals.parquet", "unshredded.parquet"]);
    assert!(
        report
            .layouts
            .iter()
            .all(|l| l.encode.is_none() && l.layout.is_none())
    );
    // The first file's shredding types the queries.
    assert_eq!(report.queries.len(), 4);
    assert!(report.layouts[1].variant_bytes() > report.layouts[0].variant_bytes());
    let text = markdown(&report);
    assert!(text.contains("| vs auto-int-decimals.parquet |"), "{text}");
    assert!(!text.contains("| encode |"));
}

#[test]
fn datasets_are_measured_as_one_each_sizes_summed_over_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let lines = seed_lines(900);
    // After the 500th line.
    let cut = lines
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(499)
        .unwrap()
        .0
        + 1;
    let (first, second) = lines.split_at(cut);
    let mut single = Vec::new();
    for (set, shred) in [
        ("shredded", EncodeOptions::default().shred),
        ("plain", ShredMode::None),
    ] {
        std::fs::create_dir(dir.path().join(set)).unwrap();
        for (i, part) in [first, second].into_iter().enumerate() {
            let options = EncodeOptions {
                shred: shred.clone(),
                ..EncodeOptions::default()
            };
            let path = dir.path().join(set).join(format!("part-{i}.parquet"));
            encode(&mut &part[..], &path, &options, &mut |_| {}).unwrap();
        }
        let path = dir.path().join(format!("{set}.parquet"));
        let options = EncodeOptions {
            shred,
            ..EncodeOptions::default()
        };
        encode(&mut &lines[..], &path, &options, &mut |_| {}).unwrap();
        single.push(path);
    }
    let sets = [dir.path().join("shredded"), dir.path().join("plain")];
    let report = measure_files(&sets, &options(1)).unwrap();
    assert_eq!(report.rows, 900);
    let sizes = |p: &std::path::Path| -> u64 {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    assert_eq!(report.layouts[0].file_bytes, sizes(&sets[0]));
    assert_eq!(report.layouts[1].file_bytes, sizes(&sets[1]));
    assert!(
        report
            .layouts
            .iter()
            .all(|l| l.exact == vshred::report::Exactness::Same)
    );
    // Each query finds in a dataset what it finds in one file of the
    // same rows.
    let alone = measure_files(&single, &options(1)).unwrap();
    for (set, file) in report.layouts.iter().zip(&alone.layouts) {
        assert_eq!(set.query_values, file.query_values);
    }
}

/// The markdown from `## heading` to the next heading.
fn section<'t>(text: &'t str, heading: &str) -> &'t str {
    let start = text
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading:?} in\n{text}"));
    let rest = &text[start + 1..];
    rest[1..].find("\n## ").map_or(rest, |end| &rest[..end + 1])
}

/// The cells of the markdown table row that starts with `| label |`.
fn markdown_row<'t>(text: &'t str, label: &str) -> Vec<&'t str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("| {label} |")))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// `12.3 ms (11.9–14.0)`: a median, then the fastest and slowest run.
fn is_spread(cell: &str) -> bool {
    let Some((median, range)) = cell.split_once(" (") else {
        return false;
    };
    let Some((min, max)) = range.strip_suffix(')').and_then(|r| r.split_once('–')) else {
        return false;
    };
    let number = |s: &str| s.parse::<f64>().is_ok();
    median
        .split_once(' ')
        .is_some_and(|(n, unit)| number(n) && ["µs", "ms", "s"].contains(&unit))
        && number(min)
        && number(max)
}

#[test]
fn timings_show_their_spread() {
    let report = compare_layouts(&seed_lines(500), "seed", &options(3)).unwrap();
    let text = markdown(&report);
    let latency = section(&text, "Read latency: median (fastest–slowest) of 3 runs");
    for layout in &report.layouts {
        let cells = markdown_row(latency, &layout.name);
        // Reconstruction and the four queries.
        let timings = &cells[cells.len() - 5..];
        assert!(timings.iter().all(|c| is_spread(c)), "{cells:?}");
        // The encode time.
        let sizes = markdown_row(section(&text, "Size per layout"), &layout.name);
        assert_eq!(
            sizes.iter().filter(|c| is_spread(c)).count(),
            1,
            "{sizes:?}"
        );
        let timings = layout.query_times.iter().chain([&layout.reconstruct]);
        for t in timings.chain(&layout.encode) {
            assert!(t.min <= t.median && t.median <= t.max, "{t:?}");
        }
    }
}

#[test]
fn latency_has_one_chart_per_metric_on_one_scale_and_the_page_stays_short() {
    // 17 queries, as the movies data set gave 17 stacked charts.
    let report = compare_layouts(
        &wide_lines(600, 16),
        "wide",
        &ReportOptions {
            runs: 1,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.queries.len(), 17);
    assert_eq!(report.layouts.len(), Layout::ENCODED.len());
    let page = html(&report);
    let charts = charts(&page);
    let latency: Vec<&Chart> = charts
        .iter()
        .filter(|c| c.label.contains("reconstruction") || c.label.contains("variant_get"))
        .collect();
    let labels: Vec<&str> = latency.iter().map(|c| c.label).collect();
    assert_eq!(
        labels,
        [
            "Full reconstruction to JSON text, one run",
            "variant_get, every query on one scale, one run"
        ]
    );
    // Sizes, the two latency charts, and the leaves of each layout.
    assert_eq!(charts.len(), 3 + report.layouts.len());
    let tall: usize = latency.iter().map(|c| c.height).sum();
    assert!(tall <= 1300, "{tall} px of latency charts");
    // One scale: every bar is its time over the slowest query's of all,
    // where one scale per query would give each query a full-width bar.
    // (Comparing widths with each other alone fails when two times round
    // to the same tenth of a pixel.)
    let widths: Vec<f64> = latency[1]
        .svg
        .split("<rect ")
        .skip(1)
        .map(|r| attribute(r, "width").parse().unwrap())
        .collect();
    let times: Vec<f64> = (0..report.queries.len())
        .flat_map(|q| {
            let layouts = report.layouts.iter();
            layouts.map(move |l| l.query_times[q].median.as_secs_f64())
        })
        .collect();
    assert_eq!(widths.len(), 17 * report.layouts.len());
    let slowest = times.iter().copied().fold(0.0, f64::max);
    for (width, time) in widths.iter().zip(&times) {
        let expected = (time / slowest * 440.0).max(1.0);
        // Printed to a tenth: within half of one, and a float's error.
        assert!((width - expected).abs() <= 0.051, "{widths:?} {times:?}");
    }
}

#[test]
fn wide_tables_scroll_instead_of_overflowing_the_page() {
    let report = compare_layouts(
        &wide_lines(300, 16),
        "wide",
        &ReportOptions {
            runs: 1,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    let page = html(&report);
    let tables = page.matches("<table>").count();
    assert!(tables > 0);
    assert_eq!(
        page.matches("<div class=\"scroll\"><table>").count(),
        tables
    );
    assert_eq!(page.matches("</table></div>").count(), tables);
    assert!(page.contains(".scroll{overflow-x:auto"), "{page}");
}

#[test]
fn flba_layouts_are_left_out_when_no_layout_has_a_decimal() {
    // Integers and strings: neither inference types a decimal.
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!("{{\"n\":{i},\"s\":\"s-{}\"}}\n", i % 7));
    }
    let report = compare_layouts(
        text.as_bytes(),
        "ints",
        &ReportOptions {
            runs: 1,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    let layouts: Vec<_> = report.layouts.iter().map(|l| l.layout).collect();
    assert_eq!(
        layouts,
        [
            Layout::Unshredded,
            Layout::Shredded(Preset::Default, DecimalMode::Int),
            Layout::Shredded(Preset::Spark, DecimalMode::Int),
        ]
        .map(Some)
    );
    let note = "The `flba` layouts are left out: neither inference gives a decimal column that INT32 or INT64 would hold, so they would be the `int` files again.";
    let text = markdown(&report);
    assert!(text.contains(&format!("\n{note}\n")), "{text}");
    assert_eq!(text.matches("flba").count(), 1, "{text}");
    let page = html(&report);
    let note = note
        .replacen('`', "<code>", 1)
        .replacen('`', "</code>", 1)
        .replacen('`', "<code>", 1)
        .replacen('`', "</code>", 1);
    assert!(page.contains(&format!("<p>{note}</p>")), "{page}");
    assert_eq!(page.matches("flba").count(), 1);
    assert_eq!(charts(&page).len(), 3 + 3);

    // A decimal field keeps them, in tables and charts.
    let report = compare_layouts(&seed_lines(300), "seed", &options(1)).unwrap();
    assert_eq!(report.layouts.len(), Layout::ENCODED.len());
    let text = markdown(&report);
    assert!(!text.contains("left out"), "{text}");
    assert!(text.contains("| auto, flba decimals |") && text.contains("| spark, flba decimals |"));
    assert!(
        charts(&html(&report))
            .iter()
            .any(|c| c.label == "Leaves of spark, flba decimals, compressed")
    );
}

#[test]
fn the_exact_column_says_which_layouts_give_back_the_input_text() {
    // Mostly one-decimal numbers and some integers: Spark's preset types
    // them all DECIMAL(p,1), so `7` reads back as `7.0`; ours keeps the
    // integers in `value`.
    let mut text = String::new();
    for i in 0..1000 {
        let x = if i % 5 == 1 {
            "7".to_string()
        } else {
            format!("2.{}", i % 10)
        };
        text.push_str(&format!("{{\"id\":{i},\"v\":{{\"x\":{x}}}}}\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let report = compare_layouts(
        text.as_bytes(),
        "mixed",
        &ReportOptions {
            keep_dir: Some(dir.path().to_path_buf()),
            ..options(1)
        },
    )
    .unwrap();
    let text = markdown(&report);
    let sizes = section(&text, "Size per layout");
    assert!(sizes.contains(" | encode | exact |\n"), "{sizes}");
    let exact = |layout: &str| markdown_row(sizes, layout).last().unwrap().to_string();
    assert_eq!(exact("unshredded"), "yes");
    assert_eq!(exact("auto, int decimals"), "yes");
    let spark = r#"no: 200 of 1,000 rows differ, first at row 1: `{"id":1,"v":{"x":7}}` -> `{"id":1,"v":{"x":7.0}}`"#;
    assert_eq!(exact("spark, int decimals"), spark);
    assert_eq!(exact("spark, flba decimals"), spark);
    assert!(
        sizes.contains("`exact`: whether the layout reads back, row for row, as the same JSON text as the unshredded one (the codec's rendering of the input)."),
        "{sizes}"
    );

    // Files: the first is the reference.
    let files = [
        dir.path().join("spark-int-decimals.parquet"),
        dir.path().join("unshredded.parquet"),
    ];
    let text = markdown(&measure_files(&files, &options(1)).unwrap());
    let sizes = section(&text, "Size per layout");
    let exact = |file: &str| markdown_row(sizes, file).last().unwrap().to_string();
    assert_eq!(exact("spark-int-decimals.parquet"), "yes");
    assert_eq!(
        exact("unshredded.parquet"),
        r#"no: 200 of 1,000 rows differ, first at row 1: `{"id":1,"v":{"x":7.0}}` -> `{"id":1,"v":{"x":7}}`"#
    );
    assert!(
        sizes.contains("`exact`: whether the file reads back, row for row, as the same JSON text as the first, spark-int-decimals.parquet, the reference."),
        "{sizes}"
    );
}

/// Files are compared on the columns all of them have (an `id` one adds
/// beside `v` made every row differ), and a file of more rows says how
/// many each has (it said "5 of 3 rows differ").
#[test]
fn files_are_compared_on_their_shared_columns_and_named_by_their_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String, variant_field: bool| {
        let path = dir.path().join(name);
        let mut options = vshred::encode::EncodeOptions::default();
        if variant_field {
            options.variant_fields = vec!["v".into()];
        }
        vshred::encode::encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
        path
    };
    let rows = |n: usize| {
        (1..=n)
            .map(|i| format!("{{\"a\":{i}}}\n"))
            .collect::<String>()
    };
    let small = write("small.parquet", rows(3), false);
    let big = write("big.parquet", rows(8), false);
    let with_id = (1..=3)
        .map(|i| format!("{{\"id\":{i},\"v\":{{\"a\":{i}}}}}\n"))
        .collect();
    let with_id = write("with-id.parquet", with_id, true);
    let report = measure_files(&[small, big, with_id], &options(1)).unwrap();
    let text = markdown(&report);
    let sizes = section(&text, "Size per layout");
    let exact = |file: &str| markdown_row(sizes, file).last().unwrap().to_string();
    assert_eq!(
        exact("big.parquet"),
        r#"no: 5 of 8 rows differ (it has 8, the first 3), first at row 3: `(no row)` -> `{"v":{"a":4}}`"#
    );
    assert_eq!(exact("with-id.parquet"), "yes");
    // Bytes a row of each file's own rows (they were all the first's).
    for layout in &report.layouts {
        let per_row = markdown_row(sizes, &layout.name)[3].to_string();
        assert_eq!(
            per_row,
            format!("{:.1}", layout.variant_bytes() as f64 / layout.rows as f64),
            "{}",
            layout.name
        );
    }
    assert_eq!(
        report.layouts.iter().map(|l| l.rows).collect::<Vec<_>>(),
        [3, 8, 3]
    );
}

#[test]
fn zero_runs_are_refused() {
    let err = compare_layouts(&seed_lines(10), "seed", &options(0)).unwrap_err();
    assert_eq!(err.kind(), vshred::ErrorKind::Usage);
    assert_eq!(
        err.to_string(),
        "invalid arguments: runs is 0: each timing needs at least one run"
    );
}

#[test]
fn files_measured_as_they_are_leave_nothing_to_keep() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed.parquet");
    vshred::encode::encode(
        &mut &seed_lines(10)[..],
        &file,
        &vshred::encode::EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let keep = dir.path().join("kept");
    let err = measure_files(
        &[file],
        &ReportOptions {
            keep_dir: Some(keep.clone()),
            ..options(1)
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments: there are no encoded files to keep: Parquet files are measured as they are"
    );
    assert!(!keep.exists());
}

#[test]
fn the_page_is_checked_before_any_encoding_and_written_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("kept");
    let missing = dir.path().join("missing").join("x.html");
    for (page, why) in [
        (
            &missing,
            format!(
                "the directory {} does not exist",
                missing.parent().unwrap().display()
            ),
        ),
        (&dir.path().to_path_buf(), "is a directory".to_string()),
    ] {
        let err = compare_layouts(
            &seed_lines(3000),
            "seed",
            &ReportOptions {
                html: Some(page.clone()),
                keep_dir: Some(keep.clone()),
                ..options(5)
            },
        )
        .unwrap_err();
        assert_eq!(err.kind(), vshred::ErrorKind::Io);
        assert_eq!(err.file(), Some(page.as_path()));
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("{}: I/O error: {why}", page.display())),
            "{message}"
        );
        // Nothing was encoded: the directory for the files is not even made.
        assert!(!keep.exists());
    }
    let page = dir.path().join("report.html");
    let report = compare_layouts(
        &seed_lines(100),
        "seed",
        &ReportOptions {
            html: Some(page.clone()),
            ..options(1)
        },
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(&page).unwrap(), html(&report));
    // Nor is a temporary file left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["report.html"]);
}
