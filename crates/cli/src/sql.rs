//! `vshred sql`: statements run by DataFusion with the Variant functions
//! and tables of `vshred-datafusion`, their rows printed as a table, JSON
//! Lines (Variants in place, as `cat` prints them) or CSV (Variants, and
//! structs, lists and maps, as JSON text).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use clap::{Args, ValueEnum};
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use vshred::parquet::is_variant_field;
use vshred::unshred::{JsonRows, NullFields, column_json_strings};
use vshred_datafusion::functions::error_message;
use vshred_datafusion::statements::{execute, in_statement, parse_statements};

use crate::failure::{Context, Failure};

#[derive(Args)]
pub struct SqlArgs {
    /// The statements, separated by `;`; each one that returns rows prints
    /// them. Without it or --file: statements from stdin, or a prompt
    /// (with history) when stdin is a terminal.
    #[arg(conflicts_with = "file")]
    query: Option<String>,
    /// Read the statements from this file instead.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// How rows are printed.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// A session setting, as `key=value`
    /// (`datafusion.execution.batch_size=8192`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    settings: Vec<String>,
    /// Print each statement's elapsed time on stderr.
    #[arg(long)]
    timing: bool,
    /// Run the statements on these workers (`vshred worker`), as
    /// `HOST:PORT` or `http://HOST:PORT`, separated by commas.
    #[arg(
        long,
        value_name = "ADDR,...",
        value_delimiter = ',',
        requires = "token_file"
    )]
    workers: Vec<String>,
    /// The cluster's shared secret, the first line of this file (with
    /// --workers).
    #[arg(long, value_name = "FILE", requires = "workers")]
    token_file: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// An aligned table.
    Table,
    /// One JSON object per row, Variant values as JSON in their place.
    Json,
    /// CSV with a header, Variant values as JSON text.
    Csv,
}

/// A DataFusion error as one line.
pub(crate) fn failure(e: impl std::fmt::Display) -> Failure {
    let text = e.to_string();
    Failure::Io(io::Error::other(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
    ))
}

pub fn run_sql(args: SqlArgs) -> Result<(), Failure> {
    // SHOW and information_schema, as datafusion-cli has them.
    let mut config = vshred_datafusion::session_config().with_information_schema(true);
    // The runtime's settings (`datafusion.runtime.memory_limit`) are not
    // the session's options: `SET` makes them, once there is a session.
    let mut runtime_settings = Vec::new();
    for setting in &args.settings {
        let Some((key, value)) = setting.split_once('=') else {
            return Err(failure(format!(
                "--set {setting}: expected KEY=VALUE (see vshred sql --help)"
            )));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.starts_with("datafusion.runtime.") {
            runtime_settings.push((setting, key, value));
            continue;
        }
        config
            .options_mut()
            .set(key, value)
            .map_err(|e| failure(format!("--set {setting}: {}", error_message(&e))))?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(vshred::threads::STACK_BYTES)
        .enable_all()
        .build()?;
    let ctx = match &args.token_file {
        Some(token_file) => {
            let token = crate::worker::read_token(token_file)?;
            let workers = args
                .workers
                .iter()
                .map(|w| worker_url(w))
                .collect::<Result<Vec<_>, _>>()?;
            runtime.block_on(async {
                vshred_distributed::cluster::check_workers(&workers, &token)
                    .await
                    .map_err(failure)?;
                vshred_distributed::cluster::context(config, workers, &token).map_err(failure)
            })?
        }
        _ => runtime.block_on(async { vshred_datafusion::context(config) }),
    };
    for (setting, key, value) in runtime_settings {
        let set = format!("SET {key} = '{}'", value.replace('\'', "''"));
        runtime
            .block_on(async { ctx.sql(&set).await?.collect().await })
            .map_err(|e| failure(format!("--set {setting}: {}", error_message(&e))))?;
    }
    let text = match (&args.query, &args.file) {
        (Some(query), _) => query.clone(),
        (None, Some(file)) => std::fs::read_to_string(file).context(file)?,
        (None, None) if io::stdin().is_terminal() => return prompt(&runtime, &ctx, &args),
        (None, None) => io::read_to_string(io::stdin())?,
    };
    runtime.block_on(run_statements(&ctx, &text, &args))
}

/// A worker's URL, `http://` added to a bare `HOST:PORT`.
fn worker_url(worker: &str) -> Result<url::Url, Failure> {
    let worker = worker.trim();
    if worker.is_empty() {
        return Err(failure(
            "--workers: an empty address (give HOST:PORT, separated by commas)",
        ));
    }
    let text = if worker.contains("://") {
        worker.to_string()
    } else {
        format!("http://{worker}")
    };
    let url = url::Url::parse(&text).map_err(|e| failure(format!("--workers {worker}: {e}")))?;
    // The channel speaks plain HTTP/2 whatever the URL says: `https://`
    // would send the token in the clear to one who thinks it is not.
    if url.scheme() != "http" {
        return Err(failure(format!(
            "--workers {worker}: a worker is reached by http:// (TLS between machines is not built in)"
        )));
    }
    Ok(url)
}

/// Runs each statement of `text` in turn, printing the rows of those that
/// return some; the first that fails stops the rest.
async fn run_statements(ctx: &SessionContext, text: &str, args: &SqlArgs) -> Result<(), Failure> {
    let failed = |e: DataFusionError| failure(error_message(&e));
    let statements = parse_statements(ctx, text).map_err(failed)?;
    let count = statements.len();
    let mut out = io::stdout().lock();
    for (index, statement) in statements.into_iter().enumerate() {
        let started = Instant::now();
        let batches = async {
            let frame = execute(ctx, statement).await?;
            let schema = Arc::new(frame.schema().as_arrow().clone());
            let batches = frame.collect().await?;
            // No rows still have their columns, for a header to name.
            Ok(match batches.is_empty() {
                true => vec![RecordBatch::new_empty(schema)],
                false => batches,
            })
        }
        .await
        .map_err(|e| failed(in_statement(e, index, count)))?;
        print(&batches, args.format, &mut out)?;
        out.flush()?;
        if args.timing {
            eprintln!("Elapsed {:.3} seconds.", started.elapsed().as_secs_f64());
        }
    }
    Ok(())
}

/// Reads statements at a prompt until `\q`, `quit`, `exit` or end of
/// input, each run once its line ends with `;`; an error is printed and
/// the prompt goes on. Lines are kept in `~/.vshred_history`.
fn prompt(
    runtime: &tokio::runtime::Runtime,
    ctx: &SessionContext,
    args: &SqlArgs,
) -> Result<(), Failure> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::DefaultEditor::new().map_err(failure)?;
    let history = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".vshred_history"));
    if let Some(history) = &history {
        // None yet, the first time.
        let _ = editor.load_history(history);
    }
    let mut statement = String::new();
    loop {
        let shown = if statement.is_empty() {
            "vshred> "
        } else {
            "     -> "
        };
        match editor.readline(shown) {
            Ok(line) => {
                let trimmed = line.trim();
                if statement.is_empty() && matches!(trimmed, "\\q" | "quit" | "exit") {
                    break;
                }
                statement.push_str(&line);
                statement.push('\n');
                if trimmed.ends_with(';') {
                    let _ = editor.add_history_entry(statement.trim_end());
                    if let Err(e) = runtime.block_on(run_statements(ctx, &statement, args)) {
                        eprintln!("vshred: {e}");
                    }
                    statement.clear();
                }
            }
            // Ctrl-C drops the statement being typed.
            Err(ReadlineError::Interrupted) => statement.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(failure(e)),
        }
    }
    if let Some(history) = &history {
        let _ = editor.save_history(history);
    }
    Ok(())
}

fn print(batches: &[RecordBatch], format: Format, out: &mut impl Write) -> Result<(), Failure> {
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    // DDL and SET return no rows, and print nothing.
    if rows == 0 && batches.iter().all(|b| b.num_columns() == 0) {
        return Ok(());
    }
    match format {
        Format::Json => {
            let mut line = Vec::new();
            for batch in batches {
                let variants: Vec<String> = batch
                    .schema()
                    .fields()
                    .iter()
                    .filter(|f| is_variant_field(f))
                    .map(|f| f.name().clone())
                    .collect();
                let rows = JsonRows::try_new(batch, &variants)?;
                for row in 0..batch.num_rows() {
                    line.clear();
                    rows.write_row(row, &mut line)?;
                    line.push(b'\n');
                    out.write_all(&line)?;
                }
            }
        }
        Format::Table => {
            let mut cut = 0;
            let shown = batches
                .iter()
                .map(|batch| cut_long_texts(variants_as_json(batch)?, &mut cut))
                .collect::<Result<Vec<_>, _>>()?;
            writeln!(
                out,
                "{}",
                arrow::util::pretty::pretty_format_batches(&shown).map_err(failure)?
            )?;
            if cut > 0 {
                eprintln!(
                    "vshred: {cut} of the values shown are cut to {MAX_TABLE_TEXT} characters (…); --format json or csv prints them whole"
                );
            }
        }
        Format::Csv => {
            // A batch at a time into memory, then out: a closed pipe
            // (`| head`) must be told from a failure.
            let mut text = Vec::new();
            for (i, batch) in batches.iter().enumerate() {
                text.clear();
                let batch = variants_as_json(batch)?;
                if i == 0 {
                    let schema = batch.schema();
                    let names = schema.fields().iter().map(|f| Some(f.name().as_str()));
                    csv_record(names, &mut text);
                }
                csv_rows(&batch, &mut text)?;
                out.write_all(&text)?;
            }
        }
    }
    Ok(())
}

/// The rows of `batch` as CSV records into `text`, each value as Arrow
/// displays it. Arrow's CSV writer writes an empty text as it writes null;
/// here, as Spark and DuckDB write them, null is an empty field and an
/// empty text is `""`.
fn csv_rows(batch: &RecordBatch, text: &mut Vec<u8>) -> Result<(), Failure> {
    let options = FormatOptions::default();
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(failure)?;
    let mut fields = vec![String::new(); formatters.len()];
    for row in 0..batch.num_rows() {
        for ((field, formatter), column) in fields.iter_mut().zip(&formatters).zip(batch.columns())
        {
            field.clear();
            if column.is_valid(row) {
                use std::fmt::Write as _;
                write!(field, "{}", formatter.value(row)).map_err(failure)?;
            }
        }
        let values = fields
            .iter()
            .zip(batch.columns())
            .map(|(field, column)| column.is_valid(row).then_some(field.as_str()));
        csv_record(values, text);
    }
    Ok(())
}

/// One CSV record: a field quoted where it holds a comma, a quote or a
/// line break, or is an empty text; a null (`None`) left empty, but in a
/// record of one field, which would be an empty line (that readers skip:
/// the row would be lost), written `""` as an empty text is.
fn csv_record<'a>(fields: impl ExactSizeIterator<Item = Option<&'a str>>, text: &mut Vec<u8>) {
    let alone = fields.len() == 1;
    for (i, field) in fields.enumerate() {
        if i > 0 {
            text.push(b',');
        }
        let Some(field) = field.or(alone.then_some("")) else {
            continue;
        };
        let field = field.as_bytes();
        if field.is_empty()
            || field
                .iter()
                .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        {
            text.push(b'"');
            for &b in field {
                if b == b'"' {
                    text.push(b'"');
                }
                text.push(b);
            }
            text.push(b'"');
        } else {
            text.extend_from_slice(field);
        }
    }
    text.push(b'\n');
}

/// The most characters of one text a table shows: the table printer's
/// time grows with the square of a text's length (8 MB took 7 s, 64 MB
/// more than 5 minutes).
const MAX_TABLE_TEXT: usize = 4096;

/// `batch` with each text (binary as the hex the table shows) longer than
/// [`MAX_TABLE_TEXT`] characters cut there and marked `…`, counted in
/// `cut`.
fn cut_long_texts(batch: RecordBatch, cut: &mut usize) -> Result<RecordBatch, Failure> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let text = shown_text(column).map_err(failure)?;
        // A text of fewer bytes than the limit has fewer characters.
        let long = |s: &&str| s.len() > MAX_TABLE_TEXT && s.chars().nth(MAX_TABLE_TEXT).is_some();
        match text {
            Some(text) if text.as_string::<i32>().iter().flatten().any(|s| long(&s)) => {
                let shown: StringArray = text
                    .as_string::<i32>()
                    .iter()
                    .map(|s| {
                        s.map(|s| match s.char_indices().nth(MAX_TABLE_TEXT) {
                            Some((end, _)) => {
                                *cut += 1;
                                format!("{}…", &s[..end])
                            }
                            None => s.to_string(),
                        })
                    })
                    .collect();
                fields.push(Field::new(field.name(), DataType::Utf8, true));
                columns.push(Arc::new(shown) as ArrayRef);
            }
            _ => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(failure)
}

/// A column of texts as the table shows them, or `None` for one that is
/// not text.
fn shown_text(column: &ArrayRef) -> Result<Option<ArrayRef>, arrow::error::ArrowError> {
    let is_text =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    Ok(match column.data_type() {
        t if is_text(t) => Some(arrow::compute::cast(column, &DataType::Utf8)?),
        DataType::Dictionary(_, values) if is_text(values) => {
            Some(arrow::compute::cast(column, &DataType::Utf8)?)
        }
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            let options = arrow::util::display::FormatOptions::default();
            let hex = arrow::util::display::ArrayFormatter::try_new(column.as_ref(), &options)?;
            let shown: StringArray = (0..column.len())
                .map(|i| column.is_valid(i).then(|| hex.value(i).to_string()))
                .collect();
            Some(Arc::new(shown))
        }
        _ => None,
    })
}

/// `batch` with each Variant column, and each nested column (a struct,
/// list or map, which may hold a Variant, and which CSV cannot hold), as
/// its values' JSON text.
fn variants_as_json(batch: &RecordBatch) -> Result<RecordBatch, Failure> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if is_variant_field(field) || field.data_type().is_nested() {
            fields.push(Field::new(field.name(), DataType::Utf8, true));
            columns.push(
                Arc::new(column_json_strings(field, column, NullFields::Written)?) as ArrayRef,
            );
        } else {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(failure)
}
