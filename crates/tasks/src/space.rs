//! Typed, named search spaces (issue 46): what a study searches when it is
//! more than a box of floats, and the one public function that maps it onto
//! the unit cube the models work in.
//!
//! A [`SpaceSpec`] is what a study's signed spec, a `--space` file or a
//! simulate config holds: a list of parameters, each `float` (optionally on a
//! log scale), `int` (optionally log), `categorical` (choices: strings,
//! numbers, booleans) or `fixed`. [`SpaceSpec::validate`] refuses a bad one
//! naming the parameter and the field, and gives a [`Space`].
//!
//! The encoding (the same for every member, so no two members exchange
//! anything to agree on it):
//!
//! - a `float` is one coordinate `u ∈ [0, 1]`, `x = low + (high − low)·u`, or
//!   `x = exp(ln low + (ln high − ln low)·u)` when `log`;
//! - an `int` is one coordinate over `[low − ½, high + ½]` (or its logarithm),
//!   rounded to the nearest integer, so that every value holds the same share
//!   of the coordinate (of its logarithm when `log`), as Optuna and BoTorch
//!   encode integers;
//! - a `categorical` of `k` choices is `k` coordinates, one-hot: the choice is
//!   the largest (the first on a tie), as BoTorch's one-hot encoding with an
//!   ARD kernel over it;
//! - a `fixed` parameter takes no coordinate.
//!
//! [`Space::canonical`] maps a point of the cube to the point that stands for
//! the value it decodes to (an integer at the centre of its cell, a choice as
//! its one-hot vertex). The methods evaluate and record that point, so their
//! models only ever see points that can be evaluated, and two proposals that
//! decode to the same values are one point to them.

use crate::TaskError;
use serde::{Deserialize, Serialize};

/// The most parameters a space holds.
pub const MAX_PARAMS: usize = 64;
/// The most choices a categorical parameter holds.
pub const MAX_CHOICES: usize = 64;
/// The most coordinates a space encodes to.
pub const MAX_DIM: usize = 256;
/// The longest parameter name (bytes).
pub const MAX_NAME: usize = 64;
/// The largest `|bound|` of an `int` parameter (every integer up to it is an
/// exact `f64`).
pub const MAX_INT: i64 = 1 << 53;

/// A search space as written: in a study's `config.space`, a `--space` TOML
/// or JSON file (`[[params]]`), or a simulate config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceSpec {
    /// The parameters, in the order of their coordinates.
    pub params: Vec<ParamSpec>,
}

/// One parameter as written; which fields it needs depends on `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// The name the objective receives it under.
    pub name: String,
    /// `"float"`, `"int"`, `"categorical"` or `"fixed"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The smallest value (`float`, `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// The largest value (`float`, `int`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// Searched on a log scale (`float`, `int`; needs `low > 0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<bool>,
    /// The choices (`categorical`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Choice>>,
    /// The value (`fixed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Choice>,
}

/// A categorical choice or a fixed value: a boolean, an integer, a number or
/// a string.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Choice {
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A finite number.
    Number(f64),
    /// A string.
    Text(String),
}

impl Choice {
    /// The choice as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Choice::Bool(b) => (*b).into(),
            Choice::Int(i) => (*i).into(),
            Choice::Number(x) => serde_json::Number::from_f64(*x)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Choice::Text(s) => s.clone().into(),
        }
    }

    /// Whether `v` is this choice (an integral number equals the same integer).
    fn matches(&self, v: &serde_json::Value) -> bool {
        match (self, v) {
            (Choice::Bool(a), serde_json::Value::Bool(b)) => a == b,
            (Choice::Text(a), serde_json::Value::String(b)) => a == b,
            (Choice::Int(a), serde_json::Value::Number(n)) => n.as_f64() == Some(*a as f64),
            (Choice::Number(a), serde_json::Value::Number(n)) => n.as_f64() == Some(*a),
            _ => false,
        }
    }
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

/// A validated parameter's domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Domain {
    /// A real in `[low, high]`.
    Float {
        /// Smallest value.
        low: f64,
        /// Largest value.
        high: f64,
        /// On a log scale.
        log: bool,
    },
    /// An integer in `low..=high`.
    Int {
        /// Smallest value.
        low: i64,
        /// Largest value.
        high: i64,
        /// On a log scale.
        log: bool,
    },
    /// One of at least two distinct choices.
    Categorical(Vec<Choice>),
    /// Always this value.
    Fixed(Choice),
}

impl Domain {
    /// How many coordinates of the cube it takes.
    pub fn width(&self) -> usize {
        match self {
            Domain::Float { .. } | Domain::Int { .. } => 1,
            Domain::Categorical(c) => c.len(),
            Domain::Fixed(_) => 0,
        }
    }

    /// The domain as it is shown (`/ui`, `fedhe study show`): its type and range.
    pub fn describe(&self) -> String {
        let log = |l: bool| if l { ", log" } else { "" };
        match self {
            Domain::Float { low, high, log: l } => format!("float [{low}, {high}]{}", log(*l)),
            Domain::Int { low, high, log: l } => format!("int {low}..={high}{}", log(*l)),
            Domain::Categorical(c) => format!(
                "categorical {{{}}}",
                c.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Domain::Fixed(v) => format!("fixed {v}"),
        }
    }

    /// The integer cell bounds `[a, b]` an `int` is searched over (logarithms
    /// when `log`).
    fn int_span(low: i64, high: i64, log: bool) -> (f64, f64) {
        let (a, b) = (low as f64 - 0.5, high as f64 + 0.5);
        if log {
            (a.ln(), b.ln())
        } else {
            (a, b)
        }
    }
}

/// A validated parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its domain.
    pub domain: Domain,
}

/// A validated search space ([`SpaceSpec::validate`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Space {
    params: Vec<Param>,
    dim: usize,
    spec: SpaceSpec,
}

fn refuse(field: impl Into<String>, reason: impl Into<String>) -> TaskError {
    TaskError::Space {
        field: field.into(),
        reason: reason.into(),
    }
}

impl ParamSpec {
    /// The field name used in errors: `params[i] (name).field`.
    fn field(&self, i: usize, field: &str) -> String {
        let name = short(&self.name, 40);
        if field.is_empty() {
            format!("params[{i}] ({name})")
        } else {
            format!("params[{i}] ({name}).{field}")
        }
    }

    fn validate(&self, i: usize) -> Result<Param, TaskError> {
        if self.name.is_empty()
            || self.name.len() > MAX_NAME
            || self.name.chars().any(|c| c.is_control())
        {
            return Err(refuse(
                format!("params[{i}].name"),
                format!("need 1 to {MAX_NAME} bytes and no control characters"),
            ));
        }
        let allowed: &[&str] = match self.kind.as_str() {
            "float" | "int" => &["low", "high", "log"],
            "categorical" => &["choices"],
            "fixed" => &["value"],
            other => {
                return Err(refuse(
                    self.field(i, "type"),
                    format!(
                        "{:?} is not one of \"float\", \"int\", \"categorical\", \"fixed\"",
                        short(other, 40)
                    ),
                ))
            }
        };
        for (field, given) in [
            ("low", self.low.is_some()),
            ("high", self.high.is_some()),
            ("log", self.log.is_some()),
            ("choices", self.choices.is_some()),
            ("value", self.value.is_some()),
        ] {
            if given && !allowed.contains(&field) {
                return Err(refuse(
                    self.field(i, field),
                    format!("is not a field of a {} parameter", self.kind),
                ));
            }
        }
        let need = |v: Option<f64>, field: &str| {
            v.ok_or_else(|| refuse(self.field(i, field), "is missing"))
                .and_then(|v| {
                    if v.is_finite() {
                        Ok(v)
                    } else {
                        Err(refuse(self.field(i, field), format!("{v} is not finite")))
                    }
                })
        };
        let log = self.log.unwrap_or(false);
        let domain = match self.kind.as_str() {
            "float" => {
                let (low, high) = (need(self.low, "low")?, need(self.high, "high")?);
                if low >= high {
                    return Err(refuse(
                        self.field(i, "low"),
                        format!("need low < high, got [{low}, {high}] (a single value is `fixed`)"),
                    ));
                }
                if log && low <= 0.0 {
                    return Err(refuse(
                        self.field(i, "low"),
                        format!("a log scale needs low > 0, got {low}"),
                    ));
                }
                Domain::Float { low, high, log }
            }
            "int" => {
                let int = |v: f64, field: &str| {
                    if v.fract() != 0.0 || v.abs() > MAX_INT as f64 {
                        Err(refuse(
                            self.field(i, field),
                            format!("{v} is not an integer within ±2^53"),
                        ))
                    } else {
                        Ok(v as i64)
                    }
                };
                let low = int(need(self.low, "low")?, "low")?;
                let high = int(need(self.high, "high")?, "high")?;
                if low >= high {
                    return Err(refuse(
                        self.field(i, "low"),
                        format!(
                            "need low < high, got {low}..={high}: the range holds {} value{} \
                             (a single value is `fixed`)",
                            if low == high { 1 } else { 0 },
                            if low == high { "" } else { "s" }
                        ),
                    ));
                }
                if log && low < 1 {
                    return Err(refuse(
                        self.field(i, "low"),
                        format!("a log scale needs low >= 1, got {low}"),
                    ));
                }
                Domain::Int { low, high, log }
            }
            "categorical" => {
                let choices = self
                    .choices
                    .clone()
                    .ok_or_else(|| refuse(self.field(i, "choices"), "is missing"))?;
                if choices.len() < 2 || choices.len() > MAX_CHOICES {
                    return Err(refuse(
                        self.field(i, "choices"),
                        format!(
                            "need 2 to {MAX_CHOICES} choices, got {} (a single value is `fixed`)",
                            choices.len()
                        ),
                    ));
                }
                for (j, c) in choices.iter().enumerate() {
                    check_choice(c)
                        .map_err(|r| refuse(self.field(i, &format!("choices[{j}]")), r))?;
                    if choices[..j].iter().any(|d| d.matches(&c.to_json())) {
                        return Err(refuse(
                            self.field(i, &format!("choices[{j}]")),
                            format!("{c} is listed twice"),
                        ));
                    }
                }
                Domain::Categorical(choices)
            }
            _ => {
                let value = self
                    .value
                    .clone()
                    .ok_or_else(|| refuse(self.field(i, "value"), "is missing"))?;
                check_choice(&value).map_err(|r| refuse(self.field(i, "value"), r))?;
                Domain::Fixed(value)
            }
        };
        Ok(Param {
            name: self.name.clone(),
            domain,
        })
    }
}

fn check_choice(c: &Choice) -> Result<(), String> {
    match c {
        Choice::Number(x) if !x.is_finite() => Err(format!("{x} is not finite")),
        Choice::Text(s) if s.len() > MAX_NAME || s.chars().any(|c| c.is_control()) => Err(format!(
            "a string choice needs at most {MAX_NAME} bytes and no control characters"
        )),
        _ => Ok(()),
    }
}

impl SpaceSpec {
    /// Checks every parameter, naming the first field that is wrong.
    pub fn validate(self) -> Result<Space, TaskError> {
        if self.params.is_empty() || self.params.len() > MAX_PARAMS {
            return Err(refuse(
                "params",
                format!(
                    "need 1 to {MAX_PARAMS} parameters, got {}",
                    self.params.len()
                ),
            ));
        }
        let mut params: Vec<Param> = Vec::with_capacity(self.params.len());
        for (i, p) in self.params.iter().enumerate() {
            let param = p.validate(i)?;
            if params.iter().any(|q| q.name == param.name) {
                return Err(refuse(
                    p.field(i, "name"),
                    "another parameter has this name",
                ));
            }
            params.push(param);
        }
        let dim: usize = params.iter().map(|p| p.domain.width()).sum();
        if dim == 0 || dim > MAX_DIM {
            return Err(refuse(
                "params",
                format!(
                    "the space encodes to {dim} coordinates; need 1 to {MAX_DIM} (every parameter \
                     fixed leaves nothing to search)"
                ),
            ));
        }
        Ok(Space {
            params,
            dim,
            spec: self,
        })
    }
}

impl Space {
    /// The parameters, in the order of their coordinates.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// How many coordinates of the unit cube the space encodes to.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// For each coordinate of the cube, whether it is a float's (continuous)
    /// rather than an integer's or one of a categorical's one-hot coordinates.
    pub fn continuous(&self) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.dim);
        for p in &self.params {
            let float = matches!(p.domain, Domain::Float { .. });
            out.extend(std::iter::repeat_n(float, p.domain.width()));
        }
        out
    }

    /// The space on one line, `name type range; …` (what `fedhe objective
    /// list` prints of a task's space).
    pub fn describe(&self) -> String {
        self.params
            .iter()
            .map(|p| format!("{} {}", p.name, p.domain.describe()))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The space as written (what a signed spec carries).
    pub fn spec(&self) -> &SpaceSpec {
        &self.spec
    }

    /// The values a point of the cube stands for, in parameter order.
    fn values(&self, unit: &[f64]) -> Vec<serde_json::Value> {
        let mut at = 0;
        let mut out = Vec::with_capacity(self.params.len());
        for p in &self.params {
            let u = |k: usize| unit.get(at + k).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            let v = match &p.domain {
                Domain::Float { low, high, log } => {
                    let x = if *log {
                        (low.ln() + (high.ln() - low.ln()) * u(0)).exp()
                    } else {
                        low + (high - low) * u(0)
                    };
                    serde_json::Number::from_f64(x.clamp(*low, *high))
                        .map(serde_json::Value::Number)
                        .unwrap_or(serde_json::Value::Null)
                }
                Domain::Int { low, high, log } => int_value(*low, *high, *log, u(0)).into(),
                Domain::Categorical(choices) => {
                    choices[argmax(&unit[at..at + choices.len()])].to_json()
                }
                Domain::Fixed(v) => v.to_json(),
            };
            at += p.domain.width();
            out.push(v);
        }
        out
    }

    /// The named values a point of the cube stands for: the JSON object an
    /// objective receives (`{"lr": 0.0031, "depth": 7, "kernel": "rbf"}`).
    pub fn decode(&self, unit: &[f64]) -> serde_json::Map<String, serde_json::Value> {
        self.params
            .iter()
            .map(|p| p.name.clone())
            .zip(self.values(unit))
            .collect()
    }

    /// The point of the cube that stands for the values `unit` decodes to: a
    /// float as it is (clamped to the cube), an integer at the centre of its
    /// cell (at `ln v` on a log scale), a choice as its one-hot vertex. Idempotent; the methods evaluate
    /// and record this point.
    pub fn canonical(&self, unit: &[f64]) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.dim);
        let mut at = 0;
        for p in &self.params {
            let u = unit.get(at).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            match &p.domain {
                Domain::Float { .. } => out.push(u),
                Domain::Int { low, high, log } => {
                    out.push(int_unit(*low, *high, *log, int_value(*low, *high, *log, u)))
                }
                Domain::Categorical(choices) => {
                    let k = argmax(&unit[at..at + choices.len()]);
                    out.extend((0..choices.len()).map(|j| if j == k { 1.0 } else { 0.0 }));
                }
                Domain::Fixed(_) => {}
            }
            at += p.domain.width();
        }
        out
    }

    /// The canonical point of named values (what an objective suggested, or a
    /// told point): every parameter of the space must be there with a value
    /// inside its domain, and nothing else; the error names the parameter.
    pub fn encode(
        &self,
        values: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<f64>, TaskError> {
        if let Some(extra) = values
            .keys()
            .find(|k| !self.params.iter().any(|p| &p.name == *k))
        {
            return Err(refuse(
                short(extra, 40),
                "is not a parameter of the study's space",
            ));
        }
        let mut out = Vec::with_capacity(self.dim);
        for p in &self.params {
            let v = values
                .get(&p.name)
                .ok_or_else(|| refuse(p.name.clone(), "is missing"))?;
            let outside = || {
                refuse(
                    p.name.clone(),
                    format!(
                        "{} is outside its space ({})",
                        short(&v.to_string(), 40),
                        p.domain.describe()
                    ),
                )
            };
            match &p.domain {
                Domain::Float { low, high, log } => {
                    let x = v
                        .as_f64()
                        .filter(|x| (*low..=*high).contains(x))
                        .ok_or_else(outside)?;
                    let u = if *log {
                        (x.ln() - low.ln()) / (high.ln() - low.ln())
                    } else {
                        (x - low) / (high - low)
                    };
                    out.push(u.clamp(0.0, 1.0));
                }
                Domain::Int { low, high, log } => {
                    let x = v
                        .as_f64()
                        .filter(|x| x.fract() == 0.0 && (*low as f64..=*high as f64).contains(x))
                        .ok_or_else(outside)?;
                    out.push(int_unit(*low, *high, *log, x as i64));
                }
                Domain::Categorical(choices) => {
                    let k = choices
                        .iter()
                        .position(|c| c.matches(v))
                        .ok_or_else(outside)?;
                    out.extend((0..choices.len()).map(|j| if j == k { 1.0 } else { 0.0 }));
                }
                Domain::Fixed(c) => {
                    if !c.matches(v) {
                        return Err(outside());
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The integer coordinate `u` stands for (`Domain::Int`'s encoding).
fn int_value(low: i64, high: i64, log: bool, u: f64) -> i64 {
    let (a, b) = Domain::int_span(low, high, log);
    let t = a + (b - a) * u;
    let x = if log { t.exp() } else { t };
    (x.round() as i64).clamp(low, high)
}

/// The coordinate that stands for the integer `v`: the centre of its cell
/// on a linear scale, `ln v` on a log scale; `int_value` gives `v` back.
fn int_unit(low: i64, high: i64, log: bool, v: i64) -> f64 {
    let (a, b) = Domain::int_span(low, high, log);
    let t = if log { (v as f64).ln() } else { v as f64 };
    ((t - a) / (b - a)).clamp(0.0, 1.0)
}

/// At most `max` characters of `s`, control characters escaped, for an
/// error message (the crate sits below `fedhe_crypto::text`).
fn short(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

/// The index of the largest entry (the first on a tie; NaN never wins).
fn argmax(xs: &[f64]) -> usize {
    let mut best = 0;
    for (j, x) in xs.iter().enumerate() {
        if *x > xs[best] || xs[best].is_nan() {
            best = j;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(json: &str) -> Result<Space, TaskError> {
        serde_json::from_str::<SpaceSpec>(json).unwrap().validate()
    }

    const MIXED: &str = r#"{"params":[
        {"name":"lr","type":"float","low":1e-5,"high":1e-1,"log":true},
        {"name":"depth","type":"int","low":2,"high":12},
        {"name":"trees","type":"int","low":1,"high":1000,"log":true},
        {"name":"kernel","type":"categorical","choices":["rbf","poly","linear"]},
        {"name":"seed","type":"fixed","value":7}]}"#;

    #[test]
    fn bad_spaces_are_refused_naming_the_field() {
        for (json, field) in [
            (
                r#"{"params":[{"name":"k","type":"categorical","choices":[]}]}"#,
                "(k).choices",
            ),
            (
                r#"{"params":[{"name":"a","type":"float","low":1,"high":1}]}"#,
                "(a).low",
            ),
            (
                r#"{"params":[{"name":"a","type":"float","low":0,"high":1,"log":true}]}"#,
                "(a).low",
            ),
            (
                r#"{"params":[{"name":"d","type":"int","low":3,"high":3}]}"#,
                "(d).low",
            ),
            (
                r#"{"params":[{"name":"d","type":"int","low":1.5,"high":3}]}"#,
                "(d).low",
            ),
            (
                r#"{"params":[{"name":"a","type":"float","low":0,"high":1,"choices":[1]}]}"#,
                "(a).choices",
            ),
            (
                r#"{"params":[{"name":"a","type":"real","low":0,"high":1}]}"#,
                "(a).type",
            ),
            (
                r#"{"params":[{"name":"a","type":"fixed","value":1}]}"#,
                "params",
            ),
            (r#"{"params":[]}"#, "params"),
        ] {
            let e = space(json).unwrap_err().to_string();
            assert!(e.contains(field), "{json}: {e}");
        }
        let dup = r#"{"params":[{"name":"a","type":"float","low":0,"high":1},
                                {"name":"a","type":"int","low":0,"high":4}]}"#;
        assert!(space(dup).unwrap_err().to_string().contains("(a).name"));
        assert!(serde_json::from_str::<SpaceSpec>(
            r#"{"params":[{"name":"a","type":"float","low":0,"high":1,"lg":true}]}"#
        )
        .is_err());
    }

    #[test]
    fn canonical_points_decode_alike_and_are_fixed_points() {
        let s = space(MIXED).unwrap();
        assert_eq!(s.dim(), 1 + 1 + 1 + 3);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let u: Vec<f64> = (0..s.dim())
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    (rng >> 11) as f64 / (1u64 << 53) as f64
                })
                .collect();
            let c = s.canonical(&u);
            assert_eq!(s.decode(&c), s.decode(&u));
            assert_eq!(s.canonical(&c), c);
            // A log float's re-encoding may move by an ulp; the rest is exact.
            let e = s.encode(&s.decode(&u)).unwrap();
            assert!(
                e.iter().zip(&c).all(|(a, b)| (a - b).abs() <= 1e-12),
                "{e:?} {c:?}"
            );
            assert_eq!(s.decode(&e), s.decode(&c));
        }
    }

    #[test]
    fn every_integer_holds_an_equal_share_of_its_coordinate() {
        let s = space(r#"{"params":[{"name":"d","type":"int","low":2,"high":6}]}"#).unwrap();
        let mut counts = [0usize; 5];
        let n = 100_000;
        for i in 0..n {
            let v = s.decode(&[(i as f64 + 0.5) / n as f64])["d"]
                .as_i64()
                .unwrap();
            counts[(v - 2) as usize] += 1;
        }
        for c in counts {
            assert_eq!(c, n / 5);
        }
    }

    #[test]
    fn values_outside_the_space_are_refused_naming_the_parameter() {
        let s = space(MIXED).unwrap();
        let good = s.decode(&[0.5; 6]);
        for (name, bad) in [
            ("lr", serde_json::json!(0.5)),
            ("depth", serde_json::json!(13)),
            ("depth", serde_json::json!(2.5)),
            ("kernel", serde_json::json!("sigmoid")),
            ("seed", serde_json::json!(8)),
        ] {
            let mut v = good.clone();
            v.insert(name.into(), bad);
            let e = s.encode(&v).unwrap_err().to_string();
            assert!(e.contains(&format!("`{name}`")), "{e}");
        }
        let mut v = good.clone();
        v.insert("momentum".into(), serde_json::json!(0.9));
        assert!(s.encode(&v).unwrap_err().to_string().contains("momentum"));
        v = good;
        v.remove("kernel");
        assert!(s.encode(&v).unwrap_err().to_string().contains("kernel"));
    }
}
