//! The filter syntax (see [the module](super)) read by recursive descent:
//! `or` of `and` of `not` of comparisons, parentheses and `in` lists; an
//! error names the character where the text stops making sense.

use super::{Comparison, Literal, Op, Operand, Predicate};
use crate::error::{Error, ErrorKind, Result};
use crate::json::json_to_variant;
use crate::path::VariantPath;
use crate::shred::ShreddingSchema;
use crate::variant::VariantRef;

impl Predicate {
    /// Parses [the syntax](super).
    pub fn parse(text: &str) -> Result<Predicate> {
        let mut parser = Parser {
            text,
            pos: 0,
            depth: 0,
        };
        let predicate = parser.or()?;
        parser.skip_space();
        if parser.pos < text.len() {
            return Err(parser.error("expected 'and', 'or' or the end"));
        }
        Ok(predicate)
    }
}

/// A recursive-descent parser over the filter text.
struct Parser<'t> {
    text: &'t str,
    pos: usize,
    /// The `not`s and parentheses open at `pos`.
    depth: usize,
}

/// The most `not`s and parentheses a filter nests: the parser, and what
/// walks the filter after, recurse a level each, and a stack overflow
/// would end the process (as the JSON parser's limit keeps it from).
const MAX_DEPTH: usize = 128;

impl<'t> Parser<'t> {
    #[cold]
    fn error(&self, message: &str) -> Error {
        Error::new(
            ErrorKind::Filter,
            format!(
                "{:?} at character {}: {message}",
                self.text,
                crate::path::character_at(self.text, self.pos)
            ),
        )
    }

    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// Consumes `word` (a keyword, case-insensitive, not followed by a
    /// name character) or a symbol.
    fn eat(&mut self, word: &str) -> bool {
        self.skip_space();
        let rest = self.rest();
        let Some(head) = rest.get(..word.len()) else {
            return false;
        };
        let keyword = word.bytes().all(|b| b.is_ascii_alphabetic());
        let matched = if keyword {
            head.eq_ignore_ascii_case(word)
                && !rest[word.len()..].bytes().next().is_some_and(is_name_byte)
        } else {
            head == word
        };
        if matched {
            self.pos += word.len();
        }
        matched
    }

    fn or(&mut self) -> Result<Predicate> {
        let mut parts = vec![self.and()?];
        while self.eat("or") || self.eat("||") {
            parts.push(self.and()?);
        }
        Ok(flatten(parts, Predicate::Or))
    }

    fn and(&mut self) -> Result<Predicate> {
        let mut parts = vec![self.unary()?];
        while self.eat("and") || self.eat("&&") {
            parts.push(self.unary()?);
        }
        Ok(flatten(parts, Predicate::And))
    }

    fn unary(&mut self) -> Result<Predicate> {
        let negated = self.eat("not") || self.eat("!");
        if !negated && !self.eat("(") {
            return self.comparison();
        }
        if self.depth == MAX_DEPTH {
            return Err(self.error(&format!(
                "more than {MAX_DEPTH} 'not's and parentheses nest here"
            )));
        }
        self.depth += 1;
        let inner = match negated {
            true => Predicate::Not(Box::new(self.unary()?)),
            false => {
                let inner = self.or()?;
                if !self.eat(")") {
                    return Err(self.error("expected ')'"));
                }
                inner
            }
        };
        self.depth -= 1;
        Ok(inner)
    }

    fn comparison(&mut self) -> Result<Predicate> {
        let operand = self.operand()?;
        if self.eat("is") {
            let negated = self.eat("not");
            if !self.eat("null") {
                return Err(self.error(match negated {
                    true => "expected 'null' after 'is not'",
                    false => "expected 'null' after 'is'",
                }));
            }
            let is_null = Predicate::IsNull(operand);
            return Ok(if negated {
                Predicate::Not(Box::new(is_null))
            } else {
                is_null
            });
        }
        if self.eat("in") {
            if !self.eat("(") {
                return Err(self.error("expected '(' after 'in'"));
            }
            let mut parts = Vec::new();
            loop {
                let literal = self
                    .literal_for(&operand)?
                    .ok_or_else(|| self.error("null is never equal to a value: use 'is null'"))?;
                parts.push(Predicate::Compare(Comparison {
                    operand: operand.clone(),
                    op: Op::Eq,
                    literal,
                }));
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.error("expected ',' or ')'"));
                }
            }
            return Ok(flatten(parts, Predicate::Or));
        }
        let op = [
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<>", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("=", Op::Eq),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .into_iter()
        .find(|(symbol, _)| self.eat(symbol))
        .map(|(_, op)| op);
        let Some(op) = op else {
            // A bare operand: true when it is `true`.
            self.skip_space();
            if self.pos == self.text.len() || self.rest().starts_with(')') || self.at_keyword() {
                return Ok(Predicate::Compare(Comparison {
                    operand,
                    op: Op::Eq,
                    literal: Literal::Bool(true),
                }));
            }
            return Err(self
                .error("expected an operator: = == != <> < <= > >= in, 'is null', 'and' or 'or'"));
        };
        match self.literal_for(&operand)? {
            Some(literal) => Ok(Predicate::Compare(Comparison {
                operand,
                op,
                literal,
            })),
            None => match op {
                Op::Eq => Ok(Predicate::IsNull(operand)),
                Op::Ne => Ok(Predicate::Not(Box::new(Predicate::IsNull(operand)))),
                _ => Err(self.error("null has no order: compare with a value, or use 'is null'")),
            },
        }
    }

    fn at_keyword(&self) -> bool {
        let rest = self.rest();
        ["and", "or"].iter().any(|k| {
            rest.get(..k.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(k))
                && !rest[k.len()..].bytes().next().is_some_and(is_name_byte)
        }) || rest.starts_with("&&")
            || rest.starts_with("||")
    }

    fn operand(&mut self) -> Result<Operand> {
        self.skip_space();
        let rest = self.rest();
        if rest.starts_with('$') {
            let (path, len) = VariantPath::parse_prefix(rest).map_err(|(at, message)| {
                self.pos += at;
                self.error(message)
            })?;
            self.pos += len;
            if !self.eat("as") {
                return Ok(Operand::Path(path));
            }
            return Ok(match self.type_name()? {
                ShreddingSchema::Variant => Operand::Path(path),
                as_type => Operand::PathAs(path, as_type),
            });
        }
        if let Some(quoted) = rest.strip_prefix('`') {
            let Some(end) = quoted.find('`') else {
                return Err(self.error("unterminated `name`"));
            };
            self.pos += end + 2;
            return Ok(Operand::Column(quoted[..end].to_string()));
        }
        let len = rest.bytes().take_while(|&b| is_name_byte(b)).count();
        if len == 0 {
            return Err(self.error("expected a path ($.a.b) or a column name"));
        }
        self.pos += len;
        if matches!(rest.as_bytes().get(len), Some(b'.' | b'[')) {
            let steps = &rest[len..];
            let steps = &steps[..steps.find(char::is_whitespace).unwrap_or(steps.len())];
            return Err(self.error(&format!(
                "a filter compares a path of the Variant column read, from its root $, or a column by its name alone: ${steps} where {} is the column read (another column's fields are filtered in SQL)",
                &rest[..len]
            )));
        }
        Ok(Operand::Column(rest[..len].to_string()))
    }

    /// The type after `as`: `int64`, `decimal(9,2)`, ...
    fn type_name(&mut self) -> Result<ShreddingSchema> {
        self.skip_space();
        let rest = self.rest();
        let mut len = rest.bytes().take_while(|&b| is_name_byte(b)).count();
        if rest[len..].starts_with('(') {
            len += rest[len..]
                .find(')')
                .map_or(rest.len() - len, |end| end + 1);
        }
        let schema = ShreddingSchema::parse_type_name(&rest[..len])
            .map_err(|e| self.error(&format!("expected a type after 'as': {}", e.message())))?;
        self.pos += len;
        Ok(schema)
    }

    /// A literal compared with `operand`: a string compared with a path
    /// read as a date or timestamp is converted as the path's values are
    /// (`"2024-03-01"` as `timestamp` is midnight UTC), so that it compares
    /// as an instant.
    fn literal_for(&mut self, operand: &Operand) -> Result<Option<Literal>> {
        let start = self.pos;
        let literal = self.literal()?;
        let (Operand::PathAs(_, as_type), Some(Literal::String(text))) = (operand, &literal) else {
            return Ok(literal);
        };
        if !matches!(
            as_type,
            ShreddingSchema::Date | ShreddingSchema::Timestamp { .. }
        ) {
            return Ok(literal);
        }
        match Literal::instant(text, as_type) {
            Some(instant) => Ok(Some(instant)),
            None => {
                self.pos = start;
                self.skip_space();
                Err(self.error(&not_an_instant(text, as_type)))
            }
        }
    }

    /// A JSON scalar; `None` for `null`.
    fn literal(&mut self) -> Result<Option<Literal>> {
        self.skip_space();
        let rest = self.rest();
        let len = match rest.as_bytes().first() {
            Some(b'"') => {
                let mut escaped = false;
                let end = rest[1..].char_indices().find(|&(_, c)| {
                    let close = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    close
                });
                match end {
                    Some((i, _)) => i + 2,
                    None => return Err(self.error("unterminated string")),
                }
            }
            Some(_) => rest
                .bytes()
                .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
                .count(),
            None => 0,
        };
        if len == 0 {
            return Err(self.error(match rest.starts_with('\'') {
                true => "a string literal takes double quotes, as in JSON: \"text\"",
                false => "expected a JSON literal: a number, a string, true, false or null",
            }));
        }
        let text = &rest[..len];
        let (m, v) = json_to_variant(text.as_bytes()).map_err(|e| {
            // A number past a double's range, or with more digits than a
            // decimal holds, is JSON all the same.
            let held = e.kind() == ErrorKind::InexactNumber || e.message().contains("out of range");
            self.error(&match held {
                true => format!(
                    "no Variant value holds the literal {text} ({})",
                    e.message()
                ),
                false => format!("the literal {text} is not JSON ({})", e.message()),
            })
        })?;
        let v = VariantRef::try_new(&m, &v)?;
        let literal = if v.is_null() {
            None
        } else if let Some(d) = v.as_decimal() {
            Some(Literal::Number(d))
        } else if let Some(f) = v.as_f64() {
            Some(Literal::Double(f))
        } else if let Some(s) = v.as_str() {
            Some(Literal::String(s.to_string()))
        } else if let Some(b) = v.as_bool() {
            Some(Literal::Bool(b))
        } else {
            return Err(self.error("the literal must be a number, a string, a boolean or null"));
        };
        self.pos += len;
        Ok(literal)
    }
}

pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// One part as itself, several as `combine` of them.
fn flatten(mut parts: Vec<Predicate>, combine: fn(Vec<Predicate>) -> Predicate) -> Predicate {
    if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        combine(parts)
    }
}

/// The message for `text`, compared with values read as `as_type` (a date
/// or timestamp), that is not one.
pub(super) fn not_an_instant(text: &str, as_type: &ShreddingSchema) -> String {
    format!(
        "{} is not a {} (as an ISO-8601 string such as \"2024-03-01\" or \"2024-03-01T12:30:00Z\")",
        Literal::String(text.to_string()),
        as_type.type_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shred::cast_as;
    use crate::variant::VariantDecimal;

    fn path(p: &str) -> Operand {
        Operand::Path(p.parse().unwrap())
    }

    fn cmp(operand: Operand, op: Op, literal: Literal) -> Predicate {
        Predicate::Compare(Comparison {
            operand,
            op,
            literal,
        })
    }

    fn number(v: i64) -> Literal {
        Literal::Number(VariantDecimal::from(v))
    }

    #[test]
    fn display_is_the_syntax_it_parses_from() {
        for text in [
            r#"$.a.b >= 1.50 and (id < 3 or $.s == "x\"y") and not ($.t is null)"#,
            "$.n in (1, 2, 3)",
            "$.ok == true and $.d > 1e3",
            "$.price as decimal(9,2) >= 1.5 and $.n as int64 in (1, 2)",
            "`odd name` > 1 and id < 2",
        ] {
            let parsed: Predicate = text.parse().unwrap();
            let shown = parsed.to_string();
            assert_eq!(
                shown.parse::<Predicate>().unwrap(),
                parsed,
                "{text} shown as {shown}"
            );
        }
    }

    #[test]
    fn parses_operators_and_literals() {
        for (text, op, literal) in [
            ("$.a == 1", Op::Eq, number(1)),
            (
                "$.a=1.50",
                Op::Eq,
                Literal::Number(VariantDecimal::try_new(150, 2).unwrap()),
            ),
            ("$.a != \"x y\"", Op::Ne, Literal::String("x y".into())),
            ("$.a <> \"a\\\"b\"", Op::Ne, Literal::String("a\"b".into())),
            ("$.a <= 1e3", Op::Le, Literal::Double(1000.0)),
            ("$.a>=true", Op::Ge, Literal::Bool(true)),
            ("$.a < -2", Op::Lt, number(-2)),
            ("$['b c'][0] > 0", Op::Gt, number(0)),
        ] {
            let Predicate::Compare(c) = Predicate::parse(text).unwrap() else {
                panic!("{text}")
            };
            assert_eq!((c.op, c.literal), (op, literal), "{text}");
        }
    }

    #[test]
    fn and_binds_tighter_than_or_and_parentheses_group() {
        let a = || cmp(path("$.a"), Op::Eq, number(1));
        let b = || cmp(Operand::Column("id".into()), Op::Gt, number(2));
        let c = || Predicate::IsNull(path("$.c"));
        assert_eq!(
            Predicate::parse("$.a == 1 or id > 2 and $.c is null").unwrap(),
            Predicate::Or(vec![a(), Predicate::And(vec![b(), c()])])
        );
        assert_eq!(
            Predicate::parse("($.a = 1 || id > 2) && $.c == null").unwrap(),
            Predicate::And(vec![Predicate::Or(vec![a(), b()]), c()])
        );
        assert_eq!(
            Predicate::parse("NOT $.a == 1 AND $.c IS NOT NULL").unwrap(),
            Predicate::And(vec![
                Predicate::Not(Box::new(a())),
                Predicate::Not(Box::new(c()))
            ])
        );
        assert_eq!(
            Predicate::parse("id in (2, 3)").unwrap(),
            Predicate::Or(vec![
                cmp(Operand::Column("id".into()), Op::Eq, number(2)),
                cmp(Operand::Column("id".into()), Op::Eq, number(3)),
            ])
        );
        assert_eq!(
            Predicate::parse("$.flag and not `odd name`").unwrap(),
            Predicate::And(vec![
                cmp(path("$.flag"), Op::Eq, Literal::Bool(true)),
                Predicate::Not(Box::new(cmp(
                    Operand::Column("odd name".into()),
                    Op::Eq,
                    Literal::Bool(true)
                )))
            ])
        );
    }

    #[test]
    fn names_are_columns_and_dollar_paths_are_in_the_variant() {
        let Predicate::Compare(c) = Predicate::parse("id == 5").unwrap() else {
            panic!()
        };
        assert_eq!(c.operand, Operand::Column("id".into()));
        let Predicate::Compare(c) = Predicate::parse("$.id == 5").unwrap() else {
            panic!()
        };
        assert_eq!(c.operand, path("$.id"));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        let nested = |n: usize| format!("{}$.a == 1{}", "(".repeat(n), ")".repeat(n));
        assert!(Predicate::parse(&nested(MAX_DEPTH)).is_ok());
        for text in [
            nested(MAX_DEPTH + 1),
            nested(10_000),
            format!("{}$.a == 1", "not ".repeat(20_000)),
        ] {
            let err = Predicate::parse(&text).unwrap_err().to_string();
            assert!(
                err.contains("more than 128 'not's and parentheses nest here"),
                "{err}"
            );
        }
    }

    #[test]
    fn bad_predicates_say_why_and_where() {
        for (text, message) in [
            ("$.a 1", "at character 5: expected an operator"),
            ("$.a == x", "the literal x is not JSON"),
            (
                "$.a > 1e400",
                "no Variant value holds the literal 1e400 (number out of range",
            ),
            (
                "$.a > 0.12345678901234567890123456789012345678901",
                "no Variant value holds the literal 0.12345678901234567890123456789012345678901 (number with",
            ),
            ("$.a == [1]", "expected a JSON literal"),
            (
                "$.a == 'x'",
                "at character 8: a string literal takes double quotes",
            ),
            ("$. == 1", "expected a field name"),
            ("$.a < null", "null has no order"),
            ("$.a in (1, null)", "use 'is null'"),
            ("($.a == 1", "expected ')'"),
            ("$.a == 1 $.b == 2", "expected 'and', 'or' or the end"),
            ("$.a is 3", "expected 'null' after 'is'"),
            ("$.a is not", "expected 'null' after 'is not'"),
            (
                "b.y == \"s\"",
                "at character 2: a filter compares a path of the Variant column read, from its root $, or a column by its name alone: $.y where b is the column read",
            ),
        ] {
            let err = Predicate::parse(text).unwrap_err();
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn a_string_compared_with_a_date_or_timestamp_read_is_an_instant() {
        let (m, v) = json_to_variant(br#"{"ts": "2024-03-02 12:30:00", "n": 1709424000}"#).unwrap();
        let row = VariantRef::try_new(&m, &v).unwrap();
        let field = |name: &str| row.as_object().unwrap().get(name).unwrap();
        for (text, ts, n) in [
            // A number is seconds since the epoch as a timestamp (with a
            // zone), and neither a date nor a timestamp_ntz.
            (
                r#"$.ts as timestamp >= "2024-03-02""#,
                Some(true),
                Some(true),
            ),
            (
                r#"$.ts as timestamp < "2024-03-02T12:30:00.000001Z""#,
                Some(true),
                Some(false),
            ),
            (r#"$.ts as date == "2024-03-02""#, Some(true), None),
            (
                r#"$.ts as timestamp_ntz > "2024-03-02T12:30""#,
                Some(false),
                None,
            ),
        ] {
            let predicate = Predicate::parse(text).unwrap();
            let Predicate::Compare(c) = &predicate else {
                panic!("{text}")
            };
            assert!(matches!(c.literal, Literal::Instant { .. }), "{text}");
            let Operand::PathAs(_, as_type) = &c.operand else {
                panic!("{text}")
            };
            // The row's values converted as the operand converts them.
            for (value, passes) in [(field("ts"), ts), (field("n"), n)] {
                let converted = cast_as(&value, as_type);
                assert_eq!(
                    converted.and_then(|v| c.test(&v)),
                    passes,
                    "{text}: {value:?}"
                );
            }
            // It prints as it was written, and parses back the same.
            assert_eq!(predicate.to_string(), text);
            assert_eq!(Predicate::parse(&predicate.to_string()).unwrap(), predicate);
        }
        // Without a conversion the string stays a string.
        let Predicate::Compare(c) = Predicate::parse(r#"$.ts >= "2024-03-02""#).unwrap() else {
            panic!()
        };
        assert_eq!(c.literal, Literal::String("2024-03-02".into()));
        let err = Predicate::parse(r#"$.ts as date in ("2024-03-01", "soon")"#).unwrap_err();
        assert!(err.to_string().ends_with(r#"at character 32: "soon" is not a date (as an ISO-8601 string such as "2024-03-01" or "2024-03-01T12:30:00Z")"#), "{err}");
    }

    #[test]
    fn a_bad_path_in_a_filter_is_placed_in_the_whole_filter() {
        let err = Predicate::parse("$.ok == 1 and $.a[x] == 2").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Filter);
        assert_eq!(
            err.to_string(),
            "invalid filter: \"$.ok == 1 and $.a[x] == 2\" at character 19: expected an index or a quoted name in [...]"
        );
    }
}
