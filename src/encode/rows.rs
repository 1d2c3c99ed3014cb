//! Lines to column arrays: each line parsed once, straight from its text
//! into the column builders (a Variant column's shredder, or an ordinary
//! column's builder).

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow::datatypes::DataType;

use super::lines::{LineTallies, Lines};
use super::{EncodeOptions, ShredMode};
use crate::error::{Error, ErrorKind, Result};
use crate::json::{JsonNumber, JsonParser, JsonReader, Peek};
use crate::parquet::ColumnSpec;
use crate::shred::{ShredPolicy, Shredder, ShreddingSchema};
use crate::variant::{DuplicateKeys, VariantBuilder, VariantRef};

/// Builds the columns of a batch of lines.
pub(super) struct RowEncoder {
    columns: Vec<ColumnSpec>,
    builders: Vec<ColumnBuilder>,
    split: bool,
    /// Which columns the current line filled.
    seen: Vec<bool>,
    /// Reads split lines, with the options' rule for inexact numbers.
    parser: JsonParser,
    /// With [`DuplicateKeys::KeepLast`], split lines are parsed whole with
    /// this builder first: a value appended to a column cannot be taken
    /// back when its key comes again.
    whole: Option<VariantBuilder>,
    /// The names `whole` starts each batch with (each shredder keeps its
    /// own).
    whole_names: Arc<[String]>,
}

/// The names the Variant builders' dictionaries start each batch with
/// ([`Shredder::with_names`]): those the first lines of a file used, in
/// the order they came. Every batch then gives a name the same id, so its
/// residuals repeat the bytes of other batches', and the file is the same
/// whichever thread encoded which batch. Started empty per batch instead,
/// 1M events rows took 0.5% more; each thread keeping its own names from
/// batch to batch made the file depend on the number of threads (0.4% more
/// with two than with one, 0.5% with three).
#[derive(Clone, Debug, Default)]
pub(super) struct StartingNames {
    /// Per column, in order; empty for ordinary columns.
    columns: Vec<Arc<[String]>>,
    /// Of the builder that parses lines whole (duplicate keys, last kept).
    whole: Arc<[String]>,
}

/// Lines from which [`StartingNames`] are learnt: the names most rows use
/// come within the first few, and the encoding thread waits for them.
const NAMING_LINES: usize = 1000;

enum ColumnBuilder {
    Int64(Int64Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Boolean(BooleanBuilder),
    Variant(Box<Shredder>),
}

impl ColumnBuilder {
    fn append_null(&mut self) {
        match self {
            ColumnBuilder::Int64(b) => b.append_null(),
            ColumnBuilder::Float64(b) => b.append_null(),
            ColumnBuilder::Utf8(b) => b.append_null(),
            ColumnBuilder::Boolean(b) => b.append_null(),
            ColumnBuilder::Variant(s) => s.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Int64(b) => Arc::new(b.finish()),
            ColumnBuilder::Float64(b) => Arc::new(b.finish()),
            ColumnBuilder::Utf8(b) => Arc::new(b.finish()),
            ColumnBuilder::Boolean(b) => Arc::new(b.finish()),
            ColumnBuilder::Variant(s) => Arc::new(s.finish()),
        }
    }
}

impl RowEncoder {
    /// The names that the first lines of `lines` use, encoded as a file
    /// of `columns` encodes them (lines that fail are left out).
    pub(super) fn starting_names(
        lines: &Lines,
        columns: &[ColumnSpec],
        options: &EncodeOptions,
    ) -> StartingNames {
        let mut encoder = RowEncoder::new(columns, options, &StartingNames::default());
        for (_, text) in lines.iter().take(NAMING_LINES) {
            // A bad line's error is reported when its batch is encoded.
            let _ = encoder.encode_line(text);
        }
        StartingNames {
            columns: (encoder.builders.iter())
                .map(|builder| match builder {
                    ColumnBuilder::Variant(shredder) => shredder.names().into(),
                    _ => Arc::from([]),
                })
                .collect(),
            whole: encoder
                .whole
                .as_ref()
                .map_or(Arc::from([]), |b| b.names().into()),
        }
    }

    pub(super) fn new(
        columns: &[ColumnSpec],
        options: &EncodeOptions,
        names: &StartingNames,
    ) -> RowEncoder {
        let policy = match &options.shred {
            ShredMode::Infer(o) => o.preset().policy(),
            _ => ShredPolicy::Faithful,
        };
        let builders = columns
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                ColumnSpec::Plain(f) => match f.data_type() {
                    DataType::Int64 => ColumnBuilder::Int64(Int64Builder::new()),
                    DataType::Float64 => ColumnBuilder::Float64(Float64Builder::new()),
                    DataType::Boolean => ColumnBuilder::Boolean(BooleanBuilder::new()),
                    _ => ColumnBuilder::Utf8(StringBuilder::new()),
                },
                ColumnSpec::Variant { schema, .. } => ColumnBuilder::Variant(Box::new(
                    Shredder::new(schema)
                        .with_policy(policy)
                        .with_inexact_numbers(options.inexact_numbers)
                        .with_duplicate_keys(options.duplicate_keys)
                        .with_names(names.columns.get(i).cloned().unwrap_or_default()),
                )),
            })
            .collect();
        RowEncoder {
            columns: columns.to_vec(),
            builders,
            split: !options.variant_fields.is_empty(),
            seen: vec![false; columns.len()],
            parser: JsonParser::new().with_inexact_numbers(options.inexact_numbers),
            whole: (options.duplicate_keys == DuplicateKeys::KeepLast).then(|| {
                let mut builder =
                    VariantBuilder::new().with_duplicate_keys(DuplicateKeys::KeepLast);
                builder.start_batch(&names.whole);
                builder
            }),
            whole_names: names.whole.clone(),
        }
    }

    /// Encodes every line; a bad line (when skipped) makes the batch start
    /// over without it, since a half-written row cannot be taken back out
    /// of the column builders.
    pub(super) fn encode_batch(
        &mut self,
        lines: &Lines,
        tallies: &mut LineTallies,
    ) -> Result<Vec<ArrayRef>> {
        let mut skipped: Vec<u64> = Vec::new();
        'batch: loop {
            // Counted per attempt: lines before a skipped one are encoded again.
            let (mut inexact, mut first_inexact) = (0, None);
            for (line, text) in lines.iter() {
                if skipped.contains(&line.number) {
                    continue;
                }
                match self.encode_line(text) {
                    Ok(0) => {}
                    Ok(n) => {
                        inexact += u64::from(n);
                        first_inexact = first_inexact.or(Some(line.number));
                    }
                    Err(e) => {
                        tallies.record(line, text, e)?;
                        skipped.push(line.number);
                        self.finish();
                        continue 'batch;
                    }
                }
            }
            tallies.add_inexact(inexact, first_inexact);
            return Ok(self.finish());
        }
    }

    /// Encodes one line; returns how many of its numbers were stored as
    /// inexact doubles.
    pub(super) fn encode_line(&mut self, text: &[u8]) -> Result<u32> {
        if !self.split {
            let ColumnBuilder::Variant(shredder) = &mut self.builders[0] else {
                unreachable!("whole lines go to one Variant column")
            };
            let before = shredder.inexact_numbers();
            shredder.append_json_text(text)?;
            return Ok((shredder.inexact_numbers() - before) as u32);
        }
        if let Some(builder) = &mut self.whole {
            return encode_parsed_line(
                &self.parser,
                builder,
                text,
                &self.columns,
                &mut self.builders,
                &mut self.seen,
            );
        }
        let mut reader = self.parser.reader(text);
        if reader.peek()? != Peek::Object {
            return Err(not_an_object(text, reader.position()));
        }
        self.seen.fill(false);
        let mut key = reader.first_key()?;
        while let Some(k) = key {
            let Some(i) = self.columns.iter().position(|c| column_name(c) == k) else {
                let message = not_sampled(k);
                let error = reader.error_at(reader.position(), message);
                return Err(error.of_kind(ErrorKind::ColumnMismatch));
            };
            if std::mem::replace(&mut self.seen[i], true) {
                let name = k.to_owned();
                return Err(reader.duplicate_key_at(reader.position(), &name));
            }
            append_field(&mut self.builders[i], &mut reader, &self.columns[i])?;
            key = reader.next_key()?;
        }
        reader.finish()?;
        for (builder, seen) in self.builders.iter_mut().zip(&self.seen) {
            if !seen {
                builder.append_null();
            }
        }
        Ok(reader.inexact_count())
    }

    /// The batch's columns; the builders start the next batch.
    pub(super) fn finish(&mut self) -> Vec<ArrayRef> {
        if let Some(whole) = &mut self.whole {
            whole.start_batch(&self.whole_names);
        }
        self.builders
            .iter_mut()
            .map(ColumnBuilder::finish)
            .collect()
    }
}

/// The error for a line that is not an object, at byte `at` of it.
#[cold]
pub(super) fn not_an_object(text: &[u8], at: usize) -> Error {
    Error::json(
        text,
        at,
        "expected a JSON object (with Variant fields named, each line is an object split into columns)",
    )
}

#[cold]
fn not_sampled(key: &str) -> String {
    format!(
        "field {key:?} was not in the sample lines that chose the columns (a larger sample takes it)"
    )
}

/// Encodes a line parsed whole first (keeping the last of duplicate keys):
/// each field from its Variant value.
fn encode_parsed_line(
    parser: &JsonParser,
    builder: &mut VariantBuilder,
    text: &[u8],
    columns: &[ColumnSpec],
    builders: &mut [ColumnBuilder],
    seen: &mut [bool],
) -> Result<u32> {
    builder.start_row();
    let inexact = parser.parse(text, builder)?;
    let (metadata, value) = builder.finish();
    let line = VariantRef::try_new(metadata, value)?;
    let Some(object) = line.as_object() else {
        let start = text.len() - text.trim_ascii_start().len();
        return Err(not_an_object(text, start));
    };
    seen.fill(false);
    for i in 0..object.len() {
        let name = object.field_name(i);
        let Some(c) = columns.iter().position(|c| column_name(c) == name) else {
            return Err(Error::json(text, 0, not_sampled(name)).of_kind(ErrorKind::ColumnMismatch));
        };
        seen[c] = true;
        let field = object.field(i);
        let fits = match (&mut builders[c], &field) {
            (ColumnBuilder::Variant(shredder), _) => {
                // The line's metadata serves the field's value too.
                shredder.append_variant(metadata, object.field_bytes(i))?;
                true
            }
            (builder, VariantRef::Null) => {
                builder.append_null();
                true
            }
            (ColumnBuilder::Int64(b), v) => v.as_i64().map(|v| b.append_value(v)).is_some(),
            (ColumnBuilder::Float64(b), VariantRef::Double(v)) => {
                b.append_value(*v);
                true
            }
            (ColumnBuilder::Utf8(b), VariantRef::String(v)) => {
                b.append_value(v);
                true
            }
            (ColumnBuilder::Boolean(b), VariantRef::Bool(v)) => {
                b.append_value(*v);
                true
            }
            _ => false,
        };
        if !fits {
            return Err(Error::json(text, 0, not_of_column_type(&columns[c])));
        }
    }
    for (builder, seen) in builders.iter_mut().zip(seen.iter()) {
        if !seen {
            builder.append_null();
        }
    }
    Ok(inexact)
}

pub(super) fn column_name(c: &ColumnSpec) -> &str {
    match c {
        ColumnSpec::Plain(f) => f.name(),
        ColumnSpec::Variant { name, .. } => name,
    }
}

/// Appends the reader's next value to an ordinary column, or fails when it
/// is of another type than the sample showed.
fn append_field(
    builder: &mut ColumnBuilder,
    r: &mut JsonReader<'_>,
    column: &ColumnSpec,
) -> Result<()> {
    if let ColumnBuilder::Variant(shredder) = builder {
        return shredder.append_json_value(r);
    }
    let at = r.position();
    let peek = r.peek()?;
    if peek == Peek::Null {
        r.literal(b"null")?;
        builder.append_null();
        return Ok(());
    }
    let ok = match (builder, peek) {
        (ColumnBuilder::Int64(b), Peek::Number) => match r.number()? {
            JsonNumber::Int(v) => {
                b.append_value(v);
                true
            }
            _ => false,
        },
        (ColumnBuilder::Float64(b), Peek::Number) => match r.number()? {
            JsonNumber::Double(v) => {
                b.append_value(v);
                true
            }
            _ => false,
        },
        (ColumnBuilder::Utf8(b), Peek::String) => {
            b.append_value(r.string()?);
            true
        }
        (ColumnBuilder::Boolean(b), Peek::True | Peek::False) => {
            let v = peek == Peek::True;
            r.literal(if v { b"true" } else { b"false" })?;
            b.append_value(v);
            true
        }
        _ => false,
    };
    if ok {
        return Ok(());
    }
    // Valid JSON, of another type than its column.
    Err(r
        .error_at(at, not_of_column_type(column))
        .of_kind(ErrorKind::ColumnMismatch))
}

/// The error for a value that does not fit the ordinary column chosen
/// from the sample.
#[cold]
fn not_of_column_type(column: &ColumnSpec) -> String {
    let field = column.field();
    let kind = ShreddingSchema::from_typed_value_type(field.data_type())
        .map_or_else(|| field.data_type().to_string(), |t| t.type_name());
    format!(
        "field {:?} is a column of {kind} (chosen from the sample lines, or in a dataset by its files before), and this value is not one (a larger sample, or the field as a Variant field, takes it)",
        field.name(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::lines::Source;

    fn lines(text: &str) -> Lines {
        let mut input = text.as_bytes();
        let mut lines = Lines::default();
        Source::new(&mut input)
            .fill_sample(&mut lines, usize::MAX)
            .unwrap();
        lines
    }

    #[test]
    fn a_batch_encodes_alike_whatever_batches_its_encoder_encoded_before() {
        let columns = [ColumnSpec::Variant {
            name: "v".into(),
            schema: ShreddingSchema::Variant,
        }];
        let options = EncodeOptions::default();
        let names = RowEncoder::starting_names(&lines("{\"b\":1,\"a\":2}\n"), &columns, &options);
        assert_eq!(&*names.columns[0], ["b", "a"]);
        let batch = lines("{\"a\":3,\"z\":false}\n{\"c\":4}\n");
        let mut tallies = LineTallies::new(false);
        let mut fresh = RowEncoder::new(&columns, &options, &names);
        let mut used = RowEncoder::new(&columns, &options, &names);
        // A name this encoder's dictionary would otherwise keep, ahead of "z".
        used.encode_batch(&lines("{\"q\":true}\n"), &mut tallies)
            .unwrap();
        let once = fresh.encode_batch(&batch, &mut tallies).unwrap();
        let again = used.encode_batch(&batch, &mut tallies).unwrap();
        assert_eq!(once[0].to_data(), again[0].to_data());
    }
}
