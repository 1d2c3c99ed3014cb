//! A [`Report`] as markdown or as one self-contained HTML page. Both render
//! the same tables; the page adds bar charts drawn as inline SVG (no
//! scripts, nothing fetched).

use std::fmt::Write as _;
use std::io;
use std::time::Duration;

use super::{Exactness, Layout, LayoutReport, Report, Timing};

/// A table: the first column is a label, the others are figures.
struct Table {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// A sentence under the table on what a column means.
    note: Option<String>,
}

/// What a bar shows: its length, a line across its end from the fastest
/// to the slowest run (for timings that vary), and its text.
struct Figure {
    value: f64,
    spread: Option<(f64, f64)>,
    text: String,
}

/// One bar of a chart.
struct Bar {
    label: String,
    color: &'static str,
    figure: Figure,
}

/// Bars that belong together: a query's, one per layout, beside the
/// query; or, with no label, bars that each carry their own.
struct BarGroup {
    label: String,
    bars: Vec<Bar>,
}

impl Report {
    /// Writes the report as markdown: a heading, the size and latency
    /// tables, and the leaves of each layout.
    pub fn write_markdown(&self, out: &mut dyn io::Write) -> io::Result<()> {
        let mut text = format!("# vshred report: {}\n\n{}\n", self.source, self.summary());
        for note in &self.notes {
            let _ = write!(text, "\n{note}\n");
        }
        for table in self.tables() {
            let _ = write!(text, "\n## {}\n\n", table.title);
            markdown_row(&mut text, &table.header);
            let rule: Vec<String> = (0..table.header.len())
                .map(|i| if i == 0 { "---" } else { "---:" }.to_string())
                .collect();
            markdown_row(&mut text, &rule);
            for row in &table.rows {
                markdown_row(&mut text, row);
            }
            if let Some(note) = &table.note {
                let _ = write!(text, "\n{note}\n");
            }
        }
        out.write_all(text.as_bytes())
    }

    /// Writes the report as one HTML page with the same tables and bar
    /// charts of size per layout, of full reconstruction and of the queries
    /// (all on one scale), and of size per leaf.
    pub fn write_html(&self, out: &mut dyn io::Write) -> io::Result<()> {
        let mut page = String::new();
        let title = format!("vshred report: {}", self.source);
        let _ = write!(
            page,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{STYLE}</style></head>\n<body><h1>{}</h1><p>{}</p>\n",
            escape(&title),
            escape(&title),
            inline(&self.summary())
        );
        for note in &self.notes {
            let _ = writeln!(page, "<p>{}</p>", inline(note));
        }
        let mut tables = self.tables().into_iter();
        let sizes = self.layout_bars(String::new(), &|l| Figure {
            value: l.variant_bytes() as f64,
            spread: None,
            text: bytes(l.variant_bytes()),
        });
        bar_chart(&mut page, "Variant column size per layout", &[sizes]);
        html_table(&mut page, tables.next());
        let caption = self.timing_caption();
        bar_chart(
            &mut page,
            &format!("Full reconstruction to JSON text, {caption}"),
            &[self.layout_bars(String::new(), &|l| time(l.reconstruct))],
        );
        // One chart for every query, so that queries compare with each
        // other as well as layouts within a query.
        let queries: Vec<BarGroup> = self
            .query_names()
            .into_iter()
            .enumerate()
            .map(|(q, name)| self.layout_bars(name, &|l| time(l.query_times[q])))
            .collect();
        if !queries.is_empty() {
            bar_chart(
                &mut page,
                &format!("variant_get, every query on one scale, {caption}"),
                &queries,
            );
        }
        html_table(&mut page, tables.next());
        for (layout, table) in self.layouts.iter().zip(tables) {
            bar_chart(
                &mut page,
                &format!("Leaves of {}, compressed", layout.name),
                &[BarGroup {
                    label: String::new(),
                    bars: layout
                        .leaves
                        .iter()
                        .map(|leaf| Bar {
                            label: leaf.path.join("."),
                            color: leaf_color(leaf.path.last().map(String::as_str)),
                            figure: Figure {
                                value: leaf.compressed as f64,
                                spread: None,
                                text: bytes(leaf.compressed),
                            },
                        })
                        .collect(),
                }],
            );
            html_table(&mut page, Some(table));
        }
        page.push_str("</body></html>\n");
        out.write_all(page.as_bytes())
    }

    /// Writes the HTML page to `path`, whole or not at all.
    pub(super) fn write_html_file(&self, path: &std::path::Path) -> crate::Result<()> {
        let mut page = Vec::new();
        self.write_html(&mut page)
            .map_err(|e| crate::Error::io(path, e))?;
        crate::output::write_atomically(path, &page)
    }

    fn summary(&self) -> String {
        format!(
            "{} rows; Variant column `{}`; timings are wall-clock medians of {} run{} (in brackets the fastest and the slowest), each from opening the file; sizes are compressed bytes (1 MB = 10^6 bytes).",
            count(self.rows),
            self.column,
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        )
    }

    /// What a [`timing`] cell shows.
    fn timing_caption(&self) -> String {
        match self.runs {
            1 => "one run".into(),
            runs => format!("median (fastest–slowest) of {runs} runs"),
        }
    }

    fn query_names(&self) -> Vec<String> {
        self.queries
            .iter()
            .map(|(path, as_type)| format!("{path} as {}", as_type.type_name()))
            .collect()
    }

    /// The size table, the latency table, then one leaf table per layout.
    fn tables(&self) -> Vec<Table> {
        let mut tables = vec![self.size_table(), self.latency_table()];
        tables.extend(self.layouts.iter().map(leaf_table));
        tables
    }

    fn size_table(&self) -> Table {
        // The layout the others are compared with: our default, when the
        // report encoded several.
        let reference = (self.layouts.len() > 1).then(|| &self.layouts[self.reference]);
        let encoded = self.layouts.iter().any(|l| l.encode.is_some());
        let mut header: Vec<String> = [
            "layout",
            "file",
            "Variant column",
            "Variant bytes/row",
            "in typed_value",
        ]
        .map(String::from)
        .to_vec();
        if let Some(r) = reference {
            header.insert(4, format!("vs {}", r.name));
        }
        if encoded {
            header.push("encode".into());
        }
        header.push("exact".into());
        let rows = self
            .layouts
            .iter()
            .map(|l| {
                let mut row = vec![
                    l.name.clone(),
                    bytes(l.file_bytes),
                    bytes(l.variant_bytes()),
                    format!("{:.1}", l.variant_bytes() as f64 / l.rows.max(1) as f64),
                    match l.typed_share() {
                        Some(share) => format!("{:.1}%", share * 100.0),
                        None => "n/a (no null counts)".into(),
                    },
                ];
                if let Some(r) = reference {
                    row.insert(
                        4,
                        format!(
                            "{:.2}x",
                            l.variant_bytes() as f64 / r.variant_bytes().max(1) as f64
                        ),
                    );
                }
                if encoded {
                    row.push(l.encode.map(timing).unwrap_or_default());
                }
                row.push(self.exactness(&l.exact));
                row
            })
            .collect();
        let note = match self.layouts.first() {
            Some(first) if first.layout == Some(Layout::Unshredded) => "`exact`: whether the layout reads back, row for row, as the same JSON text as the unshredded one (the codec's rendering of the input).".to_string(),
            Some(first) => format!("`exact`: whether the file reads back, row for row, as the same JSON text as the first, {}, the reference.", first.name),
            None => String::new(),
        };
        Table {
            title: "Size per layout".into(),
            header,
            rows,
            note: Some(note),
        }
    }

    /// `yes`, or `no: 3 of 10 rows differ, first at row 4: `..` -> `..``.
    fn exactness(&self, exact: &Exactness) -> String {
        match exact {
            Exactness::Same => "yes".into(),
            Exactness::Differs {
                rows,
                of,
                first,
                expected,
                found,
            } => {
                let (expected, found) = difference(expected, found);
                let counts = match *of == self.rows {
                    true => String::new(),
                    false => format!(" (it has {}, the first {})", count(*of), count(self.rows)),
                };
                format!(
                    "no: {} of {} rows differ{counts}, first at row {}: `{expected}` -> `{found}`",
                    count(*rows),
                    count(self.rows.max(*of)),
                    count(*first)
                )
            }
        }
    }

    fn latency_table(&self) -> Table {
        let names = self.query_names();
        let mut header = vec!["layout".to_string(), "full reconstruction".to_string()];
        header.extend(names.iter().map(|n| format!("`{n}`")));
        // Every layout holds the same data, so each query must find the
        // same values in each; say so where one does not.
        let agreed: Vec<bool> = (0..self.queries.len())
            .map(|q| {
                self.layouts
                    .windows(2)
                    .all(|w| w[0].query_values[q] == w[1].query_values[q])
            })
            .collect();
        let mut rows: Vec<Vec<String>> = self
            .layouts
            .iter()
            .map(|l| {
                let mut row = vec![l.name.clone(), timing(l.reconstruct)];
                for (q, time) in l.query_times.iter().enumerate() {
                    row.push(if agreed[q] {
                        timing(*time)
                    } else {
                        format!("{}, {} values", timing(*time), count(l.query_values[q]))
                    });
                }
                row
            })
            .collect();
        if let Some(first) = self.layouts.first() {
            let mut row = vec!["non-null values".to_string(), count(self.rows)];
            for (q, agreed) in agreed.iter().enumerate() {
                row.push(if *agreed {
                    count(first.query_values[q])
                } else {
                    "differ by layout".into()
                });
            }
            rows.push(row);
        }
        Table {
            title: format!("Read latency: {}", self.timing_caption()),
            header,
            rows,
            note: None,
        }
    }

    /// One bar per layout, in the layout's colour, showing `figure`.
    fn layout_bars(&self, label: String, figure: &dyn Fn(&LayoutReport) -> Figure) -> BarGroup {
        BarGroup {
            label,
            bars: self
                .layouts
                .iter()
                .enumerate()
                .map(|(i, l)| Bar {
                    label: l.name.clone(),
                    color: layout_color(l.layout, i),
                    figure: figure(l),
                })
                .collect(),
        }
    }
}

/// A timing as a bar: the median, with a line over the runs' spread.
fn time(t: Timing) -> Figure {
    Figure {
        value: t.median.as_secs_f64(),
        spread: (t.min < t.max).then_some((t.min.as_secs_f64(), t.max.as_secs_f64())),
        text: timing(t),
    }
}

fn leaf_table(layout: &LayoutReport) -> Table {
    let total = layout.variant_bytes().max(1) as f64;
    Table {
        title: format!("Leaves of {}", layout.name),
        header: [
            "leaf",
            "compressed",
            "uncompressed",
            "share of column",
            "non-null values",
            "encodings",
        ]
        .map(String::from)
        .to_vec(),
        rows: layout
            .leaves
            .iter()
            .map(|leaf| {
                vec![
                    format!("`{}`", leaf.path.join(".")),
                    bytes(leaf.compressed),
                    bytes(leaf.uncompressed),
                    format!("{:.1}%", leaf.compressed as f64 * 100.0 / total),
                    // vshred writes Variant metadata without statistics.
                    leaf.nulls
                        .map(|n| count(leaf.values - n))
                        .unwrap_or_else(|| "no statistics".into()),
                    leaf.encodings.join(" "),
                ]
            })
            .collect(),
        note: None,
    }
}

fn markdown_row(out: &mut String, cells: &[String]) {
    out.push('|');
    for cell in cells {
        let _ = write!(out, " {} |", cell.replace('|', "\\|"));
    }
    out.push('\n');
}

fn html_table(out: &mut String, table: Option<Table>) {
    let Some(table) = table else { return };
    // In a box of its own that scrolls sideways: a table of many queries
    // is wider than the page.
    let _ = write!(
        out,
        "<h2>{}</h2>\n<div class=\"scroll\"><table><thead><tr>",
        escape(&table.title)
    );
    for cell in &table.header {
        let _ = write!(out, "<th>{}</th>", inline(cell));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            let _ = write!(out, "<{tag}>{}</{tag}>", inline(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    if let Some(note) = &table.note {
        let _ = writeln!(out, "<p>{}</p>", inline(note));
    }
}

/// A horizontal bar chart as inline SVG, every bar on one scale (the
/// longest bar or spread line spans the width). Unlabelled groups give each
/// bar a row and a label; labelled ones (queries) draw their bars thin,
/// coloured by layout as a legend above says, beside the group's label, so
/// that 17 queries in 5 layouts stay about 1,150 px tall.
fn bar_chart(out: &mut String, title: &str, groups: &[BarGroup]) {
    const WIDTH: usize = 920;
    const LABEL: usize = 330;
    const BARS: f64 = 440.0;
    const GAP: usize = 6;
    let grouped = groups.iter().any(|g| !g.label.is_empty());
    let (row, bar) = if grouped { (12, 9) } else { (22, 16) };
    let height: usize = groups.iter().map(|g| g.bars.len() * row + GAP).sum();
    let longest = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|b| {
            b.figure
                .spread
                .map_or(b.figure.value, |(_, slowest)| slowest)
        })
        .fold(0.0, f64::max);
    let scale = |value: f64| {
        if longest > 0.0 {
            value / longest * BARS
        } else {
            0.0
        }
    };
    let _ = writeln!(out, "<h2>{}</h2>", escape(title));
    if grouped {
        out.push_str("<p class=\"legend\">");
        for bar in groups.first().into_iter().flat_map(|g| &g.bars) {
            let _ = write!(
                out,
                "<span style=\"background:{}\"></span>{} ",
                bar.color,
                escape(&bar.label)
            );
        }
        out.push_str("</p>\n");
    }
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"{}\"{}>",
        escape(title),
        if grouped { " class=\"grouped\"" } else { "" }
    );
    let mut y = 0;
    for group in groups {
        if grouped {
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                LABEL - 8,
                y + group.bars.len() * row / 2 + 4,
                escape(&group.label)
            );
        }
        for b in &group.bars {
            let middle = y + row / 2;
            if !grouped {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                    LABEL - 8,
                    middle + 4,
                    escape(&b.label)
                );
            }
            let width = scale(b.figure.value).max(1.0);
            let _ = write!(
                out,
                "<rect x=\"{LABEL}\" y=\"{}\" width=\"{width:.1}\" height=\"{bar}\" fill=\"{}\"/>",
                middle - bar / 2,
                b.color
            );
            let mut end = width;
            if let Some((fastest, slowest)) = b.figure.spread {
                let (from, to) = (LABEL as f64 + scale(fastest), LABEL as f64 + scale(slowest));
                let _ = write!(
                    out,
                    "<path stroke=\"#222\" fill=\"none\" d=\"M{from:.1} {} v6 M{from:.1} {middle} H{to:.1} M{to:.1} {} v6\"/>",
                    middle - 3,
                    middle - 3
                );
                end = end.max(scale(slowest));
            }
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{}\">{}</text>",
                LABEL as f64 + end + 6.0,
                middle + 4,
                escape(&b.figure.text)
            );
            y += row;
        }
        y += GAP;
    }
    out.push_str("</svg>\n");
}

fn layout_color(layout: Option<Layout>, index: usize) -> &'static str {
    const SHREDDED: [&str; 4] = ["#1f5fa8", "#7fb2e5", "#c0392b", "#f1948a"];
    match layout {
        Some(Layout::Unshredded) => "#8c8c8c",
        Some(_) => SHREDDED[index.saturating_sub(1) % SHREDDED.len()],
        None => SHREDDED[index % SHREDDED.len()],
    }
}

fn leaf_color(last: Option<&str>) -> &'static str {
    match last {
        Some("typed_value") => "#1f5fa8",
        Some("value") => "#e67e22",
        _ => "#8c8c8c",
    }
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\
.scroll{overflow-x:auto;max-width:100%;margin:8px 0 24px}\
table{border-collapse:collapse}\
th,td{padding:3px 10px;white-space:nowrap;border-bottom:1px solid #ddd;text-align:right}\
tr>th:first-child{text-align:left;font-weight:normal;font-family:monospace}\
thead th{font-weight:bold;font-family:inherit;background:#f3f3f3}\
svg{max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif;fill:#222}\
svg.grouped text{font-size:10px}\
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}\
h2{font-size:16px;margin-top:28px}";

/// Two texts from 20 characters before where they first differ, each cut
/// to 60 characters with `…` where cut: a row can be kilobytes long.
/// An empty text is a row that is not there.
fn difference(expected: &str, found: &str) -> (String, String) {
    const BEFORE: usize = 20;
    const LONGEST: usize = 60;
    let mut common = expected
        .bytes()
        .zip(found.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    // Both texts have the same bytes up to `common`, so a character
    // boundary in one is one in the other.
    while !expected.is_char_boundary(common) {
        common -= 1;
    }
    let start = expected[..common]
        .char_indices()
        .rev()
        .nth(BEFORE - 1)
        .map_or(0, |(i, _)| i);
    let cut = |text: &str| {
        if text.is_empty() {
            return "(no row)".to_string();
        }
        let mut rest = text[start..].chars();
        let mut out: String = if start > 0 {
            "…".into()
        } else {
            String::new()
        };
        out.extend(rest.by_ref().take(LONGEST));
        if rest.next().is_some() {
            out.push('…');
        }
        out
    };
    (cut(expected), cut(found))
}

/// Markdown text as HTML: escaped, and `code` spans as `<code>`.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // Backticks pair up from the left; an unpaired last one stays text.
    while let Some((before, after)) = rest.split_once('`')
        && let Some((code, after)) = after.split_once('`')
    {
        let _ = write!(out, "{}<code>{}</code>", escape(before), escape(code));
        rest = after;
    }
    out.push_str(&escape(rest));
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Bytes in decimal units: `812 B`, `1.60 kB`, `22.39 MB`.
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.2} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}

/// `850 µs`, `12.3 ms`, `1.52 s`.
fn duration(d: Duration) -> String {
    let unit = TimeUnit::of(d);
    format!("{} {}", unit.number(d), unit.name())
}

/// The median and, if the runs differ, the fastest and the slowest in the
/// median's unit: `12.3 ms (11.9–14.0)`.
fn timing(t: Timing) -> String {
    if t.min == t.max {
        return duration(t.median);
    }
    let unit = TimeUnit::of(t.median);
    format!(
        "{} {} ({}–{})",
        unit.number(t.median),
        unit.name(),
        unit.number(t.min),
        unit.number(t.max)
    )
}

/// The unit a duration is shown in, chosen by its size.
#[derive(Clone, Copy)]
enum TimeUnit {
    Micros,
    Millis,
    Seconds,
}

impl TimeUnit {
    fn of(d: Duration) -> TimeUnit {
        match d.as_micros() {
            0..1_000 => TimeUnit::Micros,
            1_000..1_000_000 => TimeUnit::Millis,
            _ => TimeUnit::Seconds,
        }
    }

    fn number(self, d: Duration) -> String {
        match self {
            TimeUnit::Micros => d.as_micros().to_string(),
            TimeUnit::Millis => format!("{:.1}", d.as_secs_f64() * 1e3),
            TimeUnit::Seconds => format!("{:.2}", d.as_secs_f64()),
        }
    }

    fn name(self) -> &'static str {
        match self {
            TimeUnit::Micros => "µs",
            TimeUnit::Millis => "ms",
            TimeUnit::Seconds => "s",
        }
    }
}

/// `1,000,000`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_naturally() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(22_394_584), "22.39 MB");
        assert_eq!(duration(Duration::from_micros(12_345)), "12.3 ms");
        assert_eq!(duration(Duration::from_millis(1520)), "1.52 s");
        let us = Duration::from_micros;
        let spread = |median, min, max| Timing {
            median: us(median),
            min: us(min),
            max: us(max),
        };
        assert_eq!(
            timing(spread(12_345, 11_900, 14_020)),
            "12.3 ms (11.9–14.0)"
        );
        assert_eq!(timing(spread(990, 812, 1_200)), "990 µs (812–1200)");
        assert_eq!(timing(spread(850, 850, 850)), "850 µs");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(count(999), "999");
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert_eq!(inline("a `<b>` c"), "a <code>&lt;b&gt;</code> c");
        assert_eq!(
            difference(r#"{"a":7}"#, r#"{"a":7.0}"#),
            (r#"{"a":7}"#.into(), r#"{"a":7.0}"#.into())
        );
        let long = |x: &str| {
            format!(
                r#"{{"s":"{}","x":{x},"t":"{}"}}"#,
                "é".repeat(50),
                "z".repeat(80)
            )
        };
        let (expected, found) = difference(&long("2.9"), &long("2.90"));
        assert_eq!(
            expected,
            format!(r#"…{}","x":2.9,"t":"{}…"#, "é".repeat(11), "z".repeat(34))
        );
        assert_eq!(
            found,
            format!(r#"…{}","x":2.90,"t":"{}…"#, "é".repeat(11), "z".repeat(33))
        );
        assert_eq!(difference("", "{}"), ("(no row)".into(), "{}".into()));
        assert_eq!(inline("`x` and ` alone"), "<code>x</code> and ` alone");
    }
}
