//! Integer `+`, `-`, `*`, negation and `sum` fail on overflow, as Spark's
//! (in its ANSI mode, the default since 4.0) and DuckDB's do.
//!
//! DataFusion 55 wraps instead (apache/datafusion#17539): the sum of 5M
//! microsecond timestamps, past 2^63, came out negative with no error. Its
//! `BinaryExpr` can check, but nothing in a session turns that on, and a
//! physical plan's expressions cannot be rewritten in every kind of node.
//! So the rewrite is logical, where every expression passes:
//! - [`CheckedIntegerArithmetic`], an analyzer rule run after type
//!   coercion, writes each integer `a + b`, `a - b`, `a * b` and `-a` as a
//!   call of [`CheckedArithmetic`] (`checked_add`, ...). It computes the
//!   wrapped results with flags of overflow, tested once a batch, and only
//!   where one is set runs Arrow's checked kernel, which names the value.
//!   The call keeps the operator's name (`a + b`), so columns and the plans
//!   above them read as before.
//! - [`CheckedSum`] replaces DataFusion's `sum` (same name, types and
//!   state): for `BIGINT` and `BIGINT UNSIGNED` sums it adds in 128 bits and
//!   fails when the sum does not fit its type, in groups, windows and
//!   `DISTINCT`; other types go to DataFusion's own.
//!
//! A sum past 2^63 is exact as `sum(CAST(x AS DECIMAL(38,0)))`, which the
//! error says. Decimal arithmetic past 38 digits is not checked here.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::{Arc, LazyLock};

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, ListArray, PrimitiveArray,
};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::numeric;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Decimal128Type, Field, FieldRef, Int8Type, Int16Type, Int32Type,
    Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow::error::ArrowError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::utils::SingleRowListArrayBuilder;
use datafusion::common::{DFSchema, DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::{ScalarFunction, schema_name_from_exprs};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::type_coercion::binary::BinaryTypeCoercer;
use datafusion::logical_expr::utils::{AggregateOrderSensitivity, format_state_name};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, BinaryExpr, ColumnarValue, Documentation, EmitTo,
    Expr, ExprSchemable, GroupsAccumulator, LogicalPlan, Operator, ReversedUDAF,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, SetMonotonicity, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::physical_expr_common::datum::apply;
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::accumulate::NullState;
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::nulls::filtered_null_mask;

use crate::grouping_sets::rewrite_keeping_names;

/// The checked operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    Add,
    Subtract,
    Multiply,
    Negate,
}

impl Arithmetic {
    const ALL: [Arithmetic; 4] = [Self::Add, Self::Subtract, Self::Multiply, Self::Negate];

    fn of(op: Operator) -> Option<Self> {
        match op {
            Operator::Plus => Some(Self::Add),
            Operator::Minus => Some(Self::Subtract),
            Operator::Multiply => Some(Self::Multiply),
            _ => None,
        }
    }

    fn operator(self) -> Operator {
        match self {
            Self::Add => Operator::Plus,
            Self::Subtract | Self::Negate => Operator::Minus,
            Self::Multiply => Operator::Multiply,
        }
    }
}

/// `checked_add(a, b)`, `checked_subtract`, `checked_multiply` and
/// `checked_negate(a)` of integers: an error where the result does not fit
/// the operands' type.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CheckedArithmetic {
    op: Arithmetic,
    signature: Signature,
}

impl CheckedArithmetic {
    fn new(op: Arithmetic) -> Self {
        Self {
            op,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    fn arity(&self) -> usize {
        if self.op == Arithmetic::Negate { 1 } else { 2 }
    }
}

/// Each of [`CheckedArithmetic`]'s functions, once.
static CHECKED: LazyLock<Vec<Arc<ScalarUDF>>> = LazyLock::new(|| {
    Arithmetic::ALL
        .into_iter()
        .map(|op| Arc::new(ScalarUDF::from(CheckedArithmetic::new(op))))
        .collect()
});

/// The functions [`CheckedIntegerArithmetic`] writes, to register.
pub fn checked_functions() -> Vec<Arc<ScalarUDF>> {
    CHECKED.clone()
}

fn checked(op: Arithmetic) -> Arc<ScalarUDF> {
    CHECKED[op as usize].clone()
}

impl ScalarUDFImpl for CheckedArithmetic {
    fn name(&self) -> &str {
        match self.op {
            Arithmetic::Add => "checked_add",
            Arithmetic::Subtract => "checked_subtract",
            Arithmetic::Multiply => "checked_multiply",
            Arithmetic::Negate => "checked_negate",
        }
    }

    // Named as the operator it stands for, so that a rewritten expression
    // and the columns named after it keep their names.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        Ok(match args {
            [a] => format!("(- {})", a.schema_name()),
            [a, b] => format!(
                "{} {} {}",
                a.schema_name(),
                self.op.operator(),
                b.schema_name()
            ),
            _ => format!("{}({})", self.name(), schema_name_from_exprs(args)?),
        })
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let arity = self.arity();
        let integer = match self.op {
            Arithmetic::Negate => DataType::is_signed_integer,
            _ => DataType::is_integer,
        };
        if arg_types.len() != arity || !arg_types.iter().all(integer) {
            return plan_err!(
                "{} takes {arity} integer argument(s), not ({})",
                self.name(),
                arg_types
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        match arg_types {
            [l, r] => {
                let (l, r) = BinaryTypeCoercer::new(l, &self.op.operator(), r).get_input_types()?;
                Ok(vec![l, r])
            }
            _ => Ok(arg_types.to_vec()),
        }
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let overflow = |e: ArrowError| match e {
            ArrowError::ArithmeticOverflow(what) => {
                let what = what.strip_prefix("Overflow happened on: ").unwrap_or(&what);
                overflow_error(format!(
                    "{what} does not fit {}; cast an operand to DECIMAL(38,0) for the exact result",
                    args.return_field.data_type()
                ))
            }
            e => e.into(),
        };
        let result = match (self.op, args.args.as_slice()) {
            (Arithmetic::Negate, [ColumnarValue::Array(a)]) => {
                // `0 - a`, which overflows where `-a` does.
                let zero = ColumnarValue::Scalar(ScalarValue::new_zero(a.data_type())?);
                let array = ColumnarValue::Array(a.clone());
                match without_overflow(Arithmetic::Subtract, &zero, &array)? {
                    Some(negated) => ColumnarValue::Array(negated),
                    None => ColumnarValue::Array(numeric::neg(a).map_err(overflow)?),
                }
            }
            (Arithmetic::Negate, [ColumnarValue::Scalar(a)]) => {
                let negated = numeric::neg(&a.to_array()?).map_err(overflow)?;
                ColumnarValue::Scalar(ScalarValue::try_from_array(&negated, 0)?)
            }
            (op, [a, b]) => {
                if let Some(values) = without_overflow(op, a, b)? {
                    return Ok(ColumnarValue::Array(values));
                }
                let kernel = match op {
                    Arithmetic::Add => numeric::add,
                    Arithmetic::Subtract => numeric::sub,
                    _ => numeric::mul,
                };
                match apply(a, b, kernel) {
                    Err(DataFusionError::ArrowError(e, _)) => return Err(overflow(*e)),
                    result => result?,
                }
            }
            _ => return exec_err!("{} given {} arguments", self.name(), args.args.len()),
        };
        Ok(result)
    }
}

/// `a op b`, computed as the CPU computes it, with no branch per value:
/// `None` where a value overflowed (under a null too), for Arrow's checked
/// kernel, slower, to say which or to find that only nulls did; or where
/// the operands are not an array beside an array or a non-null constant
/// of one integer type.
fn without_overflow(
    op: Arithmetic,
    a: &ColumnarValue,
    b: &ColumnarValue,
) -> Result<Option<ArrayRef>> {
    match a.data_type() {
        DataType::Int8 => without_overflow_of::<Int8Type>(op, a, b),
        DataType::Int16 => without_overflow_of::<Int16Type>(op, a, b),
        DataType::Int32 => without_overflow_of::<Int32Type>(op, a, b),
        DataType::Int64 => without_overflow_of::<Int64Type>(op, a, b),
        DataType::UInt8 => without_overflow_of::<UInt8Type>(op, a, b),
        DataType::UInt16 => without_overflow_of::<UInt16Type>(op, a, b),
        DataType::UInt32 => without_overflow_of::<UInt32Type>(op, a, b),
        DataType::UInt64 => without_overflow_of::<UInt64Type>(op, a, b),
        _ => Ok(None),
    }
}

fn without_overflow_of<T: ArrowPrimitiveType<Native: Overflowing>>(
    op: Arithmetic,
    a: &ColumnarValue,
    b: &ColumnarValue,
) -> Result<Option<ArrayRef>> {
    match op {
        Arithmetic::Add => without_overflow_by::<T>(a, b, T::Native::add),
        Arithmetic::Subtract => without_overflow_by::<T>(a, b, T::Native::sub),
        Arithmetic::Multiply => without_overflow_by::<T>(a, b, T::Native::mul),
        Arithmetic::Negate => Ok(None),
    }
}

fn without_overflow_by<T: ArrowPrimitiveType<Native: Overflowing>>(
    a: &ColumnarValue,
    b: &ColumnarValue,
    f: impl Fn(T::Native, T::Native) -> (T::Native, T::Native) + Copy,
) -> Result<Option<ArrayRef>> {
    let constant = |c: &ScalarValue| -> Result<Option<T::Native>> {
        let c = c.to_array()?;
        let c = c.as_primitive_opt::<T>();
        Ok(c.filter(|c| c.is_valid(0)).map(|c| c.value(0)))
    };
    let (values, nulls) = match (a, b) {
        (ColumnarValue::Array(a), ColumnarValue::Array(b)) => {
            let (Some(a), Some(b)) = (a.as_primitive_opt::<T>(), b.as_primitive_opt::<T>()) else {
                return Ok(None);
            };
            let values = each(a.values(), b.values(), f);
            (values, NullBuffer::union(a.nulls(), b.nulls()))
        }
        (ColumnarValue::Array(a), ColumnarValue::Scalar(b)) => {
            let (Some(a), Some(b)) = (a.as_primitive_opt::<T>(), constant(b)?) else {
                return Ok(None);
            };
            (
                each(a.values(), std::iter::repeat(&b), f),
                a.nulls().cloned(),
            )
        }
        (ColumnarValue::Scalar(a), ColumnarValue::Array(b)) => {
            let (Some(a), Some(b)) = (constant(a)?, b.as_primitive_opt::<T>()) else {
                return Ok(None);
            };
            (
                each(std::iter::repeat(&a), b.values(), f),
                b.nulls().cloned(),
            )
        }
        _ => return Ok(None),
    };
    Ok(values.map(|values| Arc::new(PrimitiveArray::<T>::new(values.into(), nulls)) as ArrayRef))
}

/// `f` of each pair; `None` if any overflowed. The flags of all pairs
/// are or-ed together, and only once tested, so that the loop has no
/// branch and compiles to vector instructions.
fn each<'a, N: Overflowing + 'a>(
    a: impl IntoIterator<Item = &'a N>,
    b: impl IntoIterator<Item = &'a N>,
    f: impl Fn(N, N) -> (N, N),
) -> Option<Vec<N>> {
    let mut flags = N::NONE;
    let values = a
        .into_iter()
        .zip(b)
        .map(|(&a, &b)| {
            let (value, flag) = f(a, b);
            flags = flags | flag;
            value
        })
        .collect();
    (!N::overflowed(flags)).then_some(values)
}

/// Integer operations that wrap and flag their overflow: each gives the
/// wrapped result and bits that say, or-ed with others, whether any
/// overflowed ([`Overflowing::overflowed`]).
trait Overflowing: Copy + std::ops::BitOr<Output = Self> {
    const NONE: Self;
    fn add(a: Self, b: Self) -> (Self, Self);
    fn sub(a: Self, b: Self) -> (Self, Self);
    fn mul(a: Self, b: Self) -> (Self, Self);
    fn overflowed(flags: Self) -> bool;
}

macro_rules! signed_overflowing {
    ($($t:ty),*) => {$(
        impl Overflowing for $t {
            const NONE: Self = 0;
            // The sign bit is set where the result's sign is not what the
            // operands' signs allow.
            fn add(a: Self, b: Self) -> (Self, Self) {
                let r = a.wrapping_add(b);
                (r, (a ^ r) & (b ^ r))
            }
            fn sub(a: Self, b: Self) -> (Self, Self) {
                let r = a.wrapping_sub(b);
                (r, (a ^ b) & (a ^ r))
            }
            fn mul(a: Self, b: Self) -> (Self, Self) {
                let (r, overflow) = a.overflowing_mul(b);
                (r, -(overflow as Self))
            }
            fn overflowed(flags: Self) -> bool {
                flags < 0
            }
        }
    )*};
}

macro_rules! unsigned_overflowing {
    ($($t:ty),*) => {$(
        impl Overflowing for $t {
            const NONE: Self = 0;
            fn add(a: Self, b: Self) -> (Self, Self) {
                let r = a.wrapping_add(b);
                (r, (r < a) as Self)
            }
            fn sub(a: Self, b: Self) -> (Self, Self) {
                (a.wrapping_sub(b), (a < b) as Self)
            }
            fn mul(a: Self, b: Self) -> (Self, Self) {
                let (r, overflow) = a.overflowing_mul(b);
                (r, overflow as Self)
            }
            fn overflowed(flags: Self) -> bool {
                flags != 0
            }
        }
    )*};
}

signed_overflowing!(i8, i16, i32, i64);
unsigned_overflowing!(u8, u16, u32, u64);

/// Writes integer `+`, `-`, `*` and negation as [`CheckedArithmetic`]
/// calls, each keeping its name.
#[derive(Debug, Default)]
pub struct CheckedIntegerArithmetic;

impl CheckedIntegerArithmetic {
    pub const NAME: &'static str = "checked_integer_arithmetic";
}

impl AnalyzerRule for CheckedIntegerArithmetic {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            // A limit's count is folded to a constant while planning, or
            // refused: it stays as written.
            if let LogicalPlan::Limit(_) = node {
                return Ok(Transformed::no(node));
            }
            rewrite_keeping_names(node, checked_call)
        })
        .map(|t| t.data)
    }
}

/// `expr` as a checked call, if it is integer arithmetic.
fn checked_call(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let integer = |e: &Expr| e.get_type(schema).is_ok_and(|t| t.is_integer());
    let signed = |e: &Expr| e.get_type(schema).is_ok_and(|t| t.is_signed_integer());
    let (op, args) = match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if let Some(op) = Arithmetic::of(op)
                && integer(&left)
                && integer(&right) =>
        {
            (op, vec![*left, *right])
        }
        Expr::Negative(inner) if signed(&inner) => (Arithmetic::Negate, vec![*inner]),
        expr => return Ok(Transformed::no(expr)),
    };
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(checked(op), args),
    )))
}

/// DataFusion's `sum`, but that an integer sum fails where it does not fit
/// its type.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct CheckedSum {
    sum: Sum,
}

/// [`CheckedSum`], to register in place of DataFusion's `sum`.
pub fn checked_sum() -> Arc<AggregateUDF> {
    Arc::new(AggregateUDF::from(CheckedSum::default()))
}

/// A partial sum, as it passes from one stage of an aggregate to the next:
/// all 128 bits, so that partial sums past the type that add up to one
/// within it are no error.
const PARTIAL_SUM: DataType = DataType::Decimal128(38, 0);

/// Calls `$make` with the integer type of a sum's result, or gives
/// DataFusion's own accumulator (`$otherwise`) for any other.
macro_rules! by_integer_type {
    ($args:expr, $make:ident, $otherwise:expr) => {
        match $args.return_field.data_type() {
            DataType::Int64 => Ok(Box::new($make::<Int64Type>::new($args.name))),
            DataType::UInt64 => Ok(Box::new($make::<UInt64Type>::new($args.name))),
            _ => $otherwise,
        }
    };
}

impl AggregateUDFImpl for CheckedSum {
    fn name(&self) -> &str {
        self.sum.name()
    }

    fn signature(&self) -> &Signature {
        self.sum.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.sum.return_type(arg_types)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        match args.return_type() {
            DataType::Int64 | DataType::UInt64 if !args.is_distinct => {
                let name = format_state_name(args.name, "sum");
                Ok(vec![Arc::new(Field::new(name, PARTIAL_SUM, true))])
            }
            _ => self.sum.state_fields(args),
        }
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            by_integer_type!(args, DistinctSum, self.sum.accumulator(args))
        } else {
            by_integer_type!(args, IntegerSum, self.sum.accumulator(args))
        }
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.sum.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        by_integer_type!(args, IntegerSums, self.sum.create_groups_accumulator(args))
    }

    // Both of ours take values back out, as a window's frame moves.
    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            by_integer_type!(args, DistinctSum, self.sum.create_sliding_accumulator(args))
        } else {
            by_integer_type!(args, IntegerSum, self.sum.create_sliding_accumulator(args))
        }
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.sum.order_sensitivity()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.sum.set_monotonicity(data_type)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.sum.documentation()
    }
}

/// An integer type a sum is of, added up in 128 bits (2^64 values of the
/// widest do not pass it).
trait SumType:
    ArrowPrimitiveType<Native: Into<i128> + TryFrom<i128> + Hash + Eq> + Debug + Send + Sync
{
}
impl<T> SumType for T where
    T: ArrowPrimitiveType<Native: Into<i128> + TryFrom<i128> + Hash + Eq> + Debug + Send + Sync
{
}

/// `sum`, the value of the aggregate `name`, as `T`, or the error that it
/// does not fit.
fn fit<T: SumType>(sum: i128, name: &str) -> Result<T::Native> {
    T::Native::try_from(sum).map_err(|_| {
        overflow_error(format!(
            "{name} is {sum}, which does not fit {}; the sum of its argument cast to DECIMAL(38,0) gives it",
            T::DATA_TYPE
        ))
    })
}

/// An overflow, said as vshred's own errors are (without DataFusion's
/// "Execution error: ").
fn overflow_error(what: String) -> DataFusionError {
    DataFusionError::External(format!("integer overflow: {what}").into())
}

/// The sum of `values`'s valid values, and how many there were.
fn total<T: ArrowPrimitiveType<Native: Into<i128>>>(values: &PrimitiveArray<T>) -> (i128, usize) {
    let sum = match values.nulls().filter(|n| n.null_count() > 0) {
        None => values.values().iter().map(|&v| v.into()).sum(),
        Some(nulls) => nulls
            .valid_indices()
            .map(|i| values.values()[i].into())
            .sum(),
    };
    (sum, values.len() - values.null_count())
}

/// Partial sums as [`PARTIAL_SUM`]s.
fn partial_sums(sums: Vec<i128>, nulls: Option<NullBuffer>) -> ArrayRef {
    Arc::new(Decimal128Array::new(sums.into(), nulls).with_data_type(PARTIAL_SUM))
}

/// The sum of one group, or of a window's frame.
#[derive(Debug)]
struct IntegerSum<T: SumType> {
    name: String,
    sum: i128,
    count: usize,
    of: PhantomData<T>,
}

impl<T: SumType> IntegerSum<T> {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            sum: 0,
            count: 0,
            of: PhantomData,
        }
    }
}

impl<T: SumType> Accumulator for IntegerSum<T> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (sum, count) = total(values[0].as_primitive::<T>());
        self.sum += sum;
        self.count += count;
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (sum, count) = total(values[0].as_primitive::<T>());
        self.sum -= sum;
        self.count -= count;
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    // A partial sum is null where it summed no value.
    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (sum, count) = total(states[0].as_primitive::<Decimal128Type>());
        self.sum += sum;
        self.count += count;
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let sum = (self.count > 0).then_some(self.sum);
        Ok(vec![ScalarValue::Decimal128(sum, 38, 0)])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let sum = match self.count {
            0 => None,
            _ => Some(fit::<T>(self.sum, &self.name)?),
        };
        ScalarValue::new_primitive::<T>(sum, &T::DATA_TYPE)
    }

    fn size(&self) -> usize {
        size_of::<Self>() + self.name.capacity()
    }
}

/// The sums of many groups.
#[derive(Debug)]
struct IntegerSums<T: SumType> {
    name: String,
    sums: Vec<i128>,
    nulls: NullState,
    of: PhantomData<T>,
}

impl<T: SumType> IntegerSums<T> {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            sums: Vec::new(),
            nulls: NullState::new(),
            of: PhantomData,
        }
    }

    /// Adds `values` (of `T`, or partial sums) to their groups.
    fn add<V: ArrowPrimitiveType<Native: Into<i128>> + Send>(
        &mut self,
        values: &PrimitiveArray<V>,
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) {
        self.sums.resize(total_num_groups, 0);
        let sums = &mut self.sums;
        self.nulls.accumulate(
            group_indices,
            values,
            opt_filter,
            total_num_groups,
            |group, value| sums[group] += value.into(),
        );
    }
}

impl<T: SumType> GroupsAccumulator for IntegerSums<T> {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.add(
            values[0].as_primitive::<T>(),
            group_indices,
            opt_filter,
            total_num_groups,
        );
        Ok(())
    }

    fn merge_batch(
        &mut self,
        states: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.add(
            states[0].as_primitive::<Decimal128Type>(),
            group_indices,
            None,
            total_num_groups,
        );
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let sums = emit_to.take_needed(&mut self.sums);
        let nulls = self.nulls.build(emit_to);
        let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
        let values = sums
            .iter()
            .enumerate()
            .map(|(i, &sum)| match valid(i) {
                true => fit::<T>(sum, &self.name),
                false => Ok(Default::default()),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(PrimitiveArray::<T>::new(values.into(), nulls)))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let sums = emit_to.take_needed(&mut self.sums);
        Ok(vec![partial_sums(sums, self.nulls.build(emit_to))])
    }

    // A row's state is its value (null where the filter leaves it out), so
    // DataFusion may skip partial aggregation of groups that barely repeat.
    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        let values = values[0].as_primitive::<T>();
        let nulls = filtered_null_mask(opt_filter, values);
        let sums = values.values().iter().map(|&v| v.into()).collect();
        Ok(vec![partial_sums(sums, nulls)])
    }

    fn size(&self) -> usize {
        self.sums.capacity() * size_of::<i128>() + self.nulls.size() + self.name.capacity()
    }
}

/// `sum(DISTINCT x)`: each distinct value with how many times it is in the
/// frame, so that a window may take values back out.
#[derive(Debug)]
struct DistinctSum<T: SumType> {
    name: String,
    counts: HashMap<T::Native, usize>,
}

impl<T: SumType> DistinctSum<T> {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            counts: HashMap::new(),
        }
    }

    fn add(&mut self, values: &PrimitiveArray<T>) {
        for value in values.iter().flatten() {
            *self.counts.entry(value).or_default() += 1;
        }
    }
}

impl<T: SumType> Accumulator for DistinctSum<T> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(values[0].as_primitive::<T>());
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for value in values[0].as_primitive::<T>().iter().flatten() {
            if let Some(count) = self.counts.get_mut(&value) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&value);
                }
            }
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    // The state is the list of distinct values, as DataFusion's.
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values: PrimitiveArray<T> = self.counts.keys().map(|&v| Some(v)).collect();
        Ok(vec![
            SingleRowListArrayBuilder::new(Arc::new(values)).build_list_scalar(),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists: &ListArray = states[0].as_list();
        for list in lists.iter().flatten() {
            self.add(list.as_primitive::<T>());
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let sum = match self.counts.is_empty() {
            true => None,
            false => Some(fit::<T>(
                self.counts.keys().map(|&v| v.into()).sum(),
                &self.name,
            )?),
        };
        ScalarValue::new_primitive::<T>(sum, &T::DATA_TYPE)
    }

    fn size(&self) -> usize {
        size_of::<Self>()
            + self.name.capacity()
            + self.counts.capacity() * (size_of::<T::Native>() + size_of::<usize>())
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::Int64Array;

    use super::*;

    #[test]
    fn a_row_s_state_is_its_value_or_null_where_the_filter_leaves_it_out() {
        let sums = IntegerSums::<Int64Type>::new("sum(x)");
        let values: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)]));
        let filter = BooleanArray::from(vec![Some(true), Some(true), Some(false), None]);
        let state = sums.convert_to_state(&[values], Some(&filter)).unwrap();
        let state: Vec<Option<i128>> = state[0].as_primitive::<Decimal128Type>().iter().collect();
        assert_eq!(state, [Some(1), None, None, None]);
    }

    fn call(op: Arithmetic, a: ArrayRef, b: Option<ColumnarValue>) -> Result<ArrayRef> {
        let field = Arc::new(Field::new("x", a.data_type().clone(), true));
        let rows = a.len();
        let args: Vec<ColumnarValue> = [ColumnarValue::Array(a)].into_iter().chain(b).collect();
        let args = ScalarFunctionArgs {
            number_rows: rows,
            arg_fields: vec![field.clone(); args.len()],
            args,
            return_field: field,
            config_options: Arc::new(ConfigOptions::default()),
        };
        checked(op).invoke_with_args(args)?.into_array(rows)
    }

    fn add(a: ArrayRef, b: ColumnarValue) -> Result<ArrayRef> {
        call(Arithmetic::Add, a, Some(b))
    }

    #[test]
    fn an_overflow_under_a_null_is_no_error_and_any_other_is() {
        // The value under the null overflows: only the checked kernel,
        // which the fast path leaves it to, knows it is a null's.
        let under_null: ArrayRef = Arc::new(Int64Array::new(
            vec![i64::MAX, 1].into(),
            Some(NullBuffer::from(vec![false, true])),
        ));
        let one = ColumnarValue::Scalar(ScalarValue::Int64(Some(1)));
        let sum = add(under_null.clone(), one.clone()).unwrap();
        let sum: Vec<Option<i64>> = sum.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(sum, [None, Some(2)]);
        let valid: ArrayRef = Arc::new(Int64Array::from(vec![1, i64::MAX]));
        let failure = add(valid.clone(), one).unwrap_err().to_string();
        assert!(
            failure.contains("9223372036854775807 + 1 does not fit Int64"),
            "{failure}"
        );
        let failure = add(valid.clone(), ColumnarValue::Array(valid))
            .unwrap_err()
            .to_string();
        assert!(failure.contains("integer overflow: "), "{failure}");
        let min_under_null: ArrayRef = Arc::new(Int64Array::new(
            vec![i64::MIN, 1].into(),
            Some(NullBuffer::from(vec![false, true])),
        ));
        let negated = call(Arithmetic::Negate, min_under_null, None).unwrap();
        let negated: Vec<Option<i64>> = negated.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(negated, [None, Some(-1)]);
        let min: ArrayRef = Arc::new(Int64Array::from(vec![1, i64::MIN]));
        let failure = call(Arithmetic::Negate, min, None).unwrap_err().to_string();
        assert!(
            failure.contains("- -9223372036854775808 does not fit Int64"),
            "{failure}"
        );
        let small: ArrayRef = Arc::new(arrow::array::UInt8Array::from(vec![200, 3]));
        let failure = add(small.clone(), ColumnarValue::Array(small))
            .unwrap_err()
            .to_string();
        assert!(
            failure.contains("200 + 200 does not fit UInt8"),
            "{failure}"
        );
    }

    /// Every pair of values of `$t` through each operation.
    macro_rules! flags_agree_with_checked_operations {
        ($t:ty) => {
            for a in <$t>::MIN..=<$t>::MAX {
                for b in <$t>::MIN..=<$t>::MAX {
                    for (f, checked) in [
                        (
                            <$t as Overflowing>::add as fn($t, $t) -> ($t, $t),
                            <$t>::checked_add as fn($t, $t) -> Option<$t>,
                        ),
                        (<$t as Overflowing>::sub, <$t>::checked_sub),
                        (<$t as Overflowing>::mul, <$t>::checked_mul),
                    ] {
                        let (value, flags) = f(a, b);
                        assert_eq!(<$t>::overflowed(flags), checked(a, b).is_none(), "{a}, {b}");
                        assert!(checked(a, b).is_none_or(|c| c == value), "{a}, {b}");
                    }
                }
            }
        };
    }

    /// The flags agree with Rust's checked operations on every pair of
    /// 8-bit values (the macros are the same for the wider types).
    #[test]
    fn the_flags_say_overflow_exactly_where_a_checked_operation_fails() {
        flags_agree_with_checked_operations!(i8);
        flags_agree_with_checked_operations!(u8);
    }

    #[test]
    fn grouped_sums_fail_only_for_the_group_past_the_type() {
        let mut sums = IntegerSums::<Int64Type>::new("sum(x)");
        let values: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, 1, 5, -1]));
        sums.update_batch(&[values], &[0, 0, 1, 0], None, 2)
            .unwrap();
        // Group 0 went past and came back.
        let fitting = sums.evaluate(EmitTo::First(2)).unwrap();
        let fitting: Vec<Option<i64>> = fitting.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(fitting, [Some(i64::MAX), Some(5)]);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, 1]));
        sums.update_batch(&[values], &[0, 0], None, 1).unwrap();
        let failure = sums.evaluate(EmitTo::All).unwrap_err().to_string();
        assert!(
            failure.contains("sum(x) is 9223372036854775808, which does not fit Int64"),
            "{failure}"
        );
    }
}
