//! Settings of a federated X-armed bandit run (paper 003): params → validated params.

use crate::error::{config, positive};
use crate::AlgorithmError;
use serde::{Deserialize, Serialize};

/// The methods of paper 003 §4, named as in `results.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BanditMethod {
    /// Fed-PNE (Algs. 1-2).
    FedPne,
    /// DP-Fed-PNE (App. D, Algs. 3-4).
    DpFedPne,
    /// Fed1-UCB (Shi & Shen 2021) on a random-offset meshgrid of arms.
    Fed1Ucb,
    /// HCT (Azar et al. 2014) on the global objective, communicating every
    /// round (App. E.1.2: `ν₁ = 1`, `ρ = 0.75`).
    Hct,
}

impl BanditMethod {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            BanditMethod::FedPne => "fed-pne",
            BanditMethod::DpFedPne => "dp-fed-pne",
            BanditMethod::Fed1Ucb => "fed1-ucb",
            BanditMethod::Hct => "hct",
        }
    }

    /// Every method.
    pub fn all() -> [BanditMethod; 4] {
        [
            BanditMethod::FedPne,
            BanditMethod::DpFedPne,
            BanditMethod::Fed1Ucb,
            BanditMethod::Hct,
        ]
    }
}

fn default_arity() -> u64 {
    2
}
fn default_nu1() -> f64 {
    1.0
}
fn default_rho() -> f64 {
    0.5
}
fn default_c() -> f64 {
    0.1
}
fn default_c1() -> f64 {
    1.0
}
fn default_perturbation() -> f64 {
    1.0
}
fn default_arms() -> usize {
    100
}
fn default_channel_bound() -> f64 {
    1024.0
}

/// The settings of a federated X-armed bandit run, as written in a config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FedPneParams {
    /// Clients `M`.
    pub members: usize,
    /// The budget `T`: pulls per client.
    pub rounds: usize,
    /// The arity `k` of the partition (≥ 2).
    #[serde(default = "default_arity")]
    pub arity: u64,
    /// Smoothness `ν₁ > 0` (App. E: 1).
    #[serde(default = "default_nu1")]
    pub nu1: f64,
    /// Smoothness `ρ ∈ (0, 1)` (App. E: 0.5 for Fed-PNE, 0.75 for HCT).
    #[serde(default = "default_rho")]
    pub rho: f64,
    /// Confidence constant `c > 0` (App. E: 0.1).
    #[serde(default = "default_c")]
    pub c: f64,
    /// Confidence constant `c₁ > 0` (App. E: 1).
    #[serde(default = "default_c1")]
    pub c1: f64,
    /// The confidence `δ ∈ (0, 1)` of `τ_h` and `b_{h,i}` (default `1/M`, Theorem 3.1;
    /// `1/2` when `M = 1`); HCT's `δ` of `δ̃(t) = min{1, c₁δ/t}`.
    #[serde(default)]
    pub confidence_delta: Option<f64>,
    /// The standard deviation of each client's consistent perturbation of a
    /// shared objective (App. E.2: 1, unit normal); 0 for identical clients.
    #[serde(default = "default_perturbation")]
    pub perturbation: f64,
    /// The standard deviation of fresh Gaussian noise on every pull.
    #[serde(default)]
    pub noise_std: f64,
    /// DP-Fed-PNE's `ε > 0`.
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// DP-Fed-PNE's `δ ∈ (0, 1)`.
    #[serde(default)]
    pub dp_delta: Option<f64>,
    /// Fed1-UCB: arms per dimension of the meshgrid (`K`).
    #[serde(default = "default_arms")]
    pub arms_per_dim: usize,
    /// Fed1-UCB: the tuning constant `κ` of `f(p)` (App. E.1.1: 1).
    #[serde(default = "default_c1")]
    pub kappa: f64,
    /// The channel's bound on one contribution (a local mean divided by `M`).
    #[serde(default = "default_channel_bound")]
    pub channel_bound: f64,
    /// The value regret is measured against when the task has no known optimum
    /// (task units; App. E.2 assumes 0 for the final infected share and 1 for
    /// an AUC). Refused for a task whose optimum is known.
    #[serde(default)]
    pub assumed_optimum: Option<f64>,
}

impl FedPneParams {
    /// Paper 003 App. E: `M = 10`, `ν₁ = 1`, `ρ = 0.5`, `c = 0.1`, `c₁ = 1`.
    pub fn paper_defaults() -> Self {
        Self {
            members: 10,
            rounds: 1000,
            arity: default_arity(),
            nu1: default_nu1(),
            rho: default_rho(),
            c: default_c(),
            c1: default_c1(),
            confidence_delta: None,
            perturbation: default_perturbation(),
            noise_std: 0.0,
            epsilon: None,
            dp_delta: None,
            arms_per_dim: default_arms(),
            kappa: 1.0,
            channel_bound: default_channel_bound(),
            assumed_optimum: None,
        }
    }

    /// Checks every setting for `method`; the error names the first bad one.
    pub fn validate(&self, method: BanditMethod) -> Result<ValidFedPneParams, AlgorithmError> {
        if self.members < 1 {
            return Err(config("members", "at least one client"));
        }
        if self.rounds < 1 {
            return Err(config("rounds", "the budget T must be at least 1"));
        }
        if self.arity < 2 {
            return Err(config(
                "arity",
                format!("k must be at least 2, got {}", self.arity),
            ));
        }
        positive("nu1", self.nu1)?;
        positive("c", self.c)?;
        positive("c1", self.c1)?;
        positive("kappa", self.kappa)?;
        positive("channel_bound", self.channel_bound)?;
        if !(self.rho > 0.0 && self.rho < 1.0) {
            return Err(config(
                "rho",
                format!("must be in (0, 1), got {}", self.rho),
            ));
        }
        if let Some(d) = self.confidence_delta {
            if !(d > 0.0 && d < 1.0) {
                return Err(config(
                    "confidence_delta",
                    format!("must be in (0, 1), got {d}"),
                ));
            }
        }
        for (field, v) in [
            ("perturbation", self.perturbation),
            ("noise_std", self.noise_std),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(config(field, format!("must be finite and ≥ 0, got {v}")));
            }
        }
        if let Some(a) = self.assumed_optimum {
            if !a.is_finite() {
                return Err(config(
                    "assumed_optimum",
                    format!("must be finite, got {a}"),
                ));
            }
        }
        if self.arms_per_dim < 1 {
            return Err(config("arms_per_dim", "at least one arm"));
        }
        if method == BanditMethod::DpFedPne {
            match self.epsilon {
                Some(e) => positive("epsilon", e)?,
                None => return Err(config("epsilon", "required by dp-fed-pne")),
            }
            match self.dp_delta {
                Some(d) if d > 0.0 && d < 1.0 => {}
                Some(d) => return Err(config("dp_delta", format!("must be in (0, 1), got {d}"))),
                None => return Err(config("dp_delta", "required by dp-fed-pne")),
            }
        }
        Ok(ValidFedPneParams {
            params: self.clone(),
            method,
        })
    }
}

/// Settings that passed [`FedPneParams::validate`] for one method.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidFedPneParams {
    params: FedPneParams,
    method: BanditMethod,
}

impl std::ops::Deref for ValidFedPneParams {
    type Target = FedPneParams;
    fn deref(&self) -> &FedPneParams {
        &self.params
    }
}

impl ValidFedPneParams {
    /// The method.
    pub fn method(&self) -> BanditMethod {
        self.method
    }

    /// The confidence `δ` (default `1/M`, Theorem 3.1).
    pub fn confidence_delta(&self) -> f64 {
        self.params.confidence_delta.unwrap_or(if self.members > 1 {
            1.0 / self.members as f64
        } else {
            0.5
        })
    }

    /// `log(c₁T/δ)`, the logarithm in `τ_h` and `b_{h,i}`.
    pub fn log_term(&self) -> f64 {
        (self.c1 * self.rounds as f64 / self.confidence_delta()).ln()
    }

    /// `τ_h = ⌈c² log(c₁T/δ) ρ^{−2h} / ν₁²⌉` (paper 003 §3.1, eq. (3) of App. B).
    pub fn tau(&self, depth: u32) -> u64 {
        let v = self.c * self.c * self.log_term() * self.rho.powi(-2 * depth as i32)
            / (self.nu1 * self.nu1);
        v.ceil().max(1.0).min(u64::MAX as f64 / 4.0) as u64
    }

    /// `b_{h,i} = c √(log(c₁T/δ)/T_{h,i})` (eq. (1)).
    pub fn confidence_width(&self, pulls: u64) -> f64 {
        self.c * (self.log_term() / pulls as f64).sqrt()
    }

    /// DP-Fed-PNE's noise standard deviation per reward,
    /// `σ = √(2 log(1.25/δ))/ε` (App. D.2, Theorem D.1); `None` without DP.
    pub fn dp_sigma(&self) -> Option<f64> {
        match (self.method, self.epsilon, self.dp_delta) {
            (BanditMethod::DpFedPne, Some(e), Some(d)) => Some((2.0 * (1.25 / d).ln()).sqrt() / e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_name_their_field() {
        type Mutation = Box<dyn Fn(&mut FedPneParams)>;
        let cases: Vec<(&str, BanditMethod, Mutation)> = vec![
            ("arity", BanditMethod::FedPne, Box::new(|p| p.arity = 1)),
            ("nu1", BanditMethod::FedPne, Box::new(|p| p.nu1 = 0.0)),
            ("rho", BanditMethod::FedPne, Box::new(|p| p.rho = 1.0)),
            ("rho", BanditMethod::FedPne, Box::new(|p| p.rho = -0.5)),
            ("rounds", BanditMethod::FedPne, Box::new(|p| p.rounds = 0)),
            (
                "members",
                BanditMethod::Fed1Ucb,
                Box::new(|p| p.members = 0),
            ),
            (
                "confidence_delta",
                BanditMethod::FedPne,
                Box::new(|p| p.confidence_delta = Some(1.0)),
            ),
            (
                "epsilon",
                BanditMethod::DpFedPne,
                Box::new(|p| p.dp_delta = Some(0.1)),
            ),
            (
                "epsilon",
                BanditMethod::DpFedPne,
                Box::new(|p| {
                    p.epsilon = Some(-1.0);
                    p.dp_delta = Some(0.1);
                }),
            ),
            (
                "dp_delta",
                BanditMethod::DpFedPne,
                Box::new(|p| p.epsilon = Some(1.0)),
            ),
            (
                "dp_delta",
                BanditMethod::DpFedPne,
                Box::new(|p| {
                    p.epsilon = Some(1.0);
                    p.dp_delta = Some(0.0);
                }),
            ),
            ("kappa", BanditMethod::Fed1Ucb, Box::new(|p| p.kappa = 0.0)),
            ("nu1", BanditMethod::Hct, Box::new(|p| p.nu1 = -1.0)),
            (
                "assumed_optimum",
                BanditMethod::FedPne,
                Box::new(|p| p.assumed_optimum = Some(f64::NAN)),
            ),
            ("rho", BanditMethod::Hct, Box::new(|p| p.rho = 0.0)),
            ("rho", BanditMethod::Hct, Box::new(|p| p.rho = f64::NAN)),
            ("rounds", BanditMethod::Hct, Box::new(|p| p.rounds = 0)),
            ("c", BanditMethod::Hct, Box::new(|p| p.c = f64::INFINITY)),
            (
                "confidence_delta",
                BanditMethod::Hct,
                Box::new(|p| p.confidence_delta = Some(0.0)),
            ),
            (
                "noise_std",
                BanditMethod::FedPne,
                Box::new(|p| p.noise_std = f64::NAN),
            ),
        ];
        for (field, method, mutate) in cases {
            let mut p = FedPneParams::paper_defaults();
            mutate(&mut p);
            let err = p.validate(method).unwrap_err().to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
        assert!(FedPneParams::paper_defaults()
            .validate(BanditMethod::FedPne)
            .is_ok());
    }

    #[test]
    fn threshold_width_and_dp_noise_follow_the_paper() {
        let mut p = FedPneParams::paper_defaults();
        p.epsilon = Some(1.0);
        p.dp_delta = Some(0.1);
        let v = p.validate(BanditMethod::DpFedPne).unwrap();
        // δ = 1/M = 0.1: log(c₁T/δ) = ln 10⁴.
        let l = 10_000f64.ln();
        assert!((v.log_term() - l).abs() < 1e-12);
        // τ_3 = ⌈0.01 · ln 10⁴ · 0.5^{−6}⌉ = ⌈5.89⌉ = 6.
        assert_eq!(v.tau(3), 6);
        assert_eq!(v.tau(0), 1);
        assert!((v.confidence_width(40) - 0.1 * (l / 40.0).sqrt()).abs() < 1e-12);
        // σ² = 2 log(1.25/δ)/ε².
        let s = v.dp_sigma().unwrap();
        assert!((s * s - 2.0 * 12.5f64.ln()).abs() < 1e-12);
        assert!(p
            .validate(BanditMethod::FedPne)
            .unwrap()
            .dp_sigma()
            .is_none());
    }
}
