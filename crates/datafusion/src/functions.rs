//! Spark's Variant functions as DataFusion scalar functions, each a kernel
//! of the core library over a whole Arrow array:
//!
//! | function | returns |
//! |---|---|
//! | `variant_get(v, path, type)` | the value at `path` as `type` (Spark's type names: `'bigint'`, `'decimal(18,2)'`, `'string'`, `'timestamp'`, `'variant'`, ...); null where the path is missing, an error where the value does not convert |
//! | `try_variant_get(v, path, type)` | the same, null where the value does not convert |
//! | `variant_get(v, path)` | the sub-Variant at `path` |
//! | `parse_json(text)` / `try_parse_json(text)` | the Variant of each JSON text (an error, or null, where it is not JSON) |
//! | `to_json(v)` | each Variant as JSON text, decimals exact |
//! | `is_variant_null(v)` | whether each value is the Variant null (not SQL null) |
//! | `schema_of_variant(v)`, `schema_of_variant_agg(v)` | the Spark type of each value, of all values ([`crate::schema_of`]) |
//! | `variant_explode(v)` | each value's fields or elements, a list of `{pos, key, value}` ([`crate::explode`]) |
//!
//! `variant_get` of a column with a constant path and type is marked cheap
//! ([`ExpressionPlacement::MoveTowardsLeafNodes`]): DataFusion moves it
//! down to the scan, which then reads the path's leaves alone
//! ([`crate::scan`]). Moved below a filter, a join or a limit, a
//! conversion that fails would fail rows the query leaves out, which Spark
//! and DuckDB never convert: [`crate::defer`] writes such a call as two,
//! `variant_get_or_failure`, which moves and keeps a failure as data
//! beside the value, and `raise_variant_failure`, which fails a row that
//! reaches it.

use std::sync::{Arc, LazyLock};

use arrow::array::{Array, ArrayRef, AsArray, BooleanBuilder, StructArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, internal_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use vshred::get::{OnFailure, result_field, result_field_on, variant_get_on};
use vshred::parquet::is_variant_field;
use vshred::path::VariantPath;
use vshred::shred::{ParseJsonOptions, ShreddingSchema, parse_json_column};
use vshred::unshred::{NullFields, column_json_strings, json_strings};

use crate::settings::{VshredSettings, hint};

/// Every function of this module.
pub fn all() -> Vec<Arc<ScalarUDF>> {
    vec![
        VARIANT_GET.clone(),
        TRY_VARIANT_GET.clone(),
        VARIANT_GET_OR_FAILURE.clone(),
        RAISE_VARIANT_FAILURE.clone(),
        Arc::new(ScalarUDF::from(ParseJson { strict: true })),
        Arc::new(ScalarUDF::from(ParseJson { strict: false })),
        Arc::new(ScalarUDF::from(ToJson)),
        Arc::new(ScalarUDF::from(IsVariantNull)),
        crate::schema_of::schema_of_variant(),
        Arc::new(ScalarUDF::from(crate::explode::VariantExplode {
            outer: false,
        })),
        Arc::new(ScalarUDF::from(crate::explode::VariantExplode {
            outer: true,
        })),
    ]
}

/// `variant_get`, one instance for the scan to recognise.
pub static VARIANT_GET: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(VariantGet::new(OnFailure::Error))));
/// `try_variant_get`.
pub static TRY_VARIANT_GET: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(VariantGet::new(OnFailure::Null))));
/// `variant_get_or_failure`.
pub static VARIANT_GET_OR_FAILURE: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(VariantGet::new(OnFailure::Defer))));

/// The core error as DataFusion's, its message kept, with the way out
/// where there is one (a setting, or `try_variant_get`).
pub(crate) fn external(e: vshred::Error) -> DataFusionError {
    let e = match hint(e.kind()) {
        Some(hint) => e.with_hint(hint),
        None => e,
    };
    DataFusionError::External(Box::new(e))
}

/// The core error of a kernel run on a batch of a query, as DataFusion's:
/// without the row it names, which is the batch's, not the input's (its
/// message names the value).
pub(crate) fn batch_external(e: vshred::Error) -> DataFusionError {
    external(e.without_row())
}

/// A DataFusion error as its user reads it: the error underneath, if it
/// is another crate's (a vshred error, a worker's relayed), as it says
/// itself (what, and where: file, row, line, byte, and the setting that is
/// the way out), without DataFusion's "External error: " before it; a
/// syntax error as the parser words it; a refusal of the planner, an
/// error of execution, of the schema or of Arrow without DataFusion's
/// word for its kind; any other as DataFusion says it.
pub fn error_message(e: &DataFusionError) -> String {
    use datafusion::sql::sqlparser::parser::ParserError;
    if let DataFusionError::Context(what, inner) = e {
        // A refusal says what it refuses; the rule's name adds nothing.
        if [
            crate::compare::VariantComparisons::NAME,
            crate::field_access::VariantEncoding::NAME,
            crate::cast::VariantCast::NAME,
            crate::copy::VariantCopyChecks::NAME,
        ]
        .contains(&what.as_str())
        {
            return error_message(inner);
        }
        return format!("{what}: {}", error_message(inner));
    }
    let root = e.find_root();
    let message = root.message();
    if let Some(refusal) = variant_where_typed(&message) {
        return refusal;
    }
    // A function's own refusal of its arguments, which DataFusion flattens
    // into its text behind two prefixes.
    if let Some((_, refusal)) = message.split_once(" user-defined coercion failed with: ") {
        return refusal
            .strip_prefix("Error during planning: ")
            .unwrap_or(refusal)
            .to_string();
    }
    match root {
        DataFusionError::External(inner) => {
            // Ours (a vshred error, a raised failure) or another's, such as
            // a worker's error relayed by the distributed engine: each says
            // what it is without DataFusion's "External error: ".
            return inner.to_string();
        }
        // DataFusion prints the parser's error in its Debug form.
        DataFusionError::SQL(parser, _) => {
            return match parser.as_ref() {
                ParserError::TokenizerError(what) | ParserError::ParserError(what) => {
                    format!("SQL syntax error: {what}")
                }
                other => format!("SQL syntax error: {other}"),
            };
        }
        // "Error during planning: ", "Execution error: ", "Schema error: "
        // and "Arrow error: " say nothing the message does not.
        DataFusionError::Plan(_) => {
            return missing_path(&message).unwrap_or_else(|| message.into_owned());
        }
        DataFusionError::Execution(_)
        | DataFusionError::SchemaError(..)
        | DataFusionError::ArrowError(..) => return message.into_owned(),
        _ => {}
    }
    e.to_string()
}

/// DataFusion's "table 'datafusion.public.nope/x' not found" of a name
/// with a `/`, a path that is not there (a name ending in `/` or
/// `.parquet` is named as missing where it is read; `CREATE TABLE "a/b"`
/// asks for the name first, so the others are named here), as the path
/// missing; `None` for any other message.
fn missing_path(message: &str) -> Option<String> {
    let name = message
        .strip_prefix("table '")?
        .strip_suffix("' not found")?;
    let name = name.strip_prefix("datafusion.public.").unwrap_or(name);
    name.contains('/')
        .then(|| format!("{name}: no such file or directory (nor a table of that name)"))
}

/// How DataFusion prints a Variant's type, in its planner's refusals of a
/// function or an operator given one.
const VARIANT_TYPE: &str = r#"Struct("metadata": non-null Binary, "value": non-null Binary)"#;

/// The planner's refusal of a Variant given where a typed value is taken,
/// as the way to type it: `sum(v)` failed with DataFusion's "Internal
/// error", six signatures long, asking for a bug report; `v + 1`, that it
/// cannot coerce a struct. Spark refuses both too. The planner checks the
/// types as it builds the plan, before any rule of ours sees it, so the
/// refusal is worded again here; `None` for any other error.
fn variant_where_typed(message: &str) -> Option<String> {
    let after = |start: &str| Some(&message[message.find(start)? + start.len()..]);
    let operator = |op: &str| format!("the operator {op}");
    // A function given a Variant as an argument itself (not in a struct or
    // a list), as the planner lists the types it was given; not a wrong
    // count of arguments, nor a function's own refusal.
    let function = || {
        let (name, args) = after("argument types '")?.split_once('(')?;
        let given = args.starts_with(VARIANT_TYPE) || args.contains(&format!(", {VARIANT_TYPE}"));
        // A wrong count is the first thing said; a function of several
        // signatures lists each one's refusal after.
        let first = &message[..message.find(['.', ',']).unwrap_or(message.len())];
        let other_fault = first.contains("arguments but received")
            || message.contains("user-defined coercion failed");
        (given && !other_fault).then(|| name.to_string())
    };
    // "Cannot coerce arithmetic expression Int64 + Struct(...) to valid
    // types", the Variant itself on either side.
    let arithmetic = || {
        let operation = after("arithmetic expression ")?;
        let operation = &operation[..operation.find(" to valid types")?];
        let op = match (
            operation.strip_prefix(VARIANT_TYPE),
            operation.strip_suffix(VARIANT_TYPE),
        ) {
            (Some(rest), _) => rest.split_whitespace().next(),
            (None, Some(rest)) => rest.split_whitespace().last(),
            (None, None) => None,
        };
        op.map(operator)
    };
    let concat = || {
        let operation = after("string concat operation ")?;
        let given = operation.starts_with(VARIANT_TYPE)
            || operation.contains(&format!("|| {VARIANT_TYPE}"));
        given.then(|| operator("||"))
    };
    let what = function().or_else(arithmetic).or_else(concat)?;
    // Ours take Variants, and say themselves what they refuse.
    let ours = all()
        .iter()
        .map(|f| f.name().to_string())
        .collect::<Vec<_>>();
    if ours.contains(&what) || what == crate::schema_of::schema_of_variant_agg().name() {
        return None;
    }
    Some(format!(
        "{what} takes no Variant value: give the value a type, variant_get(x, '$.path', 'double') or x:path::double (CAST(x AS DOUBLE) for the whole value), or take its text, to_json(x)"
    ))
}

/// A type named as Spark names it, as the layout our kernels take.
pub fn parse_type(name: &str) -> Result<ShreddingSchema> {
    if name.trim().to_ascii_lowercase().starts_with("map") {
        return plan_err!(
            "variant_get: the type {name:?} is not supported yet (a primitive type, struct<...>, array<...> or 'variant')"
        );
    }
    ShreddingSchema::parse_type_name(name).map_err(|e| DataFusionError::Plan(e.message().into()))
}

/// The value of a constant string argument.
fn constant_string<'a>(
    function: &str,
    what: &str,
    value: Option<&'a ScalarValue>,
) -> Result<&'a str> {
    match value {
        Some(ScalarValue::Utf8(Some(s)))
        | Some(ScalarValue::Utf8View(Some(s)))
        | Some(ScalarValue::LargeUtf8(Some(s))) => Ok(s),
        _ => plan_err!("{function}: the {what} must be a constant string"),
    }
}

/// The path and the type of a `variant_get` from the constants after its
/// Variant argument (`None` for one that is not a constant): `[path]`, the
/// sub-Variant, or `[path, type]`.
pub(crate) fn path_and_type(
    function: &str,
    constants: &[Option<&ScalarValue>],
) -> Result<(VariantPath, ShreddingSchema)> {
    let (path, as_type) = match constants {
        [path] => (*path, None),
        [path, as_type] => (*path, Some(*as_type)),
        _ => return plan_err!("{function} takes a Variant, a path and optionally a type"),
    };
    let path = constant_string(function, "path", path)?
        .parse()
        .map_err(external)?;
    let as_type = match as_type {
        Some(t) => parse_type(constant_string(function, "type", t)?)?,
        None => ShreddingSchema::Variant,
    };
    Ok((path, as_type))
}

/// The signature of the functions of one Variant.
pub(crate) static ONE_ARGUMENT: LazyLock<Signature> =
    LazyLock::new(|| Signature::any(1, Volatility::Immutable));

/// The first argument as a Variant struct array.
pub(crate) fn variant_arg(
    function: &str,
    value: &ColumnarValue,
    rows: usize,
) -> Result<StructArray> {
    let array = value.to_array(rows)?;
    if array.data_type() == &DataType::Null {
        // SQL's NULL where a Variant goes: a Variant column of nulls.
        let variant = vshred::shred::variant_field("", &ShreddingSchema::Variant);
        return Ok(arrow::array::new_null_array(variant.data_type(), rows)
            .as_struct()
            .clone());
    }
    match array.as_struct_opt() {
        Some(column) => Ok(column.clone()),
        None => exec_err!(
            "{function}: the argument must be a Variant, not {}",
            array.data_type()
        ),
    }
}

/// Whether a Variant function takes `field`: a Variant, or a null
/// (`NULL` written in the query), which it reads as a null Variant.
fn takes_as_variant(field: &Field) -> bool {
    is_variant_field(field) || field.data_type() == &DataType::Null
}

pub(crate) fn check_variant(function: &str, field: &Field) -> Result<()> {
    if takes_as_variant(field) {
        Ok(())
    } else {
        plan_err!(
            "{function}: the first argument must be a Variant, not {}",
            field.data_type()
        )
    }
}

/// `variant_get`, `try_variant_get` and `variant_get_or_failure`, which
/// differ in what a value that does not convert gives.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct VariantGet {
    signature: Signature,
    on_failure: OnFailure,
}

impl VariantGet {
    fn new(on_failure: OnFailure) -> VariantGet {
        VariantGet {
            // Checked by `coerce_types`: DataFusion reports a count that
            // fits none of several signatures as its own internal error.
            signature: Signature::user_defined(Volatility::Immutable),
            on_failure,
        }
    }

    /// What a value that does not convert gives: null (`try_variant_get`),
    /// an error (`variant_get`) or its failure beside it
    /// (`variant_get_or_failure`).
    pub fn on_failure(&self) -> OnFailure {
        self.on_failure
    }
}

/// Whether a value can fail to convert to `as_type`: any converts to a
/// string or the sub-Variant; a struct or list type fails on a value of
/// another kind, and on its fields' or elements' failures.
pub(crate) fn can_fail(as_type: &ShreddingSchema) -> bool {
    !matches!(as_type, ShreddingSchema::Variant | ShreddingSchema::String)
}

impl ScalarUDFImpl for VariantGet {
    fn name(&self) -> &str {
        match self.on_failure {
            OnFailure::Null => "try_variant_get",
            OnFailure::Error => "variant_get",
            OnFailure::Defer => "variant_get_or_failure",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types.len() {
            2 | 3 => Ok(arg_types.to_vec()),
            n => plan_err!(
                "{} takes a Variant, a path and optionally a type, not {n} argument{}",
                self.name(),
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        internal_err!(
            "{}: the return field comes from return_field_from_args",
            self.name()
        )
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant(self.name(), &args.arg_fields[0])?;
        let (_, as_type) = path_and_type(self.name(), &args.scalar_arguments[1..])?;
        Ok(Arc::new(result_field_on(
            self.name(),
            &as_type,
            self.on_failure,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let column = variant_arg(self.name(), &args.args[0], args.number_rows)?;
        let constants: Vec<Option<&ScalarValue>> = args.args[1..]
            .iter()
            .map(|a| match a {
                ColumnarValue::Scalar(s) => Some(s),
                ColumnarValue::Array(_) => None,
            })
            .collect();
        let (path, as_type) = path_and_type(self.name(), &constants)?;
        // A batch's row would mislead (see `batch_external`).
        let place = |e: vshred::Error| e.without_row();
        let result = variant_get_on(&column, &path, &as_type, self.on_failure, &place)
            .map_err(batch_external)?;
        Ok(ColumnarValue::Array(result))
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        // A column and constants: the scan computes it from the path's
        // leaves, so it belongs next to the scan.
        match args {
            [ExpressionPlacement::Column, rest @ ..]
                if rest.iter().all(|a| *a == ExpressionPlacement::Literal) =>
            {
                ExpressionPlacement::MoveTowardsLeafNodes
            }
            _ => ExpressionPlacement::KeepInPlace,
        }
    }
}

/// `raise_variant_failure`.
pub(crate) static RAISE_VARIANT_FAILURE: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(RaiseVariantFailure)));

/// `raise_variant_failure(variant_get_or_failure(...))`: the value, or the
/// first failure among the rows that reach it, as an error.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RaiseVariantFailure;

/// The `value` field of a `variant_get_or_failure` result.
fn value_of_failure_field(function: &str, field: &Field) -> Result<FieldRef> {
    match field.data_type() {
        DataType::Struct(fields)
            if fields.len() == 2
                && fields[0].name() == "value"
                && fields[1].name() == "failure"
                && fields[1].data_type() == &DataType::Utf8 =>
        {
            Ok(fields[0].clone())
        }
        other => plan_err!("{function} takes the result of variant_get_or_failure, not {other}"),
    }
}

impl ScalarUDFImpl for RaiseVariantFailure {
    fn name(&self) -> &str {
        "raise_variant_failure"
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        internal_err!(
            "{}: the return field comes from return_field_from_args",
            self.name()
        )
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let value = value_of_failure_field(self.name(), &args.arg_fields[0])?;
        Ok(Arc::new(value.as_ref().clone().with_name(self.name())))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = args.args[0].to_array(args.number_rows)?;
        let Some(result) = array.as_struct_opt() else {
            return exec_err!("{} takes a struct, not {}", self.name(), array.data_type());
        };
        let failures = result.column(1).as_string::<i32>();
        // A row an outer join made null is no row that was read.
        let failure = (0..result.len())
            .filter(|&row| result.is_valid(row) && failures.is_valid(row))
            .map(|row| failures.value(row))
            .next();
        if let Some(failure) = failure {
            let hint =
                hint(vshred::ErrorKind::Conversion).map_or(String::new(), |h| format!(" ({h})"));
            // Its text as the core wrote it where the value was read (the
            // file and its row).
            return Err(DataFusionError::External(format!("{failure}{hint}").into()));
        }
        let value = result.column(0);
        if result.null_count() == 0 {
            return Ok(ColumnarValue::Array(value.clone()));
        }
        let nulls = arrow::buffer::NullBuffer::union(result.nulls(), value.nulls());
        let data = value.to_data().into_builder().nulls(nulls).build()?;
        Ok(ColumnarValue::Array(arrow::array::make_array(data)))
    }
}

/// `parse_json` and `try_parse_json`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ParseJson {
    /// Text that is not JSON is an error (`parse_json`), not null.
    strict: bool,
}

impl ScalarUDFImpl for ParseJson {
    fn name(&self) -> &str {
        if self.strict {
            "parse_json"
        } else {
            "try_parse_json"
        }
    }

    fn signature(&self) -> &Signature {
        static SIGNATURE: LazyLock<Signature> =
            LazyLock::new(|| Signature::string(1, Volatility::Immutable));
        &SIGNATURE
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        internal_err!(
            "{}: the return field comes from return_field_from_args",
            self.name()
        )
    }

    fn return_field_from_args(&self, _: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(result_field(
            self.name(),
            &ShreddingSchema::Variant,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let text = args.args[0].to_array(args.number_rows)?;
        let settings = VshredSettings::of(&args.config_options);
        let options = ParseJsonOptions {
            strict: self.strict,
            inexact_numbers: settings.inexact_numbers.0,
            duplicate_keys: settings.duplicate_keys.0,
        };
        let variants = parse_json_column(&text, options).map_err(batch_external)?;
        Ok(ColumnarValue::Array(Arc::new(variants)))
    }
}

/// `to_json`.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct ToJson;

impl ScalarUDFImpl for ToJson {
    fn name(&self) -> &str {
        "to_json"
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let field = &args.arg_fields[0];
        if !takes_as_variant(field) && !has_json_form(field.data_type()) {
            return plan_err!(
                "to_json takes a Variant, a struct, an array or a map (as Spark's does), not {}",
                field.data_type()
            );
        }
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let field = &args.arg_fields[0];
        let text = if takes_as_variant(field) {
            let column = variant_arg(self.name(), &args.args[0], args.number_rows)?;
            json_strings(&column)
        } else {
            // Structs as objects, lists as arrays, maps as objects, and
            // the Variants inside them as their JSON, as `cat` prints them;
            // a struct's null fields left out, as Spark's `to_json` does.
            let array = args.args[0].to_array(args.number_rows)?;
            column_json_strings(field, &array, NullFields::Omitted)
        };
        Ok(ColumnarValue::Array(
            Arc::new(text.map_err(batch_external)?) as ArrayRef,
        ))
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        // Of a column, the scan renders it from the shredded columns.
        match args {
            [ExpressionPlacement::Column] => ExpressionPlacement::MoveTowardsLeafNodes,
            _ => ExpressionPlacement::KeepInPlace,
        }
    }
}

/// Whether `to_json` takes a value of `data_type` that is not a Variant:
/// Spark's takes structs, arrays and maps.
fn has_json_form(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
    )
}

/// `is_variant_null`.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
struct IsVariantNull;

impl ScalarUDFImpl for IsVariantNull {
    fn name(&self) -> &str {
        "is_variant_null"
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant(self.name(), &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(self.name(), DataType::Boolean, false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let column = variant_arg(self.name(), &args.args[0], args.number_rows)?;
        // The Variant null is the one-byte value 0 in `value`, with no
        // typed value beside it; SQL null is not the Variant null (Spark).
        let value = match column.column_by_name("value") {
            Some(v) => arrow::compute::cast(v, &DataType::BinaryView)?,
            None => arrow::array::new_null_array(&DataType::BinaryView, column.len()),
        };
        let value = value.as_binary_view();
        let typed = column.column_by_name("typed_value");
        let mut out = BooleanBuilder::with_capacity(column.len());
        for row in 0..column.len() {
            out.append_value(
                column.is_valid(row)
                    && typed.is_none_or(|t| t.is_null(row))
                    && value.is_valid(row)
                    && value.value(row) == [0],
            );
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}
