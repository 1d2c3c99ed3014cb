//! `nvl(a, b)` and `ifnull(a, b)` of any type, as Spark's. DataFusion 55's
//! take only numbers, booleans and strings, so `nvl(v, parse_json('0'))`
//! of a Variant (or of a date, a decimal, a struct) failed to plan. Here
//! the types DataFusion's takes are coerced as its signature says (a
//! number and a string to a string, as Spark does), any other by
//! `coalesce`'s rules, and either runs as `coalesce(a, b)`, which it is.

use std::sync::{Arc, LazyLock};

use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

/// DataFusion's `nvl`, for its coercion, and `coalesce`, which runs it.
static DATAFUSION_NVL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(datafusion::functions::core::nvl);
static COALESCE: LazyLock<Arc<ScalarUDF>> = LazyLock::new(datafusion::functions::core::coalesce);

/// `nvl`, also named `ifnull` (registered by [`crate::context`] in place
/// of DataFusion's).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Nvl {
    signature: Signature,
    aliases: Vec<String>,
}

impl Default for Nvl {
    fn default() -> Nvl {
        Nvl {
            signature: Signature::user_defined(Volatility::Immutable),
            aliases: vec!["ifnull".to_string()],
        }
    }
}

impl ScalarUDFImpl for Nvl {
    fn name(&self) -> &str {
        "nvl"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 2 {
            return plan_err!("nvl takes two arguments, not {}", arg_types.len());
        }
        if !arg_types.iter().all(datafusion_nvl_takes) {
            return COALESCE.inner().coerce_types(arg_types);
        }
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .map(|t| Arc::new(Field::new("", t.clone(), true)))
            .collect();
        let coerced = fields_with_udf(&fields, DATAFUSION_NVL.as_ref())?;
        Ok(coerced.iter().map(|f| f.data_type().clone()).collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        COALESCE.inner().return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        COALESCE.inner().return_field_from_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        COALESCE.inner().simplify(args, info)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        COALESCE.inner().invoke_with_args(args)
    }

    fn conditional_arguments<'a>(
        &self,
        args: &'a [Expr],
    ) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        COALESCE.inner().conditional_arguments(args)
    }

    fn short_circuits(&self) -> bool {
        COALESCE.inner().short_circuits()
    }
}

/// Whether DataFusion's `nvl` takes a value of `data_type`.
fn datafusion_nvl_takes(data_type: &DataType) -> bool {
    data_type.is_null()
        || data_type.is_integer()
        || data_type.is_floating()
        || matches!(
            data_type,
            DataType::Boolean | DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
        )
}
