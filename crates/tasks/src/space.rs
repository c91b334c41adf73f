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
//! A parameter may be conditional (`when = { param = "kernel", values =
//! ["poly"] }`): active only when an earlier categorical takes one of some
//! choices (and that one is active), as Optuna's define-by-run objectives
//! suggest a parameter only on some branches. An inactive parameter keeps its
//! coordinates, set to one public default in the canonical point (the middle
//! of a number's range, a categorical's first choice), so the models see
//! every point where it is inactive alike; the objective does not receive
//! it, and a told point must not name it.
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
    /// Active only when an earlier categorical takes one of some choices
    /// (any type; unset: always active).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Condition>,
}

/// When a conditional parameter is active, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The name of an earlier categorical parameter.
    pub param: String,
    /// The choices of it under which the parameter is active.
    pub values: Vec<Choice>,
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
    /// When it is active (`None`: always).
    pub when: Option<Active>,
}

/// A validated [`Condition`]: the parameter is active when the parameter
/// at index `param` (an earlier categorical) is active and takes one of the
/// choices at indices `choices`.
#[derive(Clone, Debug, PartialEq)]
pub struct Active {
    /// The index of the categorical in the space's parameters.
    pub param: usize,
    /// The indices of its choices under which the parameter is active.
    pub choices: Vec<usize>,
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
            when: None,
        })
    }

    /// The validated condition, against the parameters before this one.
    fn active(&self, i: usize, earlier: &[Param]) -> Result<Option<Active>, TaskError> {
        let Some(when) = &self.when else {
            return Ok(None);
        };
        let Some(param) = earlier.iter().position(|p| p.name == when.param) else {
            return Err(refuse(
                self.field(i, "when.param"),
                format!(
                    "{:?} is not a parameter before this one",
                    short(&when.param, 40)
                ),
            ));
        };
        let Domain::Categorical(choices) = &earlier[param].domain else {
            return Err(refuse(
                self.field(i, "when.param"),
                format!(
                    "{:?} is not categorical ({})",
                    short(&when.param, 40),
                    earlier[param].domain.describe()
                ),
            ));
        };
        if when.values.is_empty() {
            return Err(refuse(self.field(i, "when.values"), "is empty"));
        }
        let mut picked = Vec::with_capacity(when.values.len());
        for (j, v) in when.values.iter().enumerate() {
            let k = choices
                .iter()
                .position(|c| c.matches(&v.to_json()))
                .ok_or_else(|| {
                    refuse(
                        self.field(i, &format!("when.values[{j}]")),
                        format!("{v} is not a choice of {:?}", short(&when.param, 40)),
                    )
                })?;
            if picked.contains(&k) {
                return Err(refuse(
                    self.field(i, &format!("when.values[{j}]")),
                    format!("{v} is listed twice"),
                ));
            }
            picked.push(k);
        }
        Ok(Some(Active {
            param,
            choices: picked,
        }))
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
            let mut param = p.validate(i)?;
            param.when = p.active(i, &params)?;
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

    /// For each coordinate of the cube, whether the point `unit` lets it
    /// move the value it stands for: a float's coordinate (not an integer's
    /// or a one-hot coordinate) while `unit` leaves its parameter active.
    pub fn continuous_at(&self, unit: &[f64]) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.dim);
        for (p, on) in self.params.iter().zip(self.active_at(unit)) {
            let float = on && matches!(p.domain, Domain::Float { .. });
            out.extend(std::iter::repeat_n(float, p.domain.width()));
        }
        out
    }

    /// For each coordinate of the cube, whether it is one of a categorical's
    /// one-hot coordinates (which a trust region leaves free:
    /// `fedhe_bo::trust_region::TrustRegion::bounds_with_free`).
    pub fn one_hot(&self) -> Vec<bool> {
        self.params
            .iter()
            .flat_map(|p| {
                let categorical = matches!(p.domain, Domain::Categorical(_));
                std::iter::repeat_n(categorical, p.domain.width())
            })
            .collect()
    }

    /// The space on one line, `name type range; …` (what `fedhe objective
    /// list` prints of a task's space).
    pub fn describe(&self) -> String {
        self.params
            .iter()
            .map(|p| match &p.when {
                None => format!("{} {}", p.name, p.domain.describe()),
                Some(a) => {
                    let parent = &self.params[a.param];
                    let choices: Vec<String> = match &parent.domain {
                        Domain::Categorical(c) => {
                            a.choices.iter().map(|&k| c[k].to_string()).collect()
                        }
                        _ => Vec::new(),
                    };
                    format!(
                        "{} {} when {} in {{{}}}",
                        p.name,
                        p.domain.describe(),
                        parent.name,
                        choices.join(", ")
                    )
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The space as written (what a signed spec carries).
    pub fn spec(&self) -> &SpaceSpec {
        &self.spec
    }

    /// Which parameters are active: each unconditional one, and each
    /// conditional one whose categorical is active and takes one of its
    /// choices; `choice(i)` is the index of the choice the categorical `i`
    /// takes.
    fn activity(&self, choice: impl Fn(usize) -> Option<usize>) -> Vec<bool> {
        let mut active: Vec<bool> = Vec::with_capacity(self.params.len());
        for p in &self.params {
            let on = match &p.when {
                None => true,
                Some(a) => {
                    active[a.param] && choice(a.param).is_some_and(|k| a.choices.contains(&k))
                }
            };
            active.push(on);
        }
        active
    }

    /// The first coordinate of each parameter.
    fn offsets(&self) -> Vec<usize> {
        let mut at = 0;
        self.params
            .iter()
            .map(|p| {
                let start = at;
                at += p.domain.width();
                start
            })
            .collect()
    }

    /// Which parameters the point `unit` of the cube makes active.
    pub fn active_at(&self, unit: &[f64]) -> Vec<bool> {
        let offsets = self.offsets();
        self.activity(|i| match &self.params[i].domain {
            Domain::Categorical(c) => unit.get(offsets[i]..offsets[i] + c.len()).map(argmax),
            _ => None,
        })
    }

    /// The coordinates of a parameter while it is inactive: the middle of a
    /// number's range (an integer's canonical middle), a categorical's first
    /// choice.
    fn inactive_coordinates(domain: &Domain) -> Vec<f64> {
        match domain {
            Domain::Float { .. } => vec![0.5],
            Domain::Int { low, high, log } => {
                vec![int_unit(
                    *low,
                    *high,
                    *log,
                    int_value(*low, *high, *log, 0.5),
                )]
            }
            Domain::Categorical(c) => (0..c.len())
                .map(|j| if j == 0 { 1.0 } else { 0.0 })
                .collect(),
            Domain::Fixed(_) => Vec::new(),
        }
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
    /// objective receives (`{"lr": 0.0031, "depth": 7, "kernel": "rbf"}`),
    /// without the parameters the point leaves inactive.
    pub fn decode(&self, unit: &[f64]) -> serde_json::Map<String, serde_json::Value> {
        let active = self.active_at(unit);
        self.params
            .iter()
            .zip(self.values(unit))
            .zip(active)
            .filter(|(_, on)| *on)
            .map(|((p, v), _)| (p.name.clone(), v))
            .collect()
    }

    /// The point of the cube that stands for the values `unit` decodes to: a
    /// float as it is (clamped to the cube), an integer at the centre of its
    /// cell (at `ln v` on a log scale), a choice as its one-hot vertex, an
    /// inactive parameter at its public default. Idempotent; the methods
    /// evaluate and record this point.
    pub fn canonical(&self, unit: &[f64]) -> Vec<f64> {
        let active = self.active_at(unit);
        let mut out = Vec::with_capacity(self.dim);
        let mut at = 0;
        for (p, on) in self.params.iter().zip(active) {
            let u = unit.get(at).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            match &p.domain {
                _ if !on => out.extend(Self::inactive_coordinates(&p.domain)),
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
    /// told point): every active parameter of the space must be there with a
    /// value inside its domain, and nothing else (an inactive parameter
    /// neither); the error names the parameter.
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
        let active = self.activity(|i| match &self.params[i].domain {
            Domain::Categorical(c) => values
                .get(&self.params[i].name)
                .and_then(|v| c.iter().position(|c| c.matches(v))),
            _ => None,
        });
        let mut out = Vec::with_capacity(self.dim);
        for (p, on) in self.params.iter().zip(active) {
            if !on {
                if values.contains_key(&p.name) {
                    let why = p.when.as_ref().map(|a| {
                        let parent = &self.params[a.param].name;
                        match values.get(parent) {
                            Some(v) => {
                                format!("{} is {}", short(parent, 40), short(&v.to_string(), 40))
                            }
                            None => format!("{} is inactive", short(parent, 40)),
                        }
                    });
                    return Err(refuse(
                        p.name.clone(),
                        format!("is not active here ({})", why.unwrap_or_default()),
                    ));
                }
                out.extend(Self::inactive_coordinates(&p.domain));
                continue;
            }
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

    /// An SVM's space as Optuna objectives write it: the degree only for the
    /// polynomial kernel, gamma for every kernel but the linear, and the
    /// coefficient only where the degree is (a condition on a conditional).
    const CONDITIONAL: &str = r#"{"params":[
        {"name":"kernel","type":"categorical","choices":["rbf","poly","linear"]},
        {"name":"gamma","type":"float","low":1e-4,"high":10,"log":true,
         "when":{"param":"kernel","values":["rbf","poly"]}},
        {"name":"degree","type":"int","low":2,"high":5,"when":{"param":"kernel","values":["poly"]}},
        {"name":"shape","type":"categorical","choices":["a","b"],
         "when":{"param":"kernel","values":["poly"]}},
        {"name":"coef","type":"float","low":0,"high":1,"when":{"param":"shape","values":["b"]}}]}"#;

    /// `one_hot` marks exactly a categorical's coordinates, conditional or
    /// not, whatever the order; a fixed parameter takes none.
    #[test]
    fn one_hot_marks_the_categoricals_coordinates() {
        let s = space(CONDITIONAL).unwrap();
        assert_eq!(
            s.one_hot(),
            [true, true, true, false, false, true, true, false]
        );
        let s = space(
            r#"{"params":[
            {"name":"lr","type":"float","low":1e-5,"high":0.1,"log":true},
            {"name":"seed","type":"fixed","value":7},
            {"name":"opt","type":"categorical","choices":[true,false]},
            {"name":"depth","type":"int","low":2,"high":12}]}"#,
        )
        .unwrap();
        assert_eq!(s.one_hot(), [false, true, true, false]);
    }

    /// A conditional parameter is decoded, encoded and canonicalised only
    /// where its categorical takes one of its choices: elsewhere the
    /// objective does not receive it, a told point must not name it, and the
    /// canonical point holds its public default, so two points that differ
    /// only in an inactive parameter are one point.
    #[test]
    fn a_conditional_parameter_is_active_only_under_its_choices() {
        let s = space(CONDITIONAL).unwrap();
        assert_eq!(s.dim(), 3 + 1 + 1 + 2 + 1);
        let at = |kernel: usize, shape: usize, g: f64, d: f64, c: f64| {
            let mut u = vec![0.0; 8];
            u[kernel] = 1.0;
            u[3] = g;
            u[4] = d;
            u[5 + shape] = 1.0;
            u[7] = c;
            u
        };
        let keys = |u: &[f64]| s.decode(u).keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&at(0, 1, 0.3, 0.9, 0.2)), ["gamma", "kernel"]);
        assert_eq!(
            keys(&at(1, 0, 0.3, 0.9, 0.2)),
            ["degree", "gamma", "kernel", "shape"]
        );
        assert_eq!(
            keys(&at(1, 1, 0.3, 0.9, 0.2)),
            ["coef", "degree", "gamma", "kernel", "shape"]
        );
        assert_eq!(keys(&at(2, 1, 0.3, 0.9, 0.2)), ["kernel"]);
        // Inactive coordinates take one default whatever they were: the
        // middle of a float's, the integer in the middle of 2..=5 (3.5
        // rounds to 4, the centre of its cell (4 − 1.5)/4 = 0.625), the
        // first choice.
        let linear = s.canonical(&at(2, 1, 0.3, 0.9, 0.2));
        assert_eq!(linear, s.canonical(&at(2, 0, 0.7, 0.1, 0.9)));
        assert_eq!(linear, [0.0, 0.0, 1.0, 0.5, 0.625, 1.0, 0.0, 0.5]);
        let rbf = s.canonical(&at(0, 1, 0.3, 0.9, 0.2));
        assert_eq!(rbf, [1.0, 0.0, 0.0, 0.3, 0.625, 1.0, 0.0, 0.5]);
        for u in [
            at(1, 1, 0.3, 0.9, 0.2),
            at(1, 0, 0.6, 0.2, 0.4),
            at(0, 0, 0.1, 0.1, 0.1),
        ] {
            let c = s.canonical(&u);
            assert_eq!(s.canonical(&c), c);
            assert_eq!(s.decode(&c), s.decode(&u));
            // The told point's encoding is the canonical point (a log
            // float to rounding).
            let e = s.encode(&s.decode(&u)).unwrap();
            assert!(
                e.iter().zip(&c).all(|(a, b)| (a - b).abs() < 1e-12),
                "{e:?} {c:?}"
            );
        }
        // Only an active float's coordinates move its value: the acquisition's
        // gradient steps them alone.
        let moving =
            |u: &[f64]| -> Vec<usize> { (0..8).filter(|&k| s.continuous_at(u)[k]).collect() };
        assert_eq!(moving(&at(0, 1, 0.3, 0.9, 0.2)), [3]);
        assert_eq!(moving(&at(1, 1, 0.3, 0.9, 0.2)), [3, 7]);
        assert_eq!(moving(&at(1, 0, 0.3, 0.9, 0.2)), [3]);
        assert!(moving(&at(2, 1, 0.3, 0.9, 0.2)).is_empty());
        // A told point: an inactive parameter named, or an active one
        // missing, is refused naming it.
        let told = |json: &str| s.encode(&serde_json::from_str(json).unwrap());
        let e = told(r#"{"kernel":"linear","degree":3}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("degree") && e.contains("not active") && e.contains("linear"),
            "{e}"
        );
        let e = told(r#"{"kernel":"rbf","gamma":0.1,"coef":0.5}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("coef") && e.contains("shape is inactive"), "{e}");
        let e = told(r#"{"kernel":"poly","gamma":0.1,"shape":"a"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("degree") && e.contains("missing"), "{e}");
        assert_eq!(
            told(r#"{"kernel":"linear"}"#).unwrap(),
            [0.0, 0.0, 1.0, 0.5, 0.625, 1.0, 0.0, 0.5]
        );
        assert!(
            s.describe()
                .contains("degree int 2..=5 when kernel in {\"poly\"}"),
            "{}",
            s.describe()
        );
    }

    /// A condition names an earlier categorical and some of its choices;
    /// anything else is refused naming the field.
    #[test]
    fn a_bad_condition_is_refused_naming_the_field() {
        let with = |when: &str| {
            format!(
                r#"{{"params":[
                {{"name":"kernel","type":"categorical","choices":["rbf","poly"]}},
                {{"name":"c","type":"float","low":0,"high":1}},
                {{"name":"d","type":"int","low":2,"high":5,"when":{when}}}]}}"#
            )
        };
        for (when, field, reason) in [
            (
                r#"{"param":"degree","values":["poly"]}"#,
                "(d).when.param",
                "not a parameter before",
            ),
            (
                r#"{"param":"c","values":[0.5]}"#,
                "(d).when.param",
                "not categorical",
            ),
            (
                r#"{"param":"kernel","values":[]}"#,
                "(d).when.values",
                "empty",
            ),
            (
                r#"{"param":"kernel","values":["sigmoid"]}"#,
                "(d).when.values[0]",
                "not a choice",
            ),
            (
                r#"{"param":"kernel","values":["poly","poly"]}"#,
                "(d).when.values[1]",
                "twice",
            ),
        ] {
            let e = space(&with(when)).unwrap_err().to_string();
            assert!(e.contains(field) && e.contains(reason), "{when}: {e}");
        }
        // A condition on a later parameter is refused too.
        let later = r#"{"params":[
            {"name":"d","type":"int","low":2,"high":5,"when":{"param":"kernel","values":["poly"]}},
            {"name":"kernel","type":"categorical","choices":["rbf","poly"]}]}"#;
        assert!(space(later)
            .unwrap_err()
            .to_string()
            .contains("(d).when.param"));
        assert!(
            serde_json::from_str::<SpaceSpec>(&with(r#"{"param":"kernel","value":["poly"]}"#))
                .is_err()
        );
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
