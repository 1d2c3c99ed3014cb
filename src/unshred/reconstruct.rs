//! Reconstruction: rows rebuilt as Variant bytes or written straight as
//! JSON text, shredded fields merged with the residual in name order; whole
//! record batches as JSON lines ([`JsonRows`]).

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, NullBufferBuilder, RecordBatch, StringArray,
    StructArray,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field};
use std::sync::Arc;

use super::column::*;
use super::plain::{NullFields, PlainColumn};
use crate::error::{Error, ErrorKind, Result};
use crate::json::{JsonWriter, write_json_string};
use crate::shred::ShreddingSchema;
use crate::variant::{ObjectRef, VariantBuilder, VariantRef};

impl<'a> ShreddedColumn<'a> {
    /// Reconstructs row `row` into `builder` (which must be empty). A null
    /// row writes nothing and returns `false`.
    pub fn write_variant(&self, row: usize, builder: &mut VariantBuilder) -> Result<bool> {
        if self.is_null(row) {
            return Ok(false);
        }
        if !self.root.variant(row, &self.metadata_of(row), builder)? {
            // Present row, nothing stored: the spec says Variant null.
            builder.null();
        }
        Ok(true)
    }

    /// The value of row `row` of an unshredded column (one without
    /// `typed_value`), decoded; `None` for a null or missing row.
    pub fn unshredded_value(&self, row: usize) -> Result<Option<VariantRef<'a>>> {
        if self.is_null(row) {
            return Ok(None);
        }
        match self.root.value_at(row) {
            Some(bytes) => self
                .root
                .decode(row, &self.metadata_of(row), bytes)
                .map(Some),
            None => Ok(None),
        }
    }

    /// Hands `entry` the fields or elements of row `row`
    /// ([`SlotReader::entries`]); nothing for a null row.
    pub(crate) fn entries(
        &self,
        row: usize,
        builder: &mut VariantBuilder,
        entry: impl FnMut(Option<&str>, Entry<'_, 'a>),
    ) -> Result<()> {
        if self.is_null(row) {
            return Ok(());
        }
        self.root
            .entries(row, &self.metadata_of(row), builder, entry)
    }

    /// Appends row `row` as JSON text to `out`; a null row is `null`.
    pub fn write_json(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        if self.is_null(row) {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        let mut sink = JsonSink {
            out,
            writer: &mut self.json.borrow_mut(),
        };
        if !self.root.write(row, &self.metadata_of(row), &mut sink)? {
            out.extend_from_slice(b"null");
        }
        Ok(())
    }
}

/// Rebuilds a whole column as an unshredded one: `metadata` and `value`
/// binaries (null rows stay null).
///
/// ```
/// use vshred::shred::{Shredder, ShreddingSchema};
/// use vshred::unshred::unshred;
/// use vshred::variant::VariantRef;
/// use arrow::array::{Array, AsArray};
///
/// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?);
/// shredder.append_json(br#"{"a": 1, "b": [true]}"#)?;
/// let unshredded = unshred(&shredder.finish())?;
/// let m = unshredded.column_by_name("metadata").unwrap().as_binary::<i32>().value(0);
/// let v = unshredded.column_by_name("value").unwrap().as_binary::<i32>().value(0);
/// let json = vshred::json::variant_to_json_string(&VariantRef::try_new(m, v)?);
/// assert_eq!(json, r#"{"a":1,"b":[true]}"#);
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn unshred(column: &StructArray) -> Result<StructArray> {
    let reader = ShreddedColumn::try_new(column)?;
    if let Some(unshredded) = validated_as_it_is(&reader, column)? {
        return Ok(unshredded);
    }
    let mut metadata = BinaryBuilder::new();
    let mut value = BinaryBuilder::new();
    let mut builder = VariantBuilder::new();
    for row in 0..column.len() {
        builder.reset();
        if reader.write_variant(row, &mut builder)? {
            let (m, v) = builder.finish();
            metadata.append_value(m);
            value.append_value(v);
        } else {
            metadata.append_value(b"");
            value.append_value(b"");
        }
    }
    Ok(StructArray::new(
        ShreddingSchema::Variant.column_fields(),
        vec![
            Arc::new(metadata.finish()) as ArrayRef,
            Arc::new(value.finish()) as ArrayRef,
        ],
        column.nulls().cloned(),
    ))
}

/// `column` as it is, once every row's value is validated, where it is
/// unshredded already and every present row holds a value (as Spark and
/// DuckDB write by default): rebuilding it would copy the same values
/// into new bytes. `None` for any other column.
fn validated_as_it_is(
    reader: &ShreddedColumn,
    column: &StructArray,
) -> Result<Option<StructArray>> {
    let (Some(metadata), Some(value), None) = (
        column.column_by_name("metadata"),
        column.column_by_name("value"),
        column.column_by_name("typed_value"),
    ) else {
        return Ok(None);
    };
    // A null `value` in a present row is the Variant null, which has
    // bytes only once rebuilt; nulls under null rows (as Parquet readers
    // give a null group's children) stay.
    let under_null_rows = |child: &ArrayRef| match (child.nulls(), column.nulls()) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(child), Some(rows)) => (rows.inner() & &!child.inner()).count_set_bits() == 0,
    };
    if !under_null_rows(metadata) || !under_null_rows(value) {
        return Ok(None);
    }
    for row in 0..column.len() {
        reader.unshredded_value(row)?;
    }
    let binary = |array: &ArrayRef| -> Result<ArrayRef> {
        arrow::compute::cast(array, &DataType::Binary).map_err(|e| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("a Variant column's bytes: {e}"),
            )
        })
    };
    Ok(Some(StructArray::new(
        ShreddingSchema::Variant.column_fields(),
        vec![binary(metadata)?, binary(value)?],
        column.nulls().cloned(),
    )))
}

/// A field or an element as [`SlotReader::entries`] gives it.
pub(crate) enum Entry<'b, 'a> {
    /// Bytes of the row's own value (an unshredded one, or a residual),
    /// read with the row's metadata.
    Stored(&'a [u8]),
    /// A typed value rebuilt, with the metadata made for it.
    Rebuilt { metadata: &'b [u8], value: &'b [u8] },
}

/// A field of a partially shredded object, as
/// [`ObjectReader::merged_fields`] gives them.
enum MergedField<'r, 'a> {
    /// Field `r` of the residual object.
    Residual(&'r ObjectRef<'a>, usize),
    /// A shredded field.
    Shredded(&'r FieldName<'a>, &'r SlotReader<'a>),
}

impl<'a> ObjectReader<'a> {
    /// Hands `visit` the fields of the object at `i` in name order: the
    /// shredded ones present there merged with those of `residual`. A
    /// residual field that a shredded one repeats is left out: the
    /// shredded field wins, even when it is missing.
    #[inline]
    fn merged_fields(
        &self,
        i: usize,
        residual: Option<&ObjectRef<'a>>,
        mut visit: impl FnMut(MergedField<'_, 'a>) -> Result<()>,
    ) -> Result<()> {
        let residual_len = residual.map_or(0, |o| o.len());
        let mut r = 0;
        for (name, field) in &self.fields {
            if let Some(res) = residual {
                while r < residual_len && res.field_name(r) < name.name {
                    visit(MergedField::Residual(res, r))?;
                    r += 1;
                }
                if r < residual_len && res.field_name(r) == name.name {
                    r += 1;
                }
            }
            if field.is_present(i) {
                visit(MergedField::Shredded(name, field))?;
            }
        }
        if let Some(res) = residual {
            for r in r..residual_len {
                visit(MergedField::Residual(res, r))?;
            }
        }
        Ok(())
    }
}

impl<'a> SlotReader<'a> {
    /// Writes the slot's value at `i`; `false` when it is missing.
    pub(crate) fn variant(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        b: &mut VariantBuilder,
    ) -> Result<bool> {
        self.write(i, m, b)
    }

    /// Reconstructs the slot's value at `i` into `sink`; `false` when it is
    /// missing. Object fields come in name order, the shredded ones merged
    /// with the residual's.
    pub(super) fn write<S: Sink>(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        sink: &mut S,
    ) -> Result<bool> {
        let value = self.value_at(i);
        let typed = match &self.typed {
            Some(t) if t.is_valid(i) => &t.reader,
            _ => {
                return match value {
                    Some(bytes) => {
                        sink.encoded(self, i, m, bytes)?;
                        Ok(true)
                    }
                    None => Ok(false),
                };
            }
        };
        match typed {
            TypedReader::Object(object) => {
                let residual = match value {
                    Some(bytes) => Some(self.residual_object(i, m, bytes)?),
                    None => None,
                };
                let mut first = true;
                sink.begin_object();
                object.merged_fields(i, residual.as_ref(), |field| match field {
                    MergedField::Residual(res, r) => {
                        sink.key(std::mem::take(&mut first), res.field_name(r));
                        sink.value(&res.field(r))
                    }
                    MergedField::Shredded(name, field) => {
                        sink.field_name(std::mem::take(&mut first), name);
                        field.write(i, m, sink).map(drop)
                    }
                })?;
                sink.end_object().map_err(|e| e.with_row(i as u64))?;
            }
            TypedReader::List(list) => {
                self.no_conflict(i, value)?;
                sink.begin_array();
                for (k, e) in list.offsets.range(i).enumerate() {
                    sink.element(k == 0);
                    // An element's error names its row, not the element.
                    let written = list.element.write(e, m, sink);
                    if !written.map_err(|err| err.with_row(i as u64))? {
                        sink.value(&VariantRef::Null)?;
                    }
                }
                sink.end_array()?;
            }
            primitive => {
                self.no_conflict(i, value)?;
                sink.typed(primitive, i)?;
            }
        }
        Ok(true)
    }
    /// The fields or elements of the slot's value at `i`, each handed to
    /// `entry` with its name (`None` for an element) as it is stored: a
    /// residual's or an unshredded value's bytes, which the row's metadata
    /// reads, or a typed value rebuilt into `builder` with its own
    /// metadata. Nothing for a scalar or a missing value; no value is
    /// rebuilt whole, only the typed fields and elements in it.
    pub(crate) fn entries(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        builder: &mut VariantBuilder,
        mut entry: impl FnMut(Option<&str>, Entry<'_, 'a>),
    ) -> Result<()> {
        let value = self.value_at(i);
        let rebuilt = |slot: &SlotReader<'a>, i: usize, builder: &mut VariantBuilder| {
            builder.reset();
            if !slot.variant(i, m, builder)? {
                builder.null(); // a missing element is the Variant null
            }
            Ok::<_, Error>(())
        };
        match self
            .typed
            .as_ref()
            .filter(|t| t.is_valid(i))
            .map(|t| &t.reader)
        {
            None => {
                let Some(bytes) = value else { return Ok(()) };
                let v = self.decode(i, m, bytes)?;
                if let Some(object) = v.as_object() {
                    for k in 0..object.len() {
                        entry(
                            Some(object.field_name(k)),
                            Entry::Stored(object.field_bytes(k)),
                        );
                    }
                } else if let Some(array) = v.as_array() {
                    for k in 0..array.len() {
                        entry(None, Entry::Stored(array.element_bytes(k)));
                    }
                }
            }
            Some(TypedReader::Object(object)) => {
                let residual = match value {
                    Some(bytes) => Some(self.residual_object(i, m, bytes)?),
                    None => None,
                };
                object.merged_fields(i, residual.as_ref(), |field| {
                    match field {
                        MergedField::Residual(res, r) => {
                            entry(Some(res.field_name(r)), Entry::Stored(res.field_bytes(r)));
                        }
                        MergedField::Shredded(name, field) => {
                            rebuilt(field, i, builder)?;
                            let (metadata, value) = builder.finish();
                            entry(Some(name.name), Entry::Rebuilt { metadata, value });
                        }
                    }
                    Ok(())
                })?;
            }
            Some(TypedReader::List(list)) => {
                self.no_conflict(i, value)?;
                for e in list.offsets.range(i) {
                    rebuilt(&list.element, e, builder).map_err(|err| err.with_row(i as u64))?;
                    let (metadata, value) = builder.finish();
                    entry(None, Entry::Rebuilt { metadata, value });
                }
            }
            Some(_) => self.no_conflict(i, value)?,
        }
        Ok(())
    }

    /// The residual of a partially shredded object, which must be an object.
    pub(super) fn residual_object(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<crate::variant::ObjectRef<'a>> {
        self.decode(i, m, bytes)?.as_object().ok_or_else(|| {
            row_error(
                i,
                &self.path,
                "non-object value with shredded fields (typed_value is an object)",
            )
        })
    }

    pub(super) fn no_conflict(&self, i: usize, value: Option<&[u8]>) -> Result<()> {
        match value {
            Some(_) => Err(row_error(
                i,
                &self.path,
                "conflicting value and typed_value (both are set)",
            )),
            None => Ok(()),
        }
    }
}

/// Each row of a Variant column (shredded or not) as JSON text, null rows
/// null: what `cat` prints of it, with no Variant rebuilt.
///
/// ```
/// use vshred::shred::{Shredder, ShreddingSchema};
/// use vshred::unshred::json_strings;
///
/// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?);
/// shredder.append_json(br#"{"a": 1, "b": [1.50]}"#)?;
/// shredder.append_null();
/// let text = json_strings(&shredder.finish())?;
/// assert_eq!(text.value(0), r#"{"a":1,"b":[1.50]}"#);
/// assert!(arrow::array::Array::is_null(&text, 1));
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn json_strings(column: &StructArray) -> Result<StringArray> {
    let reader = ShreddedColumn::try_new(column)?;
    json_text(
        column.len(),
        |row| reader.is_null(row),
        |row, out| reader.write_json(row, out),
    )
}

/// The JSON text of each row of `array`, a column of `field`: a Variant
/// column's values reconstructed, an ordinary column's as `vshred cat`
/// prints them (structs as objects, lists as arrays, a Variant inside them
/// as its JSON), a struct's SQL-null fields as `null_fields` says; null
/// for null. What a table or CSV shows of a column that has no flat form,
/// and SQL's `to_json` of one.
pub fn column_json_strings(
    field: &Field,
    array: &ArrayRef,
    null_fields: NullFields,
) -> Result<StringArray> {
    let column = PlainColumn::of(field, array)?;
    let nulls = array.logical_nulls();
    json_text(
        array.len(),
        |row| nulls.as_ref().is_some_and(|n| n.is_null(row)),
        |row, out| column.write_json_with(row, out, null_fields),
    )
}

/// `len` rows of JSON text, each written by `write` unless `is_null`.
/// Each row is written straight into the array's values, whose UTF-8 is
/// checked once, for all rows, as the array is made (the renderers write
/// UTF-8: strings were validated when read); a check per row took a tenth
/// of a `to_json(v)` query.
fn json_text(
    len: usize,
    is_null: impl Fn(usize) -> bool,
    write: impl Fn(usize, &mut Vec<u8>) -> Result<()>,
) -> Result<StringArray> {
    let mut values = Vec::with_capacity(len * 64);
    let mut offsets = Vec::with_capacity(len + 1);
    offsets.push(0i32);
    let mut nulls = NullBufferBuilder::new(len);
    for row in 0..len {
        match is_null(row) {
            true => nulls.append_null(),
            false => {
                write(row, &mut values)?;
                nulls.append_non_null();
            }
        }
        let end = i32::try_from(values.len()).map_err(|_| {
            Error::from_message(format!(
                "the JSON text of {} rows passes 2 GiB, more than one string array holds",
                row + 1
            ))
        })?;
        offsets.push(end);
    }
    StringArray::try_new(
        OffsetBuffer::new(offsets.into()),
        values.into(),
        nulls.finish(),
    )
    .map_err(|e| Error::from_message(format!("JSON text written is not UTF-8: {e}")))
}

/// The rows of a record batch as JSON objects, every column by name:
/// Variant columns reconstructed, ordinary columns as JSON (primitives as
/// their Variant equivalents, structs as objects, lists as arrays).
pub struct JsonRows<'a> {
    pub(super) names: Vec<FieldName<'a>>,
    pub(super) renderers: Vec<Renderer<'a>>,
}

pub(super) enum Renderer<'a> {
    Variant(Box<ShreddedColumn<'a>>),
    Plain(PlainColumn<'a>),
}

impl<'a> JsonRows<'a> {
    /// Checks the columns of `batch`; those named in `variants` are Variant
    /// columns.
    pub fn try_new(batch: &'a RecordBatch, variants: &[String]) -> Result<JsonRows<'a>> {
        let mut names = Vec::with_capacity(batch.num_columns());
        let mut renderers = Vec::with_capacity(batch.num_columns());
        for (field, array) in batch.schema_ref().fields().iter().zip(batch.columns()) {
            // A Variant column a file lacks is of the Null type: null in
            // every row, as an ordinary column.
            let renderer = if variants.contains(field.name()) && !array.data_type().is_null() {
                let column = array.as_struct_opt().ok_or_else(|| {
                    layout_error(format!("Variant column {} is not a struct", field.name()))
                })?;
                Renderer::Variant(Box::new(ShreddedColumn::try_new(column)?))
            } else {
                Renderer::Plain(PlainColumn::new(array)?)
            };
            names.push(FieldName::new(field.name()));
            renderers.push(renderer);
        }
        Ok(JsonRows { names, renderers })
    }

    /// Appends row `row` to `out` as one JSON object (no newline).
    pub fn write_row(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        out.push(b'{');
        for (i, (name, renderer)) in self.names.iter().zip(&self.renderers).enumerate() {
            name.write_json(i == 0, out);
            match renderer {
                Renderer::Variant(c) => c.write_json(row, out)?,
                Renderer::Plain(c) => c.write_json(row, out)?,
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// Where a reconstructed value goes: a Variant builder or JSON text. The
/// walk in [`SlotReader::write`] is the same for both.
pub(super) trait Sink {
    /// A whole value, already a Variant.
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()>;
    /// The Variant-encoded `value` of `slot` at `i`, not yet validated.
    fn encoded<'a>(
        &mut self,
        slot: &SlotReader<'a>,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<()> {
        self.value(&slot.decode(i, m, bytes)?)
    }
    /// The primitive at `i` of a typed column (known valid).
    fn typed(&mut self, typed: &TypedReader<'_>, i: usize) -> Result<()> {
        self.value(&typed.scalar(i)?)
    }
    fn begin_object(&mut self);
    /// The next field's name; `first` for the object's first field.
    fn key(&mut self, first: bool, name: &str);
    /// The same for a shredded field.
    fn field_name(&mut self, first: bool, name: &FieldName<'_>) {
        self.key(first, name.name)
    }
    fn end_object(&mut self) -> Result<()>;
    fn begin_array(&mut self);
    /// Before each element; `first` for the array's first.
    fn element(&mut self, first: bool);
    fn end_array(&mut self) -> Result<()>;
}

impl Sink for VariantBuilder {
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()> {
        self.append(v)
    }

    fn begin_object(&mut self) {
        VariantBuilder::begin_object(self)
    }

    fn key(&mut self, _first: bool, name: &str) {
        VariantBuilder::key(self, name)
    }

    fn end_object(&mut self) -> Result<()> {
        VariantBuilder::end_object(self)
    }

    fn begin_array(&mut self) {
        VariantBuilder::begin_array(self)
    }

    fn element(&mut self, _first: bool) {}

    fn end_array(&mut self) -> Result<()> {
        VariantBuilder::end_array(self)
    }
}

/// Compact JSON text, as [`write_json`](crate::json::write_json) renders values.
pub(super) struct JsonSink<'o> {
    pub(super) out: &'o mut Vec<u8>,
    pub(super) writer: &'o mut JsonWriter,
}

impl Sink for JsonSink<'_> {
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()> {
        self.writer.write_json(v, self.out);
        Ok(())
    }

    /// Validated and rendered in one pass over the bytes.
    fn encoded<'a>(
        &mut self,
        slot: &SlotReader<'a>,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<()> {
        let metadata = m.get()?;
        let written = m.with_validation(metadata, |name_order, scratch| {
            self.writer
                .validate_and_write(metadata, bytes, name_order, scratch, self.out)
        });
        slot.value_context(i, written)
    }

    fn typed(&mut self, typed: &TypedReader<'_>, i: usize) -> Result<()> {
        typed.write_json(i, self.out)
    }

    fn begin_object(&mut self) {
        self.out.push(b'{');
    }

    fn key(&mut self, first: bool, name: &str) {
        if !first {
            self.out.push(b',');
        }
        write_json_string(self.out, name);
        self.out.push(b':');
    }

    fn field_name(&mut self, first: bool, name: &FieldName<'_>) {
        name.write_json(first, self.out)
    }

    fn end_object(&mut self) -> Result<()> {
        self.out.push(b'}');
        Ok(())
    }

    fn begin_array(&mut self) {
        self.out.push(b'[');
    }

    fn element(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
    }

    fn end_array(&mut self) -> Result<()> {
        self.out.push(b']');
        Ok(())
    }
}
