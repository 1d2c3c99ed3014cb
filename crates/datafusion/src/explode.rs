//! `variant_explode`, Spark's table function of a Variant's fields or
//! elements (`pos`, `key`, `value`), twice over, because DataFusion's table
//! functions take constants and not another table's columns (there is no
//! `LATERAL`):
//!
//! - in `FROM`, of a constant Variant, as Spark writes it:
//!   `SELECT * FROM variant_explode(parse_json('{"a": 1, "b": [2]}'))`;
//! - in `SELECT`, of a column, as a list of `{pos, key, value}` structs per
//!   row, which DataFusion's `unnest` turns into rows:
//!   `SELECT id, unnest(variant_explode(v)) AS e FROM t`, then `e.key`,
//!   `e.value`.
//!
//! Both are the core's kernel ([`vshred::explode`]).

use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};
use vshred::explode::{entry_fields, exploded_type, variant_explode};

use crate::functions::{ONE_ARGUMENT, batch_external, check_variant, variant_arg};

const NAME: &str = "variant_explode";

/// `variant_explode(v)` in `SELECT`: each row's entries as a list.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct VariantExplode;

impl ScalarUDFImpl for VariantExplode {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(exploded_type())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        check_variant(NAME, &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(NAME, exploded_type(), false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let column = variant_arg(NAME, &args.args[0], args.number_rows)?;
        let exploded = variant_explode(&column).map_err(batch_external)?;
        Ok(ColumnarValue::Array(Arc::new(exploded)))
    }
}

/// `variant_explode(constant)` in `FROM`: a table of the entries.
#[derive(Debug, Default)]
pub struct VariantExplodeTable;

impl TableFunctionImpl for VariantExplodeTable {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let [expr] = args.exprs() else {
            return plan_err!("{NAME} takes one Variant");
        };
        let no_columns = DFSchema::empty();
        let Ok(expr) = args
            .session()
            .create_physical_expr(expr.clone(), &no_columns)
        else {
            return plan_err!(
                "{NAME} in FROM takes a constant Variant (DataFusion's table functions cannot read another table's columns); of a column, use unnest({NAME}(v)) in SELECT"
            );
        };
        let empty = Arc::new(Schema::empty());
        check_variant(NAME, expr.return_field(&empty)?.as_ref())?;
        let one_row = RecordBatch::try_new_with_options(
            empty,
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        let value = expr.evaluate(&one_row)?;
        let column = variant_arg(NAME, &value, 1)?;
        let exploded = variant_explode(&column).map_err(batch_external)?;
        let entries = exploded.value(0);
        let entries = entries.as_struct();
        let schema = Arc::new(Schema::new(entry_fields()));
        let batch = RecordBatch::try_new(schema.clone(), entries.columns().to_vec())?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
