//! The cost model against the file: [`layout_costs`] chooses the columns
//! from the sample as [`encode`](super::encode) does, writes the sample
//! with them in memory (one row group, each typed leaf with the encoding
//! it was priced with), and sets each leaf's estimate beside the bytes it
//! took, before and after compression (`vshred infer --costs`).
//!
//! The model prices bytes before compression, so its estimates are to be
//! read against the `before compression` column; the compressed one shows
//! what the codec made of them, which the model leaves to the sample
//! measurements of [`encode`](super::encode).

use std::io::{BufRead, Write};

use super::lines::{LineTallies, Source};
use super::plan::leaf_encodings;
use super::rows::RowEncoder;
use super::{EncodeOptions, plan_first_sample};
use crate::error::Result;
use crate::infer::LeafEstimate;
use crate::parquet::{LeafSize, WriteOptions, encode_in_memory};

/// One leaf of the sample as written, with the cost model's estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafCost {
    /// The leaf as written; its path starts with the column's name.
    pub written: LeafSize,
    /// The model's estimate, for the typed leaves it priced; its path too
    /// starts with the column's name.
    pub estimate: Option<LeafEstimate>,
}

/// The leaves of the sample written with the layouts inferred from it.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutCosts {
    /// The sample's rows, as written.
    pub rows: usize,
    /// Every leaf of the file, in schema order.
    pub leaves: Vec<LeafCost>,
}

/// Chooses the columns from the first lines of `input` and writes those
/// lines with them in memory, as [`encode`](super::encode) would in one
/// row group, each typed leaf with the encoding it was priced with. The
/// model prices bytes before compression: read its estimates against
/// [`LeafSize::uncompressed`]; the compressed bytes show what the codec
/// made of them, which `encode` leaves to measuring the sample.
///
/// ```
/// use vshred::encode::{EncodeOptions, layout_costs};
/// use vshred::infer::LeafEncoding;
///
/// let lines: String = (0..3000)
///     .map(|i| format!("{{\"id\": {}, \"kind\": \"k{}\"}}\n", 1_000_000 + i, i % 4))
///     .collect();
/// let costs = layout_costs(&mut lines.as_bytes(), &EncodeOptions::default())?;
/// let id = costs.leaves.iter()
///     .find(|leaf| leaf.written.path == ["v", "typed_value", "id", "typed_value"])
///     .unwrap();
/// assert_eq!(id.estimate.as_ref().unwrap().encoding, LeafEncoding::Delta);
/// assert!(id.written.encodings.contains(&"DELTA_BINARY_PACKED".to_string()));
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn layout_costs(input: &mut dyn BufRead, options: &EncodeOptions) -> Result<LayoutCosts> {
    let mut tallies = LineTallies::of(options);
    let (sample, plan) = plan_first_sample(&mut Source::new(input), options, &mut tallies)?;
    let names = RowEncoder::starting_names(&sample, &plan.columns, options);
    let arrays =
        RowEncoder::new(&plan.columns, options, &names).encode_batch(&sample, &mut tallies)?;
    let rows = arrays.first().map_or(0, |a| a.len());
    let write = WriteOptions {
        row_group_rows: usize::MAX,
        leaf_encodings: leaf_encodings(&plan.priced),
        ..options.write.clone()
    };
    let file = encode_in_memory(&plan.columns, arrays, &write)?;
    let leaves = file
        .leaves
        .into_iter()
        .map(|written| LeafCost {
            estimate: plan
                .priced
                .iter()
                .find(|leaf| leaf.path == written.path)
                .cloned(),
            written,
        })
        .collect();
    Ok(LayoutCosts { rows, leaves })
}

impl LayoutCosts {
    /// A markdown table of the leaves, largest written first, and the
    /// totals of the priced ones.
    pub fn write_markdown(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let rows = match self.rows {
            1 => "1 sample row".to_string(),
            n => format!("{n} sample rows"),
        };
        writeln!(out, "{rows}, written as one row group.\n")?;
        writeln!(
            out,
            "| leaf | priced as | estimate | written as | before compression | compressed | estimate / before |"
        )?;
        writeln!(out, "|---|---|---:|---|---:|---:|---:|")?;
        let mut leaves: Vec<&LeafCost> = self.leaves.iter().collect();
        leaves.sort_by_key(|leaf| std::cmp::Reverse(leaf.written.compressed));
        let (mut estimated, mut before, mut after) = (0.0, 0, 0);
        for leaf in leaves {
            let w = &leaf.written;
            let (priced, estimate, ratio) = match &leaf.estimate {
                Some(e) => {
                    estimated += e.bytes;
                    before += w.uncompressed;
                    after += w.compressed;
                    (
                        e.encoding.to_string(),
                        format!("{:.0}", e.bytes),
                        ratio(e.bytes, w.uncompressed),
                    )
                }
                None => (String::new(), String::new(), String::new()),
            };
            writeln!(
                out,
                "| `{}` | {priced} | {estimate} | {} | {} | {} | {ratio} |",
                w.path.join("."),
                w.encodings.join(", "),
                w.uncompressed,
                w.compressed,
            )?;
        }
        writeln!(
            out,
            "| **priced leaves** | | {estimated:.0} | | {before} | {after} | {} |",
            ratio(estimated, before)
        )
    }
}

fn ratio(estimate: f64, written: u64) -> String {
    if written == 0 {
        return String::new();
    }
    format!("{:.2}", estimate / written as f64)
}
