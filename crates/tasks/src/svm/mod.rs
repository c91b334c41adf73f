//! Real federated tasks: every institution tunes the hyper-parameters of a
//! classifier that it trains on its own data, and its objective is the
//! classifier's error on its own validation split (paper 004, §5.1 "Real-World
//! Federated Learning Tasks").
//!
//! Compiled with the `svm` feature (on by default). The data sets are
//! embedded in the binary (`crates/tasks/data/`, provenance
//! in its README) and dealt to institutions either by a natural group (SUPPORT2
//! by disease group, credit by `Home`) or by a Dirichlet quantity skew with
//! α = 10 as in the paper (credit, Pima, breast cancer). The classifier is an
//! RBF support vector machine (`linfa-svm`) over `(log10 C, log10 γ)`, see
//! [`SvmHyperParams`]. Every task is minimised and has no known optimum.
//!
//! Each task also has a mixed-space variant, its name followed by `-mixed`
//! (`pima-svm-mixed`, …; issue 46, item 6), on the same clients and splits:
//! the typed space [`mixed_space`] of the kernel (`rbf`, `poly`, `linear`),
//! `C` and `gamma` on log scales and the polynomial's integer `degree`, as
//! scikit-learn's `SVC` defines them (`coef0 = 1`). `gamma` is unused by the
//! linear kernel and `degree` by all but the polynomial.
//!
//! | task | data | clients | label (positive) |
//! | --- | --- | --- | --- |
//! | `support2-svm` | SUPPORT2, 9105 patients | 8 disease groups | death within 30 days |
//! | `credit-svm` | credit scoring, 4454 applicants | 10, Dirichlet α = 10 | `Status = bad` |
//! | `credit-home-svm` | same | 5 by `Home` | `Status = bad` |
//! | `pima-svm` | Pima diabetes, 532 women | 5, Dirichlet α = 10 | `type = Yes` |
//! | `breast-cancer-svm` | WDBC, 569 tumours | 5, Dirichlet α = 10 | malignant |
//!
//! Each client keeps a stratified 70 % of its rows for training and 30 % for
//! validation, each capped at [`MAX_TRAIN_ROWS`] / [`MAX_VALIDATION_ROWS`] by a
//! stratified subsample (this only touches the larger SUPPORT2 groups and
//! the credit owners), so one evaluation stays in the milliseconds. The
//! partition and the splits are fixed by [`DATA_SEED`]: every run of a task,
//! whatever its seed, federates the same institutions.

pub mod client;
pub mod data;
pub mod split;

pub use client::{ClientData, SvmHyperParams, SvmKernel};

use crate::problem::{Evaluation, Problem, Sense};
use crate::space::{Space, SpaceSpec};
use crate::{Task, TaskError};
use data::{DataSet, Label, Schema};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The suffix that names a task's mixed-space variant.
pub const MIXED_SUFFIX: &str = "-mixed";

/// The seed of every partition and train/validation split.
pub const DATA_SEED: u64 = 20_050_004;
/// The share of each class a client trains on.
pub const TRAIN_FRACTION: f64 = 0.7;
/// At most this many training rows per client.
pub const MAX_TRAIN_ROWS: usize = 400;
/// At most this many validation rows per client.
pub const MAX_VALIDATION_ROWS: usize = 400;
/// The concentration of the Dirichlet quantity skew (the paper's α = 10).
pub const DIRICHLET_ALPHA: f64 = 10.0;
/// The fewest rows a Dirichlet draw may give a client.
pub const MIN_CLIENT_ROWS: usize = 30;

/// How the rows are dealt to the clients.
#[derive(Debug, Clone, Copy)]
pub enum Split {
    /// One client per value of the schema's group column, in this order, after
    /// merging `(from, into)` pairs.
    Groups {
        /// The group of each client.
        order: &'static [&'static str],
        /// Small groups folded into another.
        merge: &'static [(&'static str, &'static str)],
    },
    /// A Dirichlet quantity skew over this many clients.
    Dirichlet {
        /// The number of clients.
        clients: usize,
    },
}

/// A named task: a data set, a split and the SVM search space.
#[derive(Debug, Clone, Copy)]
pub struct TaskSpec {
    /// The name `fedhe simulate` accepts.
    pub name: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// Which columns mean what.
    pub schema: Schema,
    /// How the rows are dealt.
    pub split: Split,
}

const SUPPORT2: Schema = Schema {
    file: "support2.csv",
    text: include_str!("../../data/support2.csv"),
    label: Label::EventWithin {
        event: "event",
        time: "time",
        days: 30.0,
    },
    // Left out: pid, the outcome (event, time) and what is known only after
    // study entry (fac_sfdm2: functional status at 2 months; fac_dnr: DNR
    // orders mostly written after admission), the SUPPORT model's own survival
    // estimates (num_surv2m, num_surv6m), the split key and what it determines
    // (fac_dzgroup, fac_dzclass), a copy of num_num_co (fac_num_co), and the
    // measurements missing for more than half of the patients (num_glucose,
    // num_bun, num_urine, num_adlp).
    numeric: &[
        "num_age",
        "num_num_co",
        "num_edu",
        "num_scoma",
        "num_hday",
        "num_sps",
        "num_meanbp",
        "num_wblc",
        "num_hrt",
        "num_resp",
        "num_temp",
        "num_pafi",
        "num_alb",
        "num_bili",
        "num_crea",
        "num_sod",
        "num_ph",
        "num_adls",
    ],
    categorical: &[
        "fac_sex",
        "fac_race",
        "fac_diabetes",
        "fac_dementia",
        "fac_ca",
        "fac_income",
    ],
    group: Some("fac_dzgroup"),
};

const CREDIT: Schema = Schema {
    file: "credit_data.csv",
    text: include_str!("../../data/credit_data.csv"),
    label: Label::Equals("Status", "bad"),
    numeric: &[
        "Seniority",
        "Time",
        "Age",
        "Expenses",
        "Income",
        "Assets",
        "Debt",
        "Amount",
        "Price",
    ],
    categorical: &["Home", "Marital", "Records", "Job"],
    group: Some("Home"),
};

const PIMA: Schema = Schema {
    file: "pima.csv",
    text: include_str!("../../data/pima.csv"),
    label: Label::Equals("type", "Yes"),
    numeric: &["npreg", "glu", "bp", "skin", "bmi", "ped", "age"],
    categorical: &[],
    group: None,
};

const BREAST_CANCER: Schema = Schema {
    file: "breast_cancer.csv",
    text: include_str!("../../data/breast_cancer.csv"),
    // scikit-learn's coding: 0 = malignant, 1 = benign.
    label: Label::Equals("target", "0"),
    numeric: &[
        "mean radius",
        "mean texture",
        "mean perimeter",
        "mean area",
        "mean smoothness",
        "mean compactness",
        "mean concavity",
        "mean concave points",
        "mean symmetry",
        "mean fractal dimension",
        "radius error",
        "texture error",
        "perimeter error",
        "area error",
        "smoothness error",
        "compactness error",
        "concavity error",
        "concave points error",
        "symmetry error",
        "fractal dimension error",
        "worst radius",
        "worst texture",
        "worst perimeter",
        "worst area",
        "worst smoothness",
        "worst compactness",
        "worst concavity",
        "worst concave points",
        "worst symmetry",
        "worst fractal dimension",
    ],
    categorical: &[],
    group: None,
};

/// Every task, in the order `names` lists them.
pub const TASKS: &[TaskSpec] = &[
    TaskSpec {
        name: "support2-svm",
        description: "SUPPORT2 death within 30 days, one hospital per disease group (8)",
        schema: SUPPORT2,
        split: Split::Groups {
            order: &[
                "ARF/MOSF w/Sepsis",
                "CHF",
                "COPD",
                "Cirrhosis",
                "Colon Cancer",
                "Coma",
                "Lung Cancer",
                "MOSF w/Malig",
            ],
            merge: &[],
        },
    },
    TaskSpec {
        name: "credit-svm",
        description: "credit scoring (bad status), 10 lenders by a Dirichlet quantity skew",
        schema: CREDIT,
        split: Split::Dirichlet { clients: 10 },
    },
    TaskSpec {
        name: "credit-home-svm",
        description:
            "credit scoring (bad status), 5 lenders by Home (ignore and missing into other)",
        schema: CREDIT,
        split: Split::Groups {
            order: &["owner", "rent", "parents", "other", "priv"],
            merge: &[("ignore", "other"), ("missing", "other")],
        },
    },
    TaskSpec {
        name: "pima-svm",
        description: "Pima diabetes, 5 clinics by a Dirichlet quantity skew",
        schema: PIMA,
        split: Split::Dirichlet { clients: 5 },
    },
    TaskSpec {
        name: "breast-cancer-svm",
        description: "WDBC malignancy, 5 clinics by a Dirichlet quantity skew",
        schema: BREAST_CANCER,
        split: Split::Dirichlet { clients: 5 },
    },
];

impl TaskSpec {
    /// How many clients the split deals the rows to.
    pub fn clients(&self) -> usize {
        match self.split {
            Split::Groups { order, .. } => order.len(),
            Split::Dirichlet { clients } => clients,
        }
    }
}

/// The names of the tasks.
pub fn names() -> Vec<&'static str> {
    TASKS.iter().map(|t| t.name).collect()
}

/// The task called `name`, if there is one.
pub fn spec(name: &str) -> Option<&'static TaskSpec> {
    TASKS.iter().find(|t| t.name == name)
}

/// Whether `name` is a task of this family (a task or its mixed variant).
pub fn is_task(name: &str) -> bool {
    spec(name)
        .or_else(|| name.strip_suffix(MIXED_SUFFIX).and_then(spec))
        .is_some()
}

/// The typed space of the `*-svm-mixed` tasks: `kernel` ∈ {`rbf`, `poly`,
/// `linear`}, `C` ∈ [10⁻², 10³] and `gamma` ∈ [10⁻⁴, 10] on log scales (the
/// ranges of the RBF tasks), `degree` ∈ {2, …, 5}. It encodes to 6
/// coordinates (the kernel one-hot).
pub fn mixed_space() -> Space {
    let (c0, c1) = SvmHyperParams::LOG10_C;
    let (g0, g1) = SvmHyperParams::LOG10_GAMMA;
    let spec: SpaceSpec = serde_json::from_value(serde_json::json!({ "params": [
        {"name": "kernel", "type": "categorical", "choices": ["rbf", "poly", "linear"]},
        {"name": "C", "type": "float", "low": 10f64.powf(c0), "high": 10f64.powf(c1), "log": true},
        {"name": "gamma", "type": "float", "low": 10f64.powf(g0), "high": 10f64.powf(g1), "log": true},
        {"name": "degree", "type": "int", "low": 2, "high": 5},
    ]}))
    .expect("the mixed SVM space parses");
    spec.validate().expect("the mixed SVM space is valid")
}

/// The hyper-parameters named values stand for (as [`mixed_space`] decodes
/// them); the error names a missing or malformed value.
pub fn hyper_params(
    values: &serde_json::Map<String, serde_json::Value>,
) -> Result<SvmHyperParams, TaskError> {
    let number = |k: &str| {
        values
            .get(k)
            .and_then(serde_json::Value::as_f64)
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| crate::error::invalid("point", format!("no positive number {k}")))
    };
    let (c, gamma) = (number("C")?, number("gamma")?);
    let kernel = match values.get("kernel").and_then(serde_json::Value::as_str) {
        Some("rbf") => SvmKernel::Rbf,
        Some("linear") => SvmKernel::Linear,
        Some("poly") => {
            let degree = values
                .get("degree")
                .and_then(serde_json::Value::as_u64)
                .and_then(|d| u32::try_from(d).ok())
                .filter(|d| (1..=16).contains(d))
                .ok_or_else(|| crate::error::invalid("point", "no degree in 1..=16"))?;
            SvmKernel::Polynomial { degree }
        }
        _ => {
            return Err(crate::error::invalid(
                "point",
                "kernel is not one of rbf, poly, linear",
            ))
        }
    };
    Ok(SvmHyperParams { kernel, c, gamma })
}

/// The task `name` as the algorithms see it: `dim` must be 2 (C and γ), or
/// for a `-mixed` variant its space's 6; the number of clients is the
/// task's own ([`Task::clients`]).
pub fn task(name: &str, dim: usize) -> Result<Task, TaskError> {
    if let Some(spec) = name.strip_suffix(MIXED_SUFFIX).and_then(spec) {
        let space = Arc::new(mixed_space());
        if dim != space.dim() {
            return Err(crate::error::config(
                "dim",
                format!(
                    "{name} searches a typed space that encodes to {} coordinates, got dim = {dim}",
                    space.dim()
                ),
            ));
        }
        let objectives = FederatedSvm::build(spec)?.with_space(Arc::clone(&space));
        return Task::per_client(name, dim, Sense::Minimise, None, Arc::new(objectives))
            .with_space(space);
    }
    let spec = spec(name).ok_or_else(|| TaskError::UnknownTask {
        name: name.to_string(),
        known: names().join(", "),
    })?;
    if dim != SvmHyperParams::DIM {
        return Err(TaskError::Config {
            field: "dim",
            reason: format!(
                "task {name} tunes (log10 C, log10 γ): dim must be {}, not {dim}",
                SvmHyperParams::DIM
            ),
        });
    }
    let objectives = FederatedSvm::build(spec)?;
    Ok(Task::per_client(
        name,
        dim,
        Sense::Minimise,
        None,
        Arc::new(objectives),
    ))
}

/// What the memo keys an evaluation by: the client, the kernel, and the
/// bits of C and γ (γ as 0 for the linear kernel, which does not use it).
type MemoKey = (usize, SvmKernel, u64, u64);

/// The clients of a task, each with its own data, and a memo of the
/// evaluations so far (a repeated point, e.g. the same seeded initial design
/// under two methods, is not trained again).
#[derive(Debug)]
pub struct FederatedSvm {
    name: &'static str,
    clients: Vec<ClientData>,
    /// The typed space a point decodes in (a `-mixed` task), else the
    /// RBF's unit square.
    space: Option<Arc<Space>>,
    memo: Mutex<HashMap<MemoKey, f64>>,
}

impl FederatedSvm {
    /// Parses the data of `spec`, deals it to clients and splits and
    /// standardises each client's rows.
    pub fn build(spec: &TaskSpec) -> Result<Self, TaskError> {
        let data = DataSet::load(&spec.schema)?;
        let partition = match spec.split {
            Split::Groups { order, merge } => split::by_group(&data.groups, order, merge)?,
            Split::Dirichlet { clients } => split::dirichlet_quantity(
                data.len(),
                clients,
                DIRICHLET_ALPHA,
                MIN_CLIENT_ROWS,
                DATA_SEED,
            )?,
        };
        let clients = partition
            .iter()
            .enumerate()
            .map(|(i, rows)| {
                let (train, validation) = split::train_validation(
                    rows,
                    &data.labels,
                    TRAIN_FRACTION,
                    MAX_TRAIN_ROWS,
                    MAX_VALIDATION_ROWS,
                    DATA_SEED.wrapping_add(i as u64 + 1),
                );
                ClientData::new(&data, &train, &validation)
            })
            .collect();
        Ok(Self {
            name: spec.name,
            clients,
            space: None,
            memo: Mutex::new(HashMap::new()),
        })
    }

    /// The same clients, their points decoded in `space` (see [`hyper_params`]).
    pub fn with_space(mut self, space: Arc<Space>) -> Self {
        self.space = Some(space);
        self
    }

    /// Client `i`'s data.
    pub fn client(&self, i: usize) -> &ClientData {
        &self.clients[i]
    }

    /// Client `client`'s validation error at `unit` (see
    /// [`SvmHyperParams::from_unit`], or [`hyper_params`] of the decoded
    /// values when the task has a space).
    pub fn validation_error(&self, client: usize, unit: &[f64]) -> Result<f64, TaskError> {
        let dim = self.space.as_ref().map_or(SvmHyperParams::DIM, |s| s.dim());
        if client >= self.clients.len() || unit.len() != dim {
            return Err(TaskError::Config {
                field: "task",
                reason: format!(
                    "{}: client {client} of {}, point of dimension {}",
                    self.name,
                    self.clients.len(),
                    unit.len()
                ),
            });
        }
        let hp = match &self.space {
            Some(space) => hyper_params(&space.decode(unit))?,
            None => SvmHyperParams::from_unit(unit),
        };
        self.error_at(client, hp)
    }

    /// Client `client`'s validation error with the hyper-parameters `hp`,
    /// from the memo when it holds them.
    pub fn error_at(&self, client: usize, hp: SvmHyperParams) -> Result<f64, TaskError> {
        let client_data = self.clients.get(client).ok_or_else(|| {
            crate::error::config(
                "client",
                format!("{}: client {client} of {}", self.name, self.clients.len()),
            )
        })?;
        let gamma = match hp.kernel {
            SvmKernel::Linear => 0,
            _ => hp.gamma.to_bits(),
        };
        let key = (client, hp.kernel, hp.c.to_bits(), gamma);
        if let Some(&v) = self.memo.lock().expect("memo lock").get(&key) {
            return Ok(v);
        }
        let v = client_data.validation_error(client, hp)?;
        self.memo.lock().expect("memo lock").insert(key, v);
        Ok(v)
    }
}

impl Problem for FederatedSvm {
    fn clients(&self) -> usize {
        self.clients.len()
    }

    /// Deterministic: the observed value is the noise-free validation error.
    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        let v = self.validation_error(client, unit)?;
        Ok(Evaluation::exact(v))
    }
}
