//! `schema_of_variant(v)` and the aggregate `schema_of_variant_agg(v)`:
//! the Spark type of each value, and of all values of a column, in Spark's
//! syntax (`OBJECT<a: BIGINT, b: ARRAY<STRING>>`), by the core's
//! [`SparkType`].

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder, StructArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use vshred::infer::SparkType;
use vshred::unshred::ShreddedColumn;
use vshred::variant::{VariantBuilder, VariantRef};

use crate::functions::{ONE_ARGUMENT, batch_external, check_variant, external, variant_arg};

/// `schema_of_variant`.
pub fn schema_of_variant() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::from(SchemaOfVariant))
}

/// `schema_of_variant_agg`.
pub fn schema_of_variant_agg() -> Arc<AggregateUDF> {
    Arc::new(AggregateUDF::from(SchemaOfVariantAgg))
}

/// Calls `each` with the type of every non-null row of `column`.
fn each_type(column: &StructArray, mut each: impl FnMut(usize, Option<SparkType>)) -> Result<()> {
    let reader = ShreddedColumn::try_new(column).map_err(batch_external)?;
    let mut builder = VariantBuilder::new();
    for row in 0..column.len() {
        if reader.is_null(row) {
            each(row, None);
            continue;
        }
        builder.reset();
        if !reader
            .write_variant(row, &mut builder)
            .map_err(batch_external)?
        {
            each(row, None);
            continue;
        }
        let (metadata, value) = builder.finish();
        let value = VariantRef::try_new(metadata, value).map_err(batch_external)?;
        each(row, Some(SparkType::of(&value)));
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SchemaOfVariant;

impl ScalarUDFImpl for SchemaOfVariant {
    fn name(&self) -> &str {
        "schema_of_variant"
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant(self.name(), &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let column = variant_arg(self.name(), &args.args[0], args.number_rows)?;
        let mut out = StringBuilder::new();
        each_type(&column, |_, t| match t {
            Some(t) => out.append_value(t.to_string()),
            None => out.append_null(),
        })?;
        Ok(ColumnarValue::Array(Arc::new(out.finish()) as ArrayRef))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SchemaOfVariantAgg;

impl AggregateUDFImpl for SchemaOfVariantAgg {
    fn name(&self) -> &str {
        "schema_of_variant_agg"
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        check_variant(self.name(), args.expr_fields[0].as_ref())?;
        Ok(Box::new(TypeAccumulator {
            merged: SparkType::Void,
        }))
    }
}

/// The merge of the types seen; partial results travel as their text.
#[derive(Debug)]
struct TypeAccumulator {
    merged: SparkType,
}

impl Accumulator for TypeAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let column = variant_arg(
            "schema_of_variant_agg",
            &ColumnarValue::Array(values[0].clone()),
            values[0].len(),
        )?;
        let column = &column;
        let mut merged = std::mem::replace(&mut self.merged, SparkType::Void);
        each_type(column, |_, t| {
            if let Some(t) = t {
                merged = std::mem::replace(&mut merged, SparkType::Void).merge(t);
            }
        })?;
        self.merged = merged;
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Utf8(Some(self.merged.to_string())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.merged.to_string().len()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states = arrow::compute::cast(&states[0], &DataType::Utf8)?;
        for state in states.as_string::<i32>().iter().flatten() {
            let t: SparkType = state.parse().map_err(external)?;
            self.merged = std::mem::replace(&mut self.merged, SparkType::Void).merge(t);
        }
        Ok(())
    }
}
