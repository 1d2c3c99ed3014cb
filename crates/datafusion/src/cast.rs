//! `CAST` of a Variant, as Spark casts one: `CAST(v AS BIGINT)` (or
//! `v::BIGINT`) is `variant_get(v, '$', 'bigint')`, `TRY_CAST` is
//! `try_variant_get`. A cast of a path's sub-Variant,
//! `CAST(variant_get(v, '$.a.b') AS BIGINT)`, becomes
//! `variant_get(v, '$.a.b', 'bigint')`, which the scan reads from that
//! path's leaves alone.
//!
//! DataFusion plans a cast of a struct (which a Variant column is) to a
//! number and then fails to run it; [`VariantCast`] rewrites such casts
//! while the plan is analyzed, before the optimizer moves `variant_get`
//! down to the scan. The cast's type is read as `variant_get` reads a type
//! name ([`result_layout`]); where `variant_get` gives another width of it
//! (`Utf8` for `Utf8View`, `Int64` for `UInt32`), Arrow's cast takes the
//! result the rest of the way. SQL's `TIMESTAMP`, without a zone, is read
//! as Spark's, the instant, and shown in UTC, as DataFusion casts a text
//! with an offset.
//!
//! [`SparkTypeNames`] gives `CAST` the names Spark has and DataFusion's SQL
//! does not: `BINARY` and `TIMESTAMP_NTZ`. A cast to `TIMESTAMP_NTZ` is
//! rewritten whatever it casts: a text as Spark reads one
//! ([`TO_TIMESTAMP_NTZ`], its offset dropped, where Arrow's cast applies
//! it), a date or a timestamp by Arrow's cast, and a number refused as
//! Spark refuses it; so the type's mark never reaches an output.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use arrow::array::AsArray;
use arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::datatype::DataTypeExt;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, TryCast, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::lit;
use datafusion::sql::sqlparser::ast::{DataType as SqlType, ExactNumberInfo, TimezoneInfo};
use vshred::get::{cast_texts, result_field, result_layout};
use vshred::parquet::is_variant_field;
use vshred::shred::ShreddingSchema;

use crate::functions::{TRY_VARIANT_GET, VARIANT_GET, VariantGet, batch_external, parse_type};
use crate::grouping_sets::{grouping_args_as_keys, rewrite_keeping_names};

/// Rewrites `CAST` and `TRY_CAST` of a Variant into `variant_get` and
/// `try_variant_get` (registered by [`crate::context`] first, where
/// DataFusion runs its own function rewrites; its pass would name a
/// grouping set's rewritten key after the whole set, see
/// [`crate::grouping_sets`]).
#[derive(Debug)]
pub struct VariantCast;

impl VariantCast {
    /// The rule's name, which DataFusion puts before its errors.
    pub const NAME: &str = "variant_cast";
}

impl AnalyzerRule for VariantCast {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            rewrite_keeping_names(node, variant_cast)?.transform_data(grouping_args_as_keys)
        })
        .map(|t| t.data)
    }
}

/// `expr` as a `variant_get`, if it is a cast of a Variant.
fn variant_cast(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (inner, target, strict) = match &expr {
        Expr::Cast(Cast { expr, field }) => (expr, field, true),
        Expr::TryCast(TryCast { expr, field }) => (expr, field, false),
        _ => return Ok(Transformed::no(expr)),
    };
    // An expression whose type cannot be worked out here is left to
    // the planner, which reports it.
    let Ok((_, source)) = inner.to_field(schema) else {
        return Ok(Transformed::no(expr));
    };
    if target.metadata().contains_key(LOCAL_TIME) && !is_variant_field(&source) {
        return local_time_cast(inner, source.data_type(), strict).map(Transformed::yes);
    }
    if let Some(cast) = seconds_cast(inner, source.data_type(), target, strict)
        .or_else(|| cast_of_seconds(inner, source.data_type(), target, strict))
    {
        return Ok(Transformed::yes(cast));
    }
    if !is_variant_field(&source) || is_variant_field(target) {
        return Ok(Transformed::no(expr));
    }
    let Some(as_type) = layout_for(target) else {
        return plan_err!(
            "cannot cast a Variant to {}: a cast takes a type variant_get takes (boolean, tinyint to bigint, float, double, decimal(p,s), string, binary, date, timestamp, timestamp_ntz, struct<...>, array<...>)",
            target.data_type()
        );
    };
    let (variant, path) = sub_variant(inner).unwrap_or_else(|| (inner.as_ref().clone(), lit("$")));
    let get = if strict {
        &VARIANT_GET
    } else {
        &TRY_VARIANT_GET
    };
    let call = get.call(vec![variant, path, lit(as_type.type_name())]);
    if result_field("", &as_type).data_type() == target.data_type() {
        return Ok(Transformed::yes(call));
    }
    Ok(Transformed::yes(cast_to(call, target.clone(), strict)))
}

/// `expr` cast to `field`'s type: by `CAST` when `strict`, else by
/// `TRY_CAST` (null where a value does not convert).
fn cast_to(expr: Expr, field: FieldRef, strict: bool) -> Expr {
    let expr = Box::new(expr);
    match strict {
        true => Expr::Cast(Cast::new_from_field(expr, field)),
        false => Expr::TryCast(TryCast::new_from_field(expr, field)),
    }
}

/// The layout a cast to `target` reads a Variant as: `target`'s own, or,
/// for a type no layout gives, the one whose result casts to it without
/// loss (unsigned integers as `bigint`, times of other units as
/// microseconds). A timestamp without a zone (SQL's `TIMESTAMP`) is read
/// as the instant, Spark's `TIMESTAMP`, whose zone Arrow's cast then drops
/// leaving its time in UTC: DataFusion casts the text
/// `2024-03-01T12:30:00.5+01:00` to `11:30:00.5`, and reading it as a
/// `timestamp_ntz` would drop the offset instead. Spark's `TIMESTAMP_NTZ`
/// ([`SparkTypeNames`]) is read as `timestamp_ntz`.
fn layout_for(target: &Field) -> Option<ShreddingSchema> {
    if target.metadata().contains_key(LOCAL_TIME) {
        return result_layout(target.data_type());
    }
    let near = match target.data_type() {
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => DataType::Int64,
        DataType::Float16 => DataType::Float32,
        DataType::Date64 => DataType::Date32,
        DataType::Time32(_) | DataType::Time64(_) => DataType::Time64(TimeUnit::Microsecond),
        DataType::Timestamp(unit, None) => DataType::Timestamp(
            match unit {
                TimeUnit::Nanosecond => TimeUnit::Nanosecond,
                _ => TimeUnit::Microsecond,
            },
            Some("UTC".into()),
        ),
        DataType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, zone) => {
            DataType::Timestamp(TimeUnit::Microsecond, zone.clone())
        }
        other => other.clone(),
    };
    result_layout(&near)
}

/// `(v, path)` of `variant_get(v, path)` (or of a type `'variant'`) with a
/// constant path: its sub-Variant, whose cast is a `variant_get` of the
/// same path. Whether the call was `try_` does not matter: getting a
/// sub-Variant never fails on a value.
fn sub_variant(expr: &Expr) -> Option<(Expr, Expr)> {
    let Expr::ScalarFunction(ScalarFunction { func, args }) = expr else {
        return None;
    };
    func.inner().downcast_ref::<VariantGet>()?;
    let constant = |arg: &Expr| match arg {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Some(s.clone()),
        _ => None,
    };
    match args.as_slice() {
        [variant, path] if constant(path).is_some() => Some((variant.clone(), path.clone())),
        [variant, path, as_type]
            if constant(path).is_some()
                && constant(as_type).and_then(|t| parse_type(&t).ok())
                    == Some(ShreddingSchema::Variant) =>
        {
            Some((variant.clone(), path.clone()))
        }
        _ => None,
    }
}

/// Spark's type names that DataFusion's SQL does not know, in any `CAST`:
/// `BINARY` (and `VARBINARY`, `BLOB`) is Arrow's binary, and
/// `TIMESTAMP_NTZ` microseconds without a zone, marked as Spark's local
/// date-time, so that a Variant's cast reads it as `timestamp_ntz` and not
/// as the instant SQL's `TIMESTAMP` is (registered by [`crate::context`]).
#[derive(Debug)]
pub struct SparkTypeNames;

/// The mark of a [`SparkTypeNames`] `TIMESTAMP_NTZ`, in its field's
/// metadata.
const LOCAL_TIME: &str = "vshred.timestamp_ntz";

/// Spark's `TIMESTAMP_NTZ` as `variant_get` reads it (`'timestamp_ntz'`).
const LOCAL_TIME_LAYOUT: ShreddingSchema = ShreddingSchema::Timestamp {
    utc: false,
    nanos: false,
};

/// The Arrow field of a [`LOCAL_TIME_LAYOUT`] value: microseconds, no zone.
fn local_time_field() -> Field {
    result_field("", &LOCAL_TIME_LAYOUT)
}

impl TypePlanner for SparkTypeNames {
    fn plan_type_field(&self, sql_type: &SqlType) -> Result<Option<FieldRef>> {
        Ok(match sql_type {
            SqlType::Binary(None) | SqlType::Varbinary(None) | SqlType::Blob(None) => {
                Some(Arc::new(Field::new("", DataType::Binary, true)))
            }
            // DataFusion's SQL knows DECIMAL(P,S) and NUMERIC(P,S), not
            // Spark's DEC(P,S); DEC(P) has no digits after the point.
            SqlType::Dec(ExactNumberInfo::Precision(p)) => Some(decimal(&format!("dec({p})"))?),
            SqlType::Dec(ExactNumberInfo::PrecisionAndScale(p, s)) => {
                Some(decimal(&format!("dec({p},{s})"))?)
            }
            // Spark's TIMESTAMP counts microseconds, from year 1 to 9999:
            // DataFusion's nanoseconds hold 1677 to 2262 alone, and keep
            // digits Spark's cast drops. `TIMESTAMP(9)` is nanoseconds.
            SqlType::Timestamp(None, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
                Some(Arc::new(Field::new(
                    "",
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    true,
                )))
            }
            SqlType::TimestampNtz(None) => {
                let mark = HashMap::from([(LOCAL_TIME.to_string(), "true".to_string())]);
                Some(Arc::new(local_time_field().with_metadata(mark)))
            }
            _ => None,
        })
    }
}

/// `DEC(precision, scale)`, read and checked as `variant_get` reads the
/// type string `dec(precision, scale)`.
fn decimal(type_name: &str) -> Result<FieldRef> {
    Ok(Arc::new(result_field("", &parse_type(type_name)?)))
}

/// A cast of a number to a timestamp, as Spark's: seconds since the
/// epoch, with their fraction (microseconds, cut toward zero) for a double
/// or a decimal. Arrow's cast reads a number as the timestamp's own unit,
/// and DataFusion's SQL makes seconds of an `Int64` cast to nanoseconds
/// alone; `None` for any other cast.
fn seconds_cast(inner: &Expr, source: &DataType, target: &FieldRef, strict: bool) -> Option<Expr> {
    let DataType::Timestamp(_, zone) = target.data_type() else {
        return None;
    };
    let cast = |expr: Expr, to: DataType| cast_to(expr, to.into_nullable_field_ref(), strict);
    let at = |unit| DataType::Timestamp(unit, zone.clone());
    let time = if source.is_integer() {
        cast(cast(inner.clone(), DataType::Int64), at(TimeUnit::Second))
    } else if source.is_floating() || source.is_decimal() {
        let micros = cast(inner.clone(), DataType::Float64) * lit(1_000_000f64);
        cast(cast(micros, DataType::Int64), at(TimeUnit::Microsecond))
    } else {
        return None;
    };
    Some(cast_to(time, target.clone(), strict))
}

/// A cast of a timestamp to a number, as Spark's: its seconds since the
/// epoch, whole ones (rounded down) for an integer, with their fraction
/// for a double. Arrow's cast gives the timestamp's own count, of
/// microseconds for SQL's `TIMESTAMP` (so `CAST(CAST(n AS TIMESTAMP) AS
/// BIGINT)` was a million times `n`); `None` for any other cast.
fn cast_of_seconds(
    inner: &Expr,
    source: &DataType,
    target: &FieldRef,
    strict: bool,
) -> Option<Expr> {
    let DataType::Timestamp(_, zone) = source else {
        return None;
    };
    let to = target.data_type();
    if !to.is_integer() && !to.is_floating() {
        return None;
    }
    let cast = |expr: Expr, to: DataType| cast_to(expr, to.into_nullable_field_ref(), strict);
    let micros = cast(
        cast(
            inner.clone(),
            DataType::Timestamp(TimeUnit::Microsecond, zone.clone()),
        ),
        DataType::Int64,
    );
    const PER_SECOND: i64 = 1_000_000;
    let seconds = match to.is_integer() {
        // Rounded down, as Java's floorDiv: the remainder made positive.
        true => {
            let below = (micros.clone() % lit(PER_SECOND) + lit(PER_SECOND)) % lit(PER_SECOND);
            (micros - below) / lit(PER_SECOND)
        }
        false => cast(micros, DataType::Float64) / lit(PER_SECOND as f64),
    };
    Some(cast_to(seconds, target.clone(), strict))
}

/// A cast to Spark's `TIMESTAMP_NTZ` of `inner`, of type `source`, not a
/// Variant.
fn local_time_cast(inner: &Expr, source: &DataType, strict: bool) -> Result<Expr> {
    let local = local_time_field().data_type().clone();
    Ok(match source {
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => {
            let function = if strict {
                &TO_TIMESTAMP_NTZ
            } else {
                &TRY_TO_TIMESTAMP_NTZ
            };
            function.call(vec![inner.clone()])
        }
        DataType::Null | DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) => {
            cast_to(inner.clone(), local.into_nullable_field_ref(), strict)
        }
        other => {
            return plan_err!(
                "cannot cast {other} to TIMESTAMP_NTZ, as Spark cannot: a text, a date, a timestamp or a Variant casts to it"
            );
        }
    })
}

/// `to_timestamp_ntz(text)`, Spark's: the text's date and time, its zone
/// or offset checked and dropped; an error where a text is not one.
pub static TO_TIMESTAMP_NTZ: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(ToTimestampNtz::new(true))));
/// `try_to_timestamp_ntz(text)`: null where a text is not one.
pub static TRY_TO_TIMESTAMP_NTZ: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(ToTimestampNtz::new(false))));

/// [`TO_TIMESTAMP_NTZ`] and [`TRY_TO_TIMESTAMP_NTZ`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToTimestampNtz {
    strict: bool,
    signature: Signature,
}

impl ToTimestampNtz {
    fn new(strict: bool) -> ToTimestampNtz {
        ToTimestampNtz {
            strict,
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ToTimestampNtz {
    fn name(&self) -> &str {
        match self.strict {
            true => "to_timestamp_ntz",
            false => "try_to_timestamp_ntz",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(local_time_field().data_type().clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let texts = args.args[0].to_array(args.number_rows)?;
        let texts = arrow::compute::cast(&texts, &DataType::Utf8)?;
        let times = cast_texts(
            texts.as_string::<i32>().iter(),
            &LOCAL_TIME_LAYOUT,
            self.strict,
        )
        .map_err(batch_external)?;
        Ok(ColumnarValue::Array(times))
    }
}
