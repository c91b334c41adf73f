//! Settings of an LDP-BO run (paper 001): params → validated params.

use crate::error::config;
use crate::AlgorithmError;
use serde::{Deserialize, Serialize};

/// The six learners of paper 001 §5, named as in `results.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LdpMethod {
    /// LDP-ATA-GP-UCB (Alg. 1): Nyström features, feature-adaptive truncation, CTL(ε) rewards.
    LdpAtaGpUcb,
    /// LDP-TGP-UCB (Alg. 2): raw rewards truncated at `b_t = B + R + 𝓛 ln t`, CTL(ε) rewards.
    LdpTgpUcb,
    /// LDP-MoMA-GP-UCB (Alg. 3 on CTL(ε) rewards).
    LdpMomaGpUcb,
    /// ATA-GP-UCB (Chowdhury & Gopalan 2019) on raw heavy-tailed rewards.
    AtaGpUcb,
    /// TGP-UCB (Chowdhury & Gopalan 2019) on raw heavy-tailed rewards.
    TgpUcb,
    /// MoMA-GP-UCB (Alg. 3) on raw heavy-tailed rewards.
    MomaGpUcb,
}

impl LdpMethod {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            LdpMethod::LdpAtaGpUcb => "ldp-ata-gp-ucb",
            LdpMethod::LdpTgpUcb => "ldp-tgp-ucb",
            LdpMethod::LdpMomaGpUcb => "ldp-moma-gp-ucb",
            LdpMethod::AtaGpUcb => "ata-gp-ucb",
            LdpMethod::TgpUcb => "tgp-ucb",
            LdpMethod::MomaGpUcb => "moma-gp-ucb",
        }
    }

    /// Every method.
    pub fn all() -> [LdpMethod; 6] {
        [
            LdpMethod::LdpAtaGpUcb,
            LdpMethod::LdpTgpUcb,
            LdpMethod::LdpMomaGpUcb,
            LdpMethod::AtaGpUcb,
            LdpMethod::TgpUcb,
            LdpMethod::MomaGpUcb,
        ]
    }

    /// Whether rewards pass through CTL(ε).
    pub fn is_private(self) -> bool {
        matches!(
            self,
            LdpMethod::LdpAtaGpUcb | LdpMethod::LdpTgpUcb | LdpMethod::LdpMomaGpUcb
        )
    }
}

/// The kernel of the surrogate (and of the synthetic objective).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LdpKernel {
    /// Squared exponential.
    #[default]
    Se,
    /// Matérn; only `ν = 2.5` is implemented (`matern_nu`).
    Matern,
}

/// The observation noise `η` added to `f(x)` before any privacy mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseModel {
    /// Uniform in `[−R, R]` (paper 001 §5.1, LDP case, `R = 1`).
    #[default]
    Uniform,
    /// `R`·Student-t with `student_t_dof` degrees of freedom (§5.1, heavy-tailed case).
    StudentT,
}

fn default_lambda() -> f64 {
    1.0
}
fn default_delta() -> f64 {
    0.1
}
fn default_noise_bound() -> f64 {
    1.0
}
fn default_dof() -> f64 {
    3.0
}
fn default_lengthscale() -> f64 {
    0.2
}
fn default_nu() -> f64 {
    2.5
}
fn default_grid() -> usize {
    100
}
fn default_accuracy() -> f64 {
    0.5
}
fn default_one() -> f64 {
    1.0
}
fn default_channel_bound() -> f64 {
    1024.0
}
fn default_members() -> usize {
    1
}

/// The settings of an LDP-BO run, as written in a config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdpBoParams {
    /// Institutions answering each query; their rewards for the point are summed
    /// through `SecureSum` and the learner uses the mean (1: the paper's setting).
    #[serde(default = "default_members")]
    pub members: usize,
    /// Rounds `T` (queries).
    pub rounds: usize,
    /// Points per dimension of the finite domain `𝒟` (a uniform grid of the unit cube;
    /// §5.1: 100 points on `[0, 1]`).
    #[serde(default = "default_grid")]
    pub grid_points: usize,
    /// The surrogate kernel.
    #[serde(default)]
    pub kernel: LdpKernel,
    /// Its length-scale `l` (§5.1: 0.2).
    #[serde(default = "default_lengthscale")]
    pub lengthscale: f64,
    /// Matérn smoothness `ν` (only 2.5).
    #[serde(default = "default_nu")]
    pub matern_nu: f64,
    /// The regulariser `λ` of eqs. (2)-(3).
    #[serde(default = "default_lambda")]
    pub lambda: f64,
    /// The confidence `δ ∈ (0, 1]` of the theorems.
    #[serde(default = "default_delta")]
    pub delta: f64,
    /// The LDP budget `ε` of CTL(ε) (required by the private methods).
    #[serde(default)]
    pub epsilon: Option<f64>,
    /// The noise model.
    #[serde(default)]
    pub noise: NoiseModel,
    /// `R`: the bound of uniform noise, or the scale of Student-t noise.
    #[serde(default = "default_noise_bound")]
    pub noise_bound: f64,
    /// Degrees of freedom of Student-t noise (> 2: finite variance, `α = 1`).
    #[serde(default = "default_dof")]
    pub student_t_dof: f64,
    /// `B`, the bound on `f`; by default `max_𝒟 |f|` as in §5.1.
    #[serde(default)]
    pub rkhs_bound: Option<f64>,
    /// The Nyström accuracy `ε̃ ∈ (0, 1)` of Theorems 2 and 4 (`ρ = (1+ε̃)/(1−ε̃)`).
    #[serde(default = "default_accuracy")]
    pub nystrom_accuracy: f64,
    /// A multiplier on every `β_t` (1: the theorems' values).
    #[serde(default = "default_one")]
    pub beta_scale: f64,
    /// MoMA's plays per epoch `k` (default `⌈24 ln(4eT/δ)⌉`, Alg. 3 line 3).
    #[serde(default)]
    pub moma_plays: Option<usize>,
    /// The channel's bound on one contribution (a reward divided by `members`).
    #[serde(default = "default_channel_bound")]
    pub channel_bound: f64,
}

impl LdpBoParams {
    /// Paper 001 §5.1 (SE kernel, uniform noise, `ε = 1`, `T = 1000`).
    pub fn paper_defaults() -> Self {
        Self {
            members: default_members(),
            rounds: 1000,
            grid_points: default_grid(),
            kernel: LdpKernel::Se,
            lengthscale: default_lengthscale(),
            matern_nu: default_nu(),
            lambda: default_lambda(),
            delta: default_delta(),
            epsilon: Some(1.0),
            noise: NoiseModel::Uniform,
            noise_bound: default_noise_bound(),
            student_t_dof: default_dof(),
            rkhs_bound: None,
            nystrom_accuracy: default_accuracy(),
            beta_scale: 1.0,
            moma_plays: None,
            channel_bound: default_channel_bound(),
        }
    }

    /// Checks every setting for `method`; the error names the first bad one.
    pub fn validate(&self, method: LdpMethod) -> Result<ValidLdpParams, AlgorithmError> {
        use crate::error::positive;
        if self.members < 1 {
            return Err(config(
                "members",
                "at least one institution answers a query",
            ));
        }
        if self.rounds < 1 {
            return Err(config("rounds", "the budget T must be at least 1"));
        }
        if self.grid_points < 2 {
            return Err(config("grid_points", "the domain needs at least 2 points"));
        }
        positive("lengthscale", self.lengthscale)?;
        positive("lambda", self.lambda)?;
        positive("noise_bound", self.noise_bound)?;
        positive("beta_scale", self.beta_scale)?;
        positive("channel_bound", self.channel_bound)?;
        if self.kernel == LdpKernel::Matern && self.matern_nu != 2.5 {
            return Err(config(
                "matern_nu",
                format!("only ν = 2.5 is implemented, got {}", self.matern_nu),
            ));
        }
        if !(self.delta > 0.0 && self.delta <= 1.0) {
            return Err(config(
                "delta",
                format!("must be in (0, 1], got {}", self.delta),
            ));
        }
        if !(self.nystrom_accuracy > 0.0 && self.nystrom_accuracy < 1.0) {
            return Err(config(
                "nystrom_accuracy",
                format!("must be in (0, 1), got {}", self.nystrom_accuracy),
            ));
        }
        if !(self.student_t_dof.is_finite() && self.student_t_dof > 2.0) {
            return Err(config(
                "student_t_dof",
                format!(
                    "must exceed 2 (finite variance), got {}",
                    self.student_t_dof
                ),
            ));
        }
        if let Some(b) = self.rkhs_bound {
            positive("rkhs_bound", b)?;
        }
        if self.moma_plays == Some(0) {
            return Err(config("moma_plays", "k must be at least 1"));
        }
        if method.is_private() {
            match self.epsilon {
                Some(e) => positive("epsilon", e)?,
                None => return Err(config("epsilon", format!("required by {}", method.name()))),
            }
            if self.noise != NoiseModel::Uniform {
                return Err(config(
                    "noise",
                    "CTL(ε) needs bounded noise |η| ≤ R (noise = \"uniform\")",
                ));
            }
        }
        Ok(ValidLdpParams {
            params: self.clone(),
            method,
        })
    }
}

/// Settings that passed [`LdpBoParams::validate`] for one method.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidLdpParams {
    params: LdpBoParams,
    method: LdpMethod,
}

impl std::ops::Deref for ValidLdpParams {
    type Target = LdpBoParams;
    fn deref(&self) -> &LdpBoParams {
        &self.params
    }
}

impl ValidLdpParams {
    /// The method.
    pub fn method(&self) -> LdpMethod {
        self.method
    }

    /// The variance of one observation's noise `η`: `R²/3` (uniform) or
    /// `R²ν/(ν−2)` (Student-t).
    pub fn noise_variance(&self) -> f64 {
        let r2 = self.noise_bound * self.noise_bound;
        match self.noise {
            NoiseModel::Uniform => r2 / 3.0,
            NoiseModel::StudentT => r2 * self.student_t_dof / (self.student_t_dof - 2.0),
        }
    }

    /// MoMA's `k = ⌈24 ln(4eT/δ)⌉` (Alg. 3 line 3) unless configured.
    pub fn moma_plays(&self) -> usize {
        self.params.moma_plays.unwrap_or_else(|| {
            let t = self.rounds as f64;
            (24.0 * (4.0 * std::f64::consts::E * t / self.delta).ln()).ceil() as usize
        })
    }

    /// Nyström's `ρ = (1 + ε̃)/(1 − ε̃)` (Theorems 2, 4).
    pub fn nystrom_rho(&self) -> f64 {
        (1.0 + self.nystrom_accuracy) / (1.0 - self.nystrom_accuracy)
    }

    /// The dictionary oversampling `q = 6ρ ln(4T/δ)/ε̃²` (Theorems 2, 4).
    pub fn nystrom_q(&self) -> f64 {
        let t = self.rounds as f64;
        6.0 * self.nystrom_rho() * (4.0 * t / self.delta).ln()
            / (self.nystrom_accuracy * self.nystrom_accuracy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_name_their_field() {
        type Mutation = Box<dyn Fn(&mut LdpBoParams)>;
        let cases: Vec<(&str, LdpMethod, Mutation)> = vec![
            (
                "epsilon",
                LdpMethod::LdpTgpUcb,
                Box::new(|p| p.epsilon = Some(0.0)),
            ),
            (
                "epsilon",
                LdpMethod::LdpTgpUcb,
                Box::new(|p| p.epsilon = Some(-1.0)),
            ),
            (
                "epsilon",
                LdpMethod::LdpMomaGpUcb,
                Box::new(|p| p.epsilon = None),
            ),
            (
                "epsilon",
                LdpMethod::LdpAtaGpUcb,
                Box::new(|p| p.epsilon = Some(f64::NAN)),
            ),
            ("delta", LdpMethod::TgpUcb, Box::new(|p| p.delta = 0.0)),
            ("delta", LdpMethod::TgpUcb, Box::new(|p| p.delta = 1.5)),
            (
                "matern_nu",
                LdpMethod::TgpUcb,
                Box::new(|p| {
                    p.kernel = LdpKernel::Matern;
                    p.matern_nu = 1.5;
                }),
            ),
            (
                "moma_plays",
                LdpMethod::MomaGpUcb,
                Box::new(|p| p.moma_plays = Some(0)),
            ),
            ("rounds", LdpMethod::TgpUcb, Box::new(|p| p.rounds = 0)),
            ("members", LdpMethod::TgpUcb, Box::new(|p| p.members = 0)),
            (
                "nystrom_accuracy",
                LdpMethod::AtaGpUcb,
                Box::new(|p| p.nystrom_accuracy = 1.0),
            ),
            (
                "noise",
                LdpMethod::LdpTgpUcb,
                Box::new(|p| p.noise = NoiseModel::StudentT),
            ),
            (
                "student_t_dof",
                LdpMethod::TgpUcb,
                Box::new(|p| p.student_t_dof = 2.0),
            ),
            ("lambda", LdpMethod::TgpUcb, Box::new(|p| p.lambda = 0.0)),
        ];
        for (field, method, mutate) in cases {
            let mut p = LdpBoParams::paper_defaults();
            mutate(&mut p);
            let err = p.validate(method).unwrap_err().to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
        for m in LdpMethod::all() {
            assert!(LdpBoParams::paper_defaults().validate(m).is_ok());
        }
        // Non-private methods do not need ε.
        let mut p = LdpBoParams::paper_defaults();
        p.epsilon = None;
        p.noise = NoiseModel::StudentT;
        assert!(p.validate(LdpMethod::MomaGpUcb).is_ok());
    }

    #[test]
    fn moma_plays_and_nystrom_constants_follow_the_theorems() {
        let p = LdpBoParams::paper_defaults()
            .validate(LdpMethod::MomaGpUcb)
            .unwrap();
        // k = ⌈24 ln(4e·1000/0.1)⌉ = ⌈24 · 11.597⌉ = 279.
        assert_eq!(p.moma_plays(), 279);
        assert!((p.nystrom_rho() - 3.0).abs() < 1e-12);
        let q = 6.0 * 3.0 * (40000.0f64).ln() / 0.25;
        assert!((p.nystrom_q() - q).abs() < 1e-9);
        let mut s = LdpBoParams::paper_defaults();
        s.noise = NoiseModel::StudentT;
        let s = s.validate(LdpMethod::TgpUcb).unwrap();
        assert!((s.noise_variance() - 3.0).abs() < 1e-12);
    }
}
