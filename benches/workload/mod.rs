//! Seeded JSON Lines workloads shared by the benches.
//!
//! Everything is generated from a seed by an inline splitmix64, so a given
//! `(rows, seed)` always yields the same bytes, on every machine.
//!
//! - [`seed`]: the flat, regular workload other implementations were measured
//!   on: `{"id","ts","v":{"f0".."f9","nested":{"a","b"}}}`, ~173 bytes a row;
//! - [`events`]: heterogeneous application events: several event types,
//!   optional fields and nulls, a field that is usually an integer and
//!   sometimes a string, arrays of strings and of objects, rare keys
//!   (language-code maps), escapes and non-ASCII text, some nesting;
//! - [`drift`]: events whose fields change halfway (a field changes type,
//!   one disappears, a new one becomes common), for datasets.
//!
//! Each bench includes this module with `mod workload;` and uses a part of it.

// What one bench leaves unused another uses.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast and good enough to pick
/// benchmark values.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the tiny bias is fine here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// 2024-11-29T00:00:00Z in microseconds.
const EPOCH_MICROS: u64 = 1_732_838_400_000_000;

/// How many distinct values each seed field takes.
pub const SEED_CARDINALITY: u64 = 1000;

/// The kind of each of `v.f0`..`v.f9`.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Str,
    Decimal,
}

const SEED_FIELDS: [Kind; 10] = [
    Kind::Int,
    Kind::Str,
    Kind::Decimal,
    Kind::Int,
    Kind::Str,
    Kind::Decimal,
    Kind::Int,
    Kind::Int,
    Kind::Decimal,
    Kind::Int,
];

/// `rows` lines of the seed workload, each ending in `\n`:
///
/// ```text
/// {"id":7,"ts":1732838400007042,"v":{"f0":386,"f1":"b552","f2":104.8,"f3":17,
///  "f4":"e903",...,"f9":640,"nested":{"a":311,"b":"n87"}}}
/// ```
///
/// `id` is the row number and `ts` grows by ~1 ms a row; `f0`..`f9` are five
/// ints (`0`..`999`), two strings (a letter and `0`..`999`) and three
/// one-decimal numbers (DECIMAL(18,1)-shaped, `100.0`..`199.9`), each drawn
/// from [`SEED_CARDINALITY`] values, as are `nested.a` and `nested.b`.
/// 1M rows are ~173 MB (173 bytes a row with the newline).
pub fn seed(rows: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(rows * 176);
    for row in 0..rows {
        let ts = EPOCH_MICROS + row as u64 * 1000 + rng.below(1000);
        write!(out, r#"{{"id":{row},"ts":{ts},"v":{{"#).unwrap();
        for (f, kind) in SEED_FIELDS.iter().enumerate() {
            let k = rng.below(SEED_CARDINALITY);
            if f > 0 {
                out.push(',');
            }
            match kind {
                Kind::Int => write!(out, r#""f{f}":{k}"#),
                Kind::Str => write!(out, r#""f{f}":"{}{k}""#, (b'a' + f as u8) as char),
                Kind::Decimal => write!(out, r#""f{f}":{}.{}"#, 100 + k / 10, k % 10),
            }
            .unwrap();
        }
        let a = rng.below(SEED_CARDINALITY);
        let b = rng.below(SEED_CARDINALITY);
        writeln!(out, r#","nested":{{"a":{a},"b":"n{b}"}}}}}}"#).unwrap();
    }
    out
}

const EVENT_TYPES: [&str; 6] = ["click", "view", "purchase", "login", "error", "search"];
/// Cumulative weights (out of 100) of [`EVENT_TYPES`].
const EVENT_WEIGHTS: [u64; 6] = [35, 60, 72, 84, 92, 100];
const PLANS: [&str; 4] = ["free", "pro", "team", "enterprise"];
const TARGETS: [&str; 8] = [
    "button#buy",
    "a.nav-home",
    "div.card > img",
    "button#add-to-cart",
    "input[name=q]",
    "a.footer-link",
    "span.close",
    "li.menu-item:nth-child(3)",
];
const TAGS: [&str; 12] = [
    "new",
    "sale",
    "promo",
    "mobile",
    "desktop",
    "beta",
    "ab-test",
    "returning",
    "vip",
    "eu",
    "us",
    "apac",
];
const CURRENCIES: [&str; 4] = ["EUR", "USD", "GBP", "JPY"];
const OSES: [&str; 4] = ["ios", "android", "windows", "linux"];
const QUERIES: [&str; 8] = [
    "red shoes",
    "laptop 16gb",
    "caf\u{e9} cr\u{e8}me",
    "\u{65e5}\u{672c}\u{8a9e} keyboard",
    "size \"XL\" jacket",
    "usb-c cable 2m",
    "gift card",
    "back\\slash",
];
const ERROR_MESSAGES: [&str; 5] = [
    "connection reset by peer",
    "timeout after 30s",
    "unexpected token '}' at line 1",
    "field \"email\" is required",
    "disk quota exceeded\nretry later",
];
/// Language codes: keys that few rows carry, and in varying subsets.
const LANGUAGES: [&str; 24] = [
    "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "fi", "pl", "cs", "hu", "ro", "el", "tr",
    "ru", "uk", "ja", "ko", "zh", "ar", "he", "hi",
];

/// Appends `s` as a JSON string.
fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `,"key":` (or `"key":` right after `{`).
fn push_key(out: &mut String, key: &str) {
    if !out.ends_with('{') {
        out.push(',');
    }
    push_str(out, key);
    out.push(':');
}

/// `rows` lines of heterogeneous events, each ending in `\n`.
///
/// Every event has `id`, `ts`, `event` and `user` (`plan` optional);
/// `session` is a string or null; then by type:
/// - `click`: `target`, `pos:{x,y}`, often `tags:[..]`;
/// - `view`: `page`, `duration_ms` (usually an int, sometimes a double with
///   an exponent), sometimes `referrer: null`;
/// - `purchase`: `items:[{sku,qty,price}..]`, `total` (two decimals),
///   `currency`, sometimes `coupon`;
/// - `login`: `ok`, `method`, `mfa` (bool or null);
/// - `error`: `code` (an int 9 times in 10, else a string like `"E42"`),
///   `message` (some with escapes), sometimes `stack:[..]`;
/// - `search`: `query` (some non-ASCII or escaped), `results`, sometimes
///   `filters:{..}` nesting an array.
///
/// About 1 row in 20 carries `i18n`, a map keyed by a few of 24 language
/// codes; about 1 in 10 a `ctx:{device:{os,version},app:{build}}`.
pub fn events(rows: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(rows * 220);
    for row in 0..rows {
        let ts = EPOCH_MICROS + row as u64 * 250 + rng.below(250);
        let draw = rng.below(100);
        let kind = EVENT_WEIGHTS.iter().position(|&w| draw < w).unwrap_or(0);
        write!(
            out,
            r#"{{"id":{row},"ts":{ts},"event":"{}""#,
            EVENT_TYPES[kind]
        )
        .unwrap();
        push_key(&mut out, "user");
        write!(out, r#"{{"id":"u-{}""#, rng.below(5000)).unwrap();
        if rng.chance(70) {
            write!(out, r#","plan":"{}""#, rng.pick(&PLANS)).unwrap();
        }
        out.push('}');
        push_key(&mut out, "session");
        if rng.chance(80) {
            write!(out, r#""{:016x}""#, rng.next_u64()).unwrap();
        } else {
            out.push_str("null");
        }
        match EVENT_TYPES[kind] {
            "click" => {
                push_key(&mut out, "target");
                push_str(&mut out, rng.pick(&TARGETS));
                let (x, y) = (rng.below(1920), rng.below(1080));
                write!(out, r#","pos":{{"x":{x},"y":{y}}}"#).unwrap();
                if rng.chance(60) {
                    push_key(&mut out, "tags");
                    out.push('[');
                    for i in 0..1 + rng.below(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        push_str(&mut out, rng.pick(&TAGS));
                    }
                    out.push(']');
                }
            }
            "view" => {
                write!(out, r#","page":"/p/{}""#, rng.below(20_000)).unwrap();
                push_key(&mut out, "duration_ms");
                if rng.chance(85) {
                    write!(out, "{}", rng.below(60_000)).unwrap();
                } else {
                    write!(out, "{}.{}e3", rng.below(60), rng.below(1000)).unwrap();
                }
                if rng.chance(30) {
                    out.push_str(r#","referrer":null"#);
                }
            }
            "purchase" => {
                push_key(&mut out, "items");
                out.push('[');
                let mut cents = 0;
                for i in 0..1 + rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    let (qty, price) = (1 + rng.below(5), 99 + rng.below(20_000));
                    cents += qty * price;
                    write!(
                        out,
                        r#"{{"sku":"SKU-{:05}","qty":{qty},"price":{}.{:02}}}"#,
                        rng.below(50_000),
                        price / 100,
                        price % 100
                    )
                    .unwrap();
                }
                out.push(']');
                write!(out, r#","total":{}.{:02}"#, cents / 100, cents % 100).unwrap();
                write!(out, r#","currency":"{}""#, rng.pick(&CURRENCIES)).unwrap();
                if rng.chance(15) {
                    write!(out, r#","coupon":"SAVE{}""#, 5 * (1 + rng.below(10))).unwrap();
                }
            }
            "login" => {
                write!(out, r#","ok":{}"#, rng.chance(90)).unwrap();
                let method = rng.pick(&["password", "sso", "passkey"]);
                write!(out, r#","method":"{method}""#).unwrap();
                push_key(&mut out, "mfa");
                out.push_str(rng.pick(&["true", "false", "null"]));
            }
            "error" => {
                push_key(&mut out, "code");
                if rng.chance(90) {
                    write!(
                        out,
                        "{}",
                        rng.pick(&[400, 401, 403, 404, 409, 429, 500, 503])
                    )
                    .unwrap();
                } else {
                    write!(out, r#""E{}""#, rng.below(100)).unwrap();
                }
                push_key(&mut out, "message");
                push_str(&mut out, rng.pick(&ERROR_MESSAGES));
                if rng.chance(40) {
                    push_key(&mut out, "stack");
                    out.push('[');
                    for i in 0..2 + rng.below(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        write!(
                            out,
                            r#""at module_{}::handler_{} (src/handlers/mod_{}.rs:{})""#,
                            rng.below(40),
                            rng.below(200),
                            rng.below(40),
                            1 + rng.below(900)
                        )
                        .unwrap();
                    }
                    out.push(']');
                }
            }
            _ => {
                push_key(&mut out, "query");
                push_str(&mut out, rng.pick(&QUERIES));
                write!(out, r#","results":{}"#, rng.below(500)).unwrap();
                if rng.chance(35) {
                    write!(
                        out,
                        r#","filters":{{"price":{{"min":{},"max":{}}},"brands":["b{}","b{}"],"in_stock":{}}}"#,
                        rng.below(50),
                        50 + rng.below(950),
                        rng.below(300),
                        rng.below(300),
                        rng.chance(50)
                    )
                    .unwrap();
                }
            }
        }
        if rng.chance(5) {
            push_key(&mut out, "i18n");
            out.push('{');
            let first = rng.below(LANGUAGES.len() as u64) as usize;
            for i in 0..1 + rng.below(4) as usize {
                let lang = LANGUAGES[(first + 5 * i) % LANGUAGES.len()];
                push_key(&mut out, lang);
                write!(out, r#""title-{lang}-{}""#, rng.below(100)).unwrap();
            }
            out.push('}');
        }
        if rng.chance(10) {
            write!(
                out,
                r#","ctx":{{"device":{{"os":"{}","version":"{}.{}"}},"app":{{"build":{}}}}}"#,
                rng.pick(&OSES),
                10 + rng.below(8),
                rng.below(10),
                1000 + rng.below(9000)
            )
            .unwrap();
        }
        out.push_str("}\n");
    }
    out
}

// ---------------------------------------------------------------------------
// The one-shot mode's helpers: environment knobs, on-CPU clocks, and the
// round-robin race of contenders.

/// Regions that `drift` events carry in their second half.
const REGIONS: [&str; 4] = ["eu-west-1", "us-east-1", "us-west-2", "ap-south-1"];

/// `rows` lines of events whose fields change halfway, each ending in
/// `\n`: for datasets whose layout must follow the data.
///
/// Every event has `id`, `ts`, `event`, `user:{id,plan}` and `latency_ms`
/// (an int). In the first half, `status` is an HTTP code (an int) and
/// `session` a string; from row `rows / 2` on, `status` is a string
/// (`"ok"`, `"error"`, `"timeout"`), `session` is gone, and a new field,
/// `region`, is in 9 rows of 10.
pub fn drift(rows: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(rows * 160);
    for row in 0..rows {
        let ts = EPOCH_MICROS + row as u64 * 250 + rng.below(250);
        let event = rng.pick(&EVENT_TYPES);
        write!(
            out,
            r#"{{"id":{row},"ts":{ts},"event":"{event}","user":{{"id":"u-{}","plan":"{}"}},"latency_ms":{}"#,
            rng.below(5000),
            rng.pick(&PLANS),
            rng.below(2000)
        )
        .unwrap();
        if row < rows / 2 {
            let status = rng.pick(&[200, 200, 200, 201, 404, 500]);
            write!(
                out,
                r#","status":{status},"session":"{:016x}""#,
                rng.next_u64()
            )
            .unwrap();
        } else {
            let status = rng.pick(&["ok", "ok", "ok", "error", "timeout"]);
            write!(out, r#","status":"{status}""#).unwrap();
            if rng.chance(90) {
                write!(out, r#","region":"{}""#, rng.pick(&REGIONS)).unwrap();
            }
        }
        out.push_str("}\n");
    }
    out
}

/// `name` from the environment as a number, if set.
pub fn env_usize(name: &str) -> Option<usize> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a number")),
    )
}

/// Whether `VSHRED_BENCH_ONLY` (a substring of labels) selects `label`.
pub fn wanted(label: &str) -> bool {
    std::env::var("VSHRED_BENCH_ONLY").map_or(true, |only| label.contains(&only))
}

/// A contender: one pass over the input, returning a figure derived from
/// its output (rows, bytes, a sum), which must be positive.
pub type Run<'a> = Box<dyn FnMut() -> usize + 'a>;

/// The time this thread has spent on a CPU (Linux `schedstat`), which
/// leaves out the time other processes had the CPU: on a busy machine it
/// is steadier than the wall clock (caches and memory are still shared).
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// The time all threads of this process, ended ones included, have spent
/// on a CPU (`utime + stime` of `/proc/self/stat`): for contenders that
/// hand work to helper threads. Its unit is the clock tick (10 ms with the
/// usual `USER_HZ` of 100).
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold
    // spaces: state is field 3, utime 14 and stime 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// A contender's best wall-clock and on-CPU times.
pub struct Best {
    pub label: String,
    pub wall: Duration,
    /// This thread only.
    pub cpu: Option<Duration>,
    /// All threads of the process.
    pub all_cpu: Option<Duration>,
}

impl Best {
    /// Whether the contender kept other threads busy too: its all-threads
    /// time exceeds its own thread's by more than 10% (and a few ticks).
    pub fn used_threads(&self) -> bool {
        match (self.cpu, self.all_cpu) {
            (Some(cpu), Some(all)) => all > cpu.mul_f64(1.1) + Duration::from_millis(30),
            _ => false,
        }
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e3)
}

/// Runs each contender `repeat` times, round-robin so that noise from the
/// rest of the machine spreads over all of them, and prints each one's
/// best (minimum) wall-clock and on-CPU times, and all runs. Contenders
/// that keep other threads busy also get their all-threads CPU time.
pub fn race(mb: f64, repeat: usize, mut contenders: Vec<(&str, Run<'_>)>) -> Vec<Best> {
    contenders.retain(|(label, _)| wanted(label));
    let mut runs = vec![Vec::new(); contenders.len()];
    for _ in 0..repeat {
        for ((label, run), times) in contenders.iter_mut().zip(&mut runs) {
            let (all, cpu, wall) = (process_cpu_time(), cpu_time(), Instant::now());
            let result = black_box(run());
            let wall = wall.elapsed();
            let cpu = cpu.zip(cpu_time()).map(|(start, end)| end - start);
            let all = all.zip(process_cpu_time()).map(|(start, end)| end - start);
            times.push((wall, cpu, all));
            assert!(result > 0, "{label} produced nothing");
        }
    }
    let mut best = Vec::new();
    for ((label, _), times) in contenders.iter().zip(&runs) {
        let result = Best {
            label: label.to_string(),
            wall: times.iter().map(|t| t.0).min().unwrap_or_default(),
            cpu: times.iter().map(|t| t.1).min().flatten(),
            all_cpu: times.iter().map(|t| t.2).min().flatten(),
        };
        let walls: Vec<String> = times.iter().map(|t| ms(t.0)).collect();
        print!(
            "  {label:<32} wall {:>6} ms {:>7.1} MB/s",
            ms(result.wall),
            mb / result.wall.as_secs_f64()
        );
        if let Some(cpu) = result.cpu {
            print!(
                " | cpu {:>6} ms {:>7.1} MB/s",
                ms(cpu),
                mb / cpu.as_secs_f64()
            );
        }
        if let (true, Some(all)) = (result.used_threads(), result.all_cpu) {
            print!(" | all threads cpu {:>6} ms", ms(all));
        }
        println!("   (wall runs: {} ms)", walls.join(", "));
        best.push(result);
    }
    best
}

/// `a / b` of two raced contenders' best times: wall-clock and on-CPU, and
/// all-threads CPU when either kept other threads busy.
pub fn ratio(best: &[Best], a: &str, b: &str) -> String {
    let get = |label: &str| best.iter().find(|t| t.label == label);
    let div = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let (Some(a), Some(b)) = (get(a), get(b)) else {
        return "-".to_string();
    };
    let mut text = format!("{:.2}", div(a.wall, b.wall));
    if let Some((ac, bc)) = a.cpu.zip(b.cpu) {
        text += &format!(" (cpu {:.2}", div(ac, bc));
        if let (true, Some((aa, ba))) = (
            a.used_threads() || b.used_threads(),
            a.all_cpu.zip(b.all_cpu),
        ) {
            text += &format!(", all threads {:.2}", div(aa, ba));
        }
        text += ")";
    }
    text
}

/// The arrow-rs shredding type (`shred_variant`'s `as_type`) of a vshred
/// layout: the `typed_value` types only; fields left untyped are left out
/// (arrow-rs keeps them in the residual `value`). `None` for an untyped
/// layout.
pub fn arrow_rs_type(
    schema: &vshred::shred::ShreddingSchema,
) -> Option<arrow::datatypes::DataType> {
    use arrow::datatypes::{DataType, Field, Fields};
    use vshred::shred::ShreddingSchema;
    Some(match schema {
        ShreddingSchema::Variant => return None,
        ShreddingSchema::Object(fields) => {
            let typed: Vec<Field> = fields
                .iter()
                .filter_map(|(name, f)| Some(Field::new(name, arrow_rs_type(f)?, true)))
                .collect();
            // arrow-rs has no struct of no fields: such an object stays in
            // the residual.
            if typed.is_empty() {
                return None;
            }
            DataType::Struct(Fields::from(typed))
        }
        ShreddingSchema::Array(element) => {
            DataType::List(Field::new("element", arrow_rs_type(element)?, true).into())
        }
        other => other.typed_value_type()?,
    })
}

/// The shredding of the (one) Variant column among `columns`.
pub fn variant_schema(columns: &[vshred::parquet::ColumnSpec]) -> vshred::shred::ShreddingSchema {
    use vshred::parquet::ColumnSpec;
    columns
        .iter()
        .find_map(|c| match c {
            ColumnSpec::Variant { schema, .. } => Some(schema.clone()),
            ColumnSpec::Plain(_) => None,
        })
        .expect("a Variant column")
}

/// arrow-rs's encoder: per batch of `batch_rows` lines, `json_to_variant`,
/// `shred_variant` into `as_type` (`None`: left unshredded), and the parquet
/// crate's `ArrowWriter` with the writer properties vshred uses (zstd at
/// the parquet crate's default level, page statistics, 64 KB dictionaries,
/// the same row groups); (rows, file bytes). The Variant column is `v`.
/// Fails where arrow-rs does.
#[inline(never)]
pub fn arrow_encode(
    lines: &[&str],
    as_type: Option<&arrow::datatypes::DataType>,
    row_group_rows: usize,
    batch_rows: usize,
) -> Result<(u64, Vec<u8>), Box<dyn std::error::Error>> {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(row_group_rows))
        .set_statistics_enabled(EnabledStatistics::Page)
        // As vshred's writer: dictionaries fall back to plain at 64 KB.
        .set_dictionary_page_size_limit(64 * 1024)
        .build();
    let mut writer = None;
    for chunk in lines.chunks(batch_rows) {
        let strings: ArrayRef = Arc::new(StringArray::from_iter_values(chunk));
        let variants = parquet_variant_compute::json_to_variant(&strings)?;
        let variants = match as_type {
            Some(as_type) => parquet_variant_compute::shred_variant(&variants, as_type)?,
            None => variants,
        };
        let column: ArrayRef = Arc::new(variants.into_inner());
        let schema = Arc::new(Schema::new(vec![Field::new(
            "v",
            column.data_type().clone(),
            true,
        )]));
        if writer.is_none() {
            writer = Some(ArrowWriter::try_new(
                Vec::new(),
                schema.clone(),
                Some(properties.clone()),
            )?);
        }
        let batch = RecordBatch::try_new(schema, vec![column])?;
        writer.as_mut().expect("made above").write(&batch)?;
    }
    let mut writer = writer.ok_or("no lines")?;
    writer.flush()?;
    let rows = writer
        .flushed_row_groups()
        .iter()
        .map(|rg| rg.num_rows() as u64)
        .sum();
    Ok((rows, writer.into_inner()?))
}
