//! The native module of the `vshred` Python package (`vshred._vshred`):
//! the core crate's encoder, dataset reader and JSON kernels, each a
//! function that takes and gives pyarrow arrays by the Arrow C data
//! interface (no copy of the buffers, no JSON in between), and SQL
//! sessions (`sql.rs`). The Python package (`python/vshred/__init__.py`)
//! gives them their documented, keyword signatures.
//!
//! Every function lets go of the interpreter while the core works, so
//! other Python threads run meanwhile (encode and infer take it back once
//! a block of input, for signals: Ctrl-C stops them); every error of the
//! core is a `vshred.VshredError` whose message says where (file, line,
//! row, path), as the CLI's do.

use std::io::BufReader;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

mod exiting;
mod lines;
mod sql;

use arrow::array::{Array, ArrayData, ArrayRef, AsArray, RecordBatch, StructArray, make_array};
use arrow_pyarrow::{PyArrowType, Table};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use vshred::encode::{
    DatasetReport, DatasetSplit, EncodeOptions, EncodeReport, LayoutChoice, LeftUnshredded,
    ShredMode, encode_dataset, infer_columns, layout_json,
};
use vshred::infer::InferOptions;
use vshred::parquet::{Compression, GetRequest, Projected, Projection, ScanOptions, WriteSummary};
use vshred::predicate::Predicate;
use vshred::shred::{ParseJsonOptions, ShreddingSchema, parse_json_column};
use vshred::unshred::json_strings;
use vshred_datafusion::store::find_dataset;

use lines::{ArrowItems, Interruptible, Items, Lines, PyItems, Raised};

create_exception!(
    vshred,
    VshredError,
    PyException,
    "An error of vshred: bad input, a file that cannot be read or written, a usage error. Its message says where (file, line, row, path)."
);

/// Rows per batch read.
const BATCH_ROWS: usize = 8192;

pub(crate) fn failed(e: impl std::fmt::Display) -> PyErr {
    VshredError::new_err(e.to_string())
}

/// A core error, with the argument that is the way out where there is one.
fn failed_with_hint(e: vshred::Error) -> PyErr {
    match e.kind() {
        vshred::ErrorKind::InexactNumber => {
            failed(e.with_hint("inexact_numbers=\"double\" stores the nearest double"))
        }
        vshred::ErrorKind::DuplicateKey => {
            failed(e.with_hint("duplicate_keys=\"last\" keeps the last value"))
        }
        vshred::ErrorKind::AmbiguousColumn => failed(e.with_hint("column=NAME chooses one")),
        vshred::ErrorKind::DatasetExists => failed(e.with_hint("append=True adds to it")),
        vshred::ErrorKind::Conversion => failed(e.with_hint("strict=False gives None instead")),
        _ => failed(e),
    }
}

/// The argument `name`'s `choice` as the core takes it (`"double"`,
/// `"last"`).
fn choice<T: FromStr<Err = vshred::Error>>(name: &str, choice: &str) -> vshred::Result<T> {
    choice
        .parse()
        .map_err(|e: vshred::Error| vshred::Error::from_message(format!("{name} {}", e.message())))
}

/// What `input` is: a path, or JSON texts given one per item (by an Arrow
/// array or a Python iterable). Each is read checking for signals
/// (`lines.rs`); a path's signal's exception goes to its [`Raised`].
enum Input {
    Path(PathBuf, Raised),
    Items(Lines<Box<dyn Items + Send>>),
}

impl Input {
    /// A `str` or `os.PathLike` is a path; an object with
    /// `__arrow_c_array__` (a pyarrow or nanoarrow array) an array whose
    /// values are the texts, and the package's wrapper of a chunked
    /// array's chunks (`_vshred_arrow_chunks`) arrays taken in turn; any
    /// other iterable gives one JSON text per item.
    fn of(input: &Bound<'_, PyAny>) -> PyResult<Input> {
        if let Ok(path) = input.extract::<PathBuf>() {
            return Ok(Input::Path(path, Raised::new(input.py())));
        }
        let items: Box<dyn Items + Send> = if let Some(chunks) =
            input.getattr_opt("_vshred_arrow_chunks")?
        {
            Box::new(ArrowItems::of_chunks(&chunks)?)
        } else if input.hasattr("__arrow_c_array__")? {
            let array = make_array(input.extract::<PyArrowType<ArrayData>>()?.0);
            Box::new(ArrowItems::of_array(array).map_err(|e| lines::not_texts(&e))?)
        } else if input.is_instance_of::<pyo3::types::PyDict>() {
            // Iterated, it gives its keys.
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "the input is a dict, not JSON texts: give an iterable of texts ([json.dumps(d)] for one row)",
            ));
        } else if iterable(input)? {
            // What its `__iter__` raises is the caller's, raised as it is.
            Box::new(PyItems::new(input)?)
        } else {
            let given = match input.is_none() {
                true => "None".into(),
                false => input.get_type().name()?.to_string(),
            };
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "the input is a path or an iterable of JSON strings, not {given}"
            )));
        };
        Ok(Input::Items(Lines::new(items, Raised::new(input.py()))))
    }

    /// Where a signal's exception, or an iterable's own, goes.
    fn raised(&self) -> Raised {
        match self {
            Input::Path(_, raised) => raised.clone(),
            Input::Items(lines) => lines.raised(),
        }
    }

    /// Runs `work` on the input as a reader; errors name the input file.
    fn read<T>(
        self,
        work: impl FnOnce(&mut dyn std::io::BufRead) -> vshred::Result<T>,
    ) -> vshred::Result<T> {
        match self {
            Input::Path(path, raised) => {
                let file = std::fs::File::open(&path).map_err(|e| vshred::Error::io(&path, e))?;
                let file = Interruptible::new(file, raised);
                work(&mut BufReader::with_capacity(lines::BLOCK, file))
                    .map_err(|e| e.in_file(&path))
            }
            Input::Items(mut lines) => {
                let done = work(&mut lines);
                done.map_err(|e| lines.placed_in_item(e))
            }
        }
    }
}

/// Whether `object` is iterable as `iter()` takes it, by its type's
/// `__iter__` or `__getitem__`, without calling them.
fn iterable(object: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind = object.get_type();
    Ok(kind.hasattr("__iter__")? || kind.hasattr("__getitem__")?)
}

/// The count argument `name`, refused below 1 as the CLI refuses it. Taken
/// as any Python int: as an unsigned one, a negative count was an
/// `OverflowError` that named no argument.
fn at_least_one<T: TryFrom<i128>>(name: &str, count: Option<i128>) -> vshred::Result<Option<T>> {
    count
        .map(|n| match T::try_from(n) {
            Ok(count) if n >= 1 => Ok(count),
            // The largest the type holds (2^k - 1, k down from 127): a count past
            // it is refused naming the bound.
            Err(_) if n >= 1 => {
                let largest = (0..127)
                    .map(|shift| i128::MAX >> shift)
                    .find(|&m| T::try_from(m).is_ok())
                    .unwrap_or(0);
                Err(vshred::Error::from_message(format!(
                    "{name} must be a whole number from 1 to {largest}, not {n}"
                )))
            }
            _ => Err(vshred::Error::from_message(format!(
                "{name} must be a whole number from 1, not {n}"
            ))),
        })
        .transpose()
}

/// `max_columns`, `max_depth` and `min_frequency`, the inference's
/// limits, as Python gives them (`None`: the default).
type InferLimits = (Option<i128>, Option<i128>, Option<f64>);

/// The encoder's options from the Python arguments.
fn encode_options(
    variant_fields: Option<Vec<String>>,
    shred: &str,
    sample_rows: Option<i128>,
    (max_columns, max_depth, min_frequency): InferLimits,
    inexact: &str,
    duplicates: &str,
) -> vshred::Result<EncodeOptions> {
    let defaults = EncodeOptions::default();
    let sample_rows = at_least_one("sample_rows", sample_rows)?.unwrap_or(defaults.sample_rows);
    let mut infer = InferOptions::default().with_sample_rows(sample_rows);
    if let Some(n) = at_least_one("max_columns", max_columns)? {
        infer = infer.with_max_columns(n);
    }
    if let Some(n) = max_depth {
        let n = usize::try_from(n).map_err(|_| {
            vshred::Error::from_message(format!("max_depth must be a whole number from 0, not {n}"))
        })?;
        infer = infer.with_max_depth(n);
    }
    if let Some(share) = min_frequency {
        if !(0.0..=1.0).contains(&share) {
            return Err(vshred::Error::from_message(format!(
                "min_frequency must be a share from 0 to 1 (0.1 is 10%), not {share}"
            )));
        }
        infer = infer.with_min_frequency(share);
    }
    Ok(EncodeOptions {
        variant_fields: variant_fields.unwrap_or_default(),
        shred: ShredMode::from_choice(shred, infer)?,
        sample_rows,
        inexact_numbers: choice("inexact_numbers", inexact)?,
        duplicate_keys: choice("duplicate_keys", duplicates)?,
        ..defaults
    })
}

/// Encodes JSON lines into a Parquet file, or into a dataset directory
/// when a file size is given; returns what was written.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn encode<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    output: PathBuf,
    variant_fields: Option<Vec<String>>,
    shred: String,
    decimal: String,
    compression: String,
    row_group_rows: Option<i128>,
    sample_rows: Option<i128>,
    max_columns: Option<i128>,
    max_depth: Option<i128>,
    min_frequency: Option<f64>,
    bloom_filters: Option<Vec<String>>,
    inexact_numbers: String,
    duplicate_keys: String,
    skip_bad_lines: bool,
    max_file_rows: Option<i128>,
    max_file_bytes: Option<i128>,
    append: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Input::of(input)?;
    let raised = input.raised();
    let items = matches!(input, Input::Items(_));
    let encoded = exiting::detach(py, move || -> vshred::Result<_> {
        let mut options = encode_options(
            variant_fields,
            &shred,
            sample_rows,
            (max_columns, max_depth, min_frequency),
            &inexact_numbers,
            &duplicate_keys,
        )?;
        options.write.decimals = decimal.parse().map_err(|e: vshred::Error| {
            vshred::Error::from_message(format!("decimal {}", e.message()))
        })?;
        options.write.compression = compression.parse::<Compression>()?;
        if let Some(rows) = at_least_one("row_group_rows", row_group_rows)? {
            options.write.row_group_rows = rows;
        }
        options.bloom_filters = bloom_filters.unwrap_or_default();
        options.skip_bad_lines = skip_bad_lines;
        options.items = items;
        let split = DatasetSplit {
            max_file_rows: at_least_one("max_file_rows", max_file_rows)?,
            max_file_bytes: at_least_one("max_file_bytes", max_file_bytes)?,
            append,
        };
        if split.max_file_rows.is_none() && split.max_file_bytes.is_none() {
            if append {
                return Err(vshred::Error::from_message(
                    "append adds files to a dataset: give max_file_rows or max_file_bytes".into(),
                ));
            }
            if vshred::output::names_a_directory(&output) {
                return Err(vshred::Error::from_message(format!(
                    "{}: a directory takes a dataset of files, which max_file_rows or max_file_bytes writes; give a file's name to write one file",
                    output.display()
                )));
            }
            return input
                .read(|reader| vshred::encode::encode(reader, &output, &options, &mut |_| {}))
                .map(Encoded::File);
        }
        input
            .read(|reader| encode_dataset(reader, &output, &options, &split, &mut |_| {}))
            .map(Encoded::Dataset)
    })
    .map_err(|e| raised.take().unwrap_or_else(|| failed_with_hint(e)))?;
    let written = PyDict::new(py);
    let (lines, unsampled, unsampled_layout) = match encoded {
        Encoded::File(report) => {
            set_written(&written, &report.written)?;
            written.set_item("layout", layout_json(&report.columns))?;
            set_left_unshredded(&written, &report.left_unshredded)?;
            (
                report.lines,
                report.unsampled_variant_fields,
                report.unsampled_layout_fields,
            )
        }
        Encoded::Dataset(report) => {
            let files = PyList::empty(py);
            for part in &report.files {
                let file = PyDict::new(py);
                file.set_item("path", &part.path)?;
                set_written(&file, &part.written)?;
                file.set_item("layout", layout_json(&part.columns))?;
                let reinferred = matches!(
                    part.layout,
                    LayoutChoice::Reinferred { .. } | LayoutChoice::Unused { .. }
                );
                file.set_item("reinferred", reinferred)?;
                file.set_item("bloom_filters_left_out", &part.bloom_filters_left_out)?;
                set_left_unshredded(&file, &part.left_unshredded)?;
                files.append(file)?;
            }
            let sum = |of: fn(&WriteSummary) -> u64| -> u64 {
                report.files.iter().map(|part| of(&part.written)).sum()
            };
            written.set_item("rows", sum(|w| w.rows))?;
            written.set_item("row_groups", sum(|w| w.row_groups as u64))?;
            written.set_item("bytes", sum(|w| w.bytes))?;
            written.set_item("files", files)?;
            (
                report.lines,
                report.unsampled_variant_fields,
                report.unsampled_layout_fields,
            )
        }
    };
    written.set_item("bad_lines", lines.bad_lines)?;
    // Of the texts given one by one, a text cut short is only that.
    let first_bad_line = match items {
        true => lines
            .first_bad_line
            .as_deref()
            .map(vshred::json::without_json_lines_hints),
        false => lines.first_bad_line,
    };
    written.set_item("first_bad_line", first_bad_line)?;
    written.set_item("inexact_numbers", lines.inexact_numbers)?;
    written.set_item("first_inexact_line", lines.first_inexact_line)?;
    written.set_item("unsampled_variant_fields", unsampled)?;
    written.set_item("unsampled_layout_fields", unsampled_layout)?;
    Ok(written)
}

/// What [`encode`] wrote: one file, or a dataset's.
enum Encoded {
    File(EncodeReport),
    Dataset(DatasetReport),
}

/// The columns `auto` left unshredded in a file, as `left_unshredded`
/// into `dict`.
fn set_left_unshredded(dict: &Bound<'_, PyDict>, columns: &[LeftUnshredded]) -> PyResult<()> {
    let left = PyList::empty(dict.py());
    for column in columns {
        let said = PyDict::new(dict.py());
        said.set_item("column", &column.column)?;
        said.set_item("unshredded_bytes", column.unshredded_bytes)?;
        said.set_item("shredded_bytes", column.shredded_bytes)?;
        said.set_item("whole_file", column.whole_file)?;
        said.set_item("in_row_groups", column.in_row_groups)?;
        left.append(said)?;
    }
    dict.set_item("left_unshredded", left)
}

/// A file's `rows`, `row_groups` and `bytes` into `dict`.
fn set_written(dict: &Bound<'_, PyDict>, written: &WriteSummary) -> PyResult<()> {
    dict.set_item("rows", written.rows)?;
    dict.set_item("row_groups", written.row_groups)?;
    dict.set_item("bytes", written.bytes)
}

/// The layout the encoder would choose for the input, as JSON text.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn infer<'py>(
    py: Python<'py>,
    input: &Bound<'_, PyAny>,
    variant_fields: Option<Vec<String>>,
    shred: String,
    sample_rows: Option<i128>,
    max_columns: Option<i128>,
    max_depth: Option<i128>,
    min_frequency: Option<f64>,
    inexact_numbers: String,
    duplicate_keys: String,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Input::of(input)?;
    let raised = input.raised();
    let inferred = exiting::detach(py, move || -> vshred::Result<_> {
        let options = encode_options(
            variant_fields,
            &shred,
            sample_rows,
            (max_columns, max_depth, min_frequency),
            &inexact_numbers,
            &duplicate_keys,
        )?;
        input.read(|reader| infer_columns(reader, &options))
    })
    .map_err(|e| raised.take().unwrap_or_else(|| failed_with_hint(e)))?;
    // The keys `encode` gives of its sample, for the same warnings.
    let said = PyDict::new(py);
    said.set_item("layout", layout_json(&inferred.columns))?;
    said.set_item("inexact_numbers", inferred.inexact_numbers)?;
    said.set_item("first_inexact_line", inferred.first_inexact_line)?;
    said.set_item(
        "unsampled_variant_fields",
        inferred.unsampled_variant_fields,
    )?;
    said.set_item("unsampled_layout_fields", inferred.unsampled_layout_fields)?;
    Ok(said)
}

/// Whether the file at `path` starts with a JSON array: encoded as one
/// row, it was most likely meant as a row per element.
#[pyfunction]
fn file_starts_with_an_array(path: PathBuf) -> bool {
    vshred::json::file_starts_with_an_array(&path)
}

/// The value at `path` of each row of a file, directory or glob, and what
/// the read found worth saying (a filter no row can pass).
#[pyfunction]
fn get(
    py: Python<'_>,
    source: PathBuf,
    path: String,
    as_type: String,
    r#where: Option<String>,
    column: Option<String>,
    strict: bool,
) -> PyResult<(Vec<PyArrowType<ArrayData>>, Vec<String>)> {
    let raised = Raised::new(py);
    let signals = raised.clone();
    let (values, warnings) = exiting::detach(
        py,
        move || -> vshred::Result<(Vec<ArrayRef>, Vec<String>)> {
            let dataset = find_dataset(&source)?;
            let request = GetRequest {
                column: dataset.choose_variant_column(column.as_deref())?,
                path: path.parse()?,
                as_type: ShreddingSchema::parse_type_name(&as_type)?,
                strict,
                filter: r#where.as_deref().map(Predicate::parse).transpose()?,
            };
            let mut parts: Vec<ArrayRef> = Vec::new();
            let stats =
                dataset.get_with(&request, &[], &ScanOptions::new(BATCH_ROWS), |values, _| {
                    signals.interrupted()?;
                    parts.push(values.clone());
                    Ok(())
                })?;
            let values = concatenated(parts, || {
                vshred::get::result_field("", &request.as_type)
                    .data_type()
                    .clone()
            })?;
            Ok((values, stats.read.warnings))
        },
    )
    .map_err(|e| raised.take().unwrap_or_else(|| failed_with_hint(e)))?;
    let values = values.iter().map(|v| PyArrowType(v.to_data())).collect();
    Ok((values, warnings))
}

/// `parts` as one array (an empty one of `data_type` when none), or as
/// they are where one array cannot hold them (texts past 2 GiB), for a
/// chunked array.
fn concatenated(
    parts: Vec<ArrayRef>,
    data_type: impl FnOnce() -> arrow::datatypes::DataType,
) -> vshred::Result<Vec<ArrayRef>> {
    if parts.is_empty() {
        return Ok(vec![arrow::array::new_empty_array(&data_type())]);
    }
    let arrays: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
    match arrow::compute::concat(&arrays) {
        Ok(one) => Ok(vec![one]),
        Err(arrow::error::ArrowError::OffsetOverflowError(_)) => Ok(parts),
        Err(e) => Err(vshred::Error::from_message(e.to_string())),
    }
}

/// The rows of a file, directory or glob: the `columns` (all if `None`),
/// Variant columns unshredded, with the `arrow.parquet.variant` extension
/// type in their fields.
#[pyfunction]
fn read(
    py: Python<'_>,
    source: PathBuf,
    columns: Option<Vec<String>>,
) -> PyResult<PyArrowType<Table>> {
    let raised = Raised::new(py);
    let signals = raised.clone();
    let (batches, schema) = exiting::detach(py, move || -> vshred::Result<_> {
        let dataset = find_dataset(&source)?;
        let names = match columns {
            Some(names) => names,
            None => dataset.columns()?.all.clone(),
        };
        let projection = Projection {
            outputs: names
                .into_iter()
                .map(|name| (name.clone(), Projected::Column(name)))
                .collect(),
            ..Projection::default()
        };
        let schema = dataset.projection_schema(&projection)?;
        let mut batches: Vec<RecordBatch> = Vec::new();
        dataset.project(
            &projection,
            &schema,
            &ScanOptions::new(BATCH_ROWS),
            |batch| {
                signals.interrupted()?;
                batches.push(batch);
                Ok(())
            },
        )?;
        Ok((batches, schema))
    })
    .map_err(|e| raised.take().unwrap_or_else(|| failed(e)))?;
    Ok(PyArrowType(
        Table::try_new(batches, schema).map_err(failed)?,
    ))
}

/// The Variant of each JSON text of a string array.
#[pyfunction]
fn parse_json(
    py: Python<'_>,
    chunks: Vec<PyArrowType<ArrayData>>,
    strict: bool,
    inexact_numbers: String,
    duplicate_keys: String,
) -> PyResult<Vec<PyArrowType<ArrayData>>> {
    let chunks: Vec<ArrayRef> = chunks.into_iter().map(|c| make_array(c.0)).collect();
    let raised = Raised::new(py);
    let signals = raised.clone();
    let variants = exiting::detach(py, move || {
        let options = ParseJsonOptions {
            strict,
            inexact_numbers: choice("inexact_numbers", &inexact_numbers)?,
            duplicate_keys: choice("duplicate_keys", &duplicate_keys)?,
        };
        in_parts(&chunks, &signals, |part| {
            Ok(Arc::new(parse_json_column(part, options)?))
        })
    })
    .map_err(|e| raised.take().unwrap_or_else(|| failed_with_hint(e)))?;
    Ok(variants.iter().map(|v| PyArrowType(v.to_data())).collect())
}

/// The JSON text of each Variant of a Variant array (shredded or not),
/// given as its chunks.
#[pyfunction]
fn to_json(
    py: Python<'_>,
    chunks: Vec<PyArrowType<ArrayData>>,
) -> PyResult<Vec<PyArrowType<ArrayData>>> {
    // The core's reader takes a column that lacks them as one whose
    // projection left them out, each row's JSON `null`: a struct without
    // `metadata`, or without both `value` and `typed_value`, is refused
    // here. (A fully shredded column has no `value`.)
    let shaped = |column: &&StructArray| {
        let has = |name| column.column_by_name(name).is_some();
        has("metadata") && (has("value") || has("typed_value"))
    };
    let mut variants = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let chunk = make_array(chunk.0);
        let Some(struct_array) = chunk.as_struct_opt().filter(shaped) else {
            return Err(failed(format!(
                "to_json takes a Variant array (a struct of binary metadata and value, and \
                 optionally typed_value), not {}",
                chunk.data_type()
            )));
        };
        variants.push(Arc::new(struct_array.clone()) as ArrayRef);
    }
    let raised = Raised::new(py);
    let signals = raised.clone();
    let text = exiting::detach(py, move || {
        in_parts(&variants, &signals, |part| {
            Ok(Arc::new(json_strings(part.as_struct())?))
        })
    })
    .map_err(|e| raised.take().unwrap_or_else(|| failed(e)))?;
    Ok(text.iter().map(|t| PyArrowType(t.to_data())).collect())
}

/// Rows that [`in_parts`] works on between checks for signals: a
/// fraction of a second of `parse_json` or `to_json`.
const PART_ROWS: usize = 1 << 16;

/// `f` over the rows of `chunks`, [`PART_ROWS`] at a time, checking for
/// signals (Ctrl-C) between parts: the parts' results, not concatenated
/// (a column of more than 2 GiB of text or bytes is several arrays), an
/// error naming its row among all the chunks'.
fn in_parts(
    chunks: &[ArrayRef],
    raised: &Raised,
    f: impl Fn(&ArrayRef) -> vshred::Result<ArrayRef>,
) -> vshred::Result<Vec<ArrayRef>> {
    let mut parts = Vec::new();
    let mut first_row = 0;
    for chunk in chunks {
        // An empty chunk gives an empty result, of the result's type.
        for start in (0..chunk.len().max(1)).step_by(PART_ROWS) {
            raised.interrupted()?;
            let part = chunk.slice(start, PART_ROWS.min(chunk.len() - start));
            let at = first_row + start as u64;
            parts.push(f(&part).map_err(|e| match e.row() {
                Some(row) => e.with_row(at + row),
                None => e,
            })?);
        }
        first_row += chunk.len() as u64;
    }
    Ok(parts)
}

#[pymodule]
fn _vshred(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // The core turns the parquet crate's panics on corrupt files into
    // errors (a `VshredError`), and a panic of the module's own code
    // reaches Python as PyO3's `PanicException`, its message in it: the
    // default hook would print each on stderr besides, with a backtrace
    // header. The hook is this module's alone (each extension module
    // links its own standard library). `RUST_BACKTRACE` set keeps the
    // default, to see where a panic the module turned into an error was.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    module.add("VshredError", module.py().get_type::<VshredError>())?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_function(wrap_pyfunction!(encode, module)?)?;
    module.add_function(wrap_pyfunction!(infer, module)?)?;
    module.add_function(wrap_pyfunction!(file_starts_with_an_array, module)?)?;
    module.add_function(wrap_pyfunction!(get, module)?)?;
    module.add_function(wrap_pyfunction!(read, module)?)?;
    module.add_function(wrap_pyfunction!(parse_json, module)?)?;
    module.add_function(wrap_pyfunction!(to_json, module)?)?;
    module.add_class::<sql::Session>()?;
    // Run before the interpreter finalizes: `exiting.rs` says why.
    let atexit = module.py().import("atexit")?;
    atexit.call_method1("register", (wrap_pyfunction!(exiting::drain, module)?,))?;
    Ok(())
}
