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
//! Both are the core's kernel ([`vshred::explode`]), and both have an
//! `_outer` form, `variant_explode_outer`, whose rows without fields or
//! elements give one entry of nulls.

use std::sync::Arc;

use arrow::array::{AsArray, ListArray, RecordBatch, RecordBatchOptions, StructArray};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{
    ColumnarValue, ExpressionPlacement, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl,
    Signature,
};
use vshred::explode::{entry_fields, exploded_type, variant_explode, variant_explode_outer};

use crate::functions::{ONE_ARGUMENT, batch_external, check_variant, variant_arg};

/// `variant_explode(v)` (or `variant_explode_outer(v)`, when `outer`) in
/// `SELECT`: each row's entries as a list.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct VariantExplode {
    pub(crate) outer: bool,
}

/// The function's name, and its kernel.
fn explode_of(outer: bool) -> (&'static str, fn(&StructArray) -> vshred::Result<ListArray>) {
    match outer {
        false => ("variant_explode", variant_explode),
        true => ("variant_explode_outer", variant_explode_outer),
    }
}

impl ScalarUDFImpl for VariantExplode {
    fn name(&self) -> &str {
        explode_of(self.outer).0
    }

    fn signature(&self) -> &Signature {
        &ONE_ARGUMENT
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(exploded_type(self.outer))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let name = self.name();
        check_variant(name, &args.arg_fields[0])?;
        Ok(Arc::new(Field::new(name, exploded_type(self.outer), false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (name, explode) = explode_of(self.outer);
        let column = variant_arg(name, &args.args[0], args.number_rows)?;
        let exploded = explode(&column).map_err(batch_external)?;
        Ok(ColumnarValue::Array(Arc::new(exploded)))
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        // Of a column, the scan splits each row where its shredded columns
        // store it, where above the scan the column comes rebuilt.
        match args {
            [ExpressionPlacement::Column] => ExpressionPlacement::MoveTowardsLeafNodes,
            _ => ExpressionPlacement::KeepInPlace,
        }
    }
}

/// `variant_explode(constant)` (or `variant_explode_outer`, when `outer`)
/// in `FROM`: a table of the entries.
#[derive(Debug, Default)]
pub struct VariantExplodeTable {
    /// Whether a Variant without fields or elements gives a row of nulls.
    pub outer: bool,
}

impl VariantExplodeTable {
    /// Its name in SQL.
    pub fn name(&self) -> &'static str {
        explode_of(self.outer).0
    }
}

impl TableFunctionImpl for VariantExplodeTable {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let (name, explode) = explode_of(self.outer);
        let [expr] = args.exprs() else {
            return plan_err!("{name} takes one Variant");
        };
        let no_columns = DFSchema::empty();
        let Ok(expr) = args
            .session()
            .create_physical_expr(expr.clone(), &no_columns)
        else {
            return plan_err!(
                "{name} in FROM takes a constant Variant (DataFusion's table functions cannot read another table's columns); of a column, use unnest({name}(v)) in SELECT"
            );
        };
        let empty = Arc::new(Schema::empty());
        check_variant(name, expr.return_field(&empty)?.as_ref())?;
        let one_row = RecordBatch::try_new_with_options(
            empty,
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        let value = expr.evaluate(&one_row)?;
        let column = variant_arg(name, &value, 1)?;
        let exploded = explode(&column).map_err(batch_external)?;
        let entries = exploded.value(0);
        let entries = entries.as_struct();
        let schema = Arc::new(Schema::new(entry_fields(self.outer)));
        let batch = RecordBatch::try_new(schema.clone(), entries.columns().to_vec())?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
