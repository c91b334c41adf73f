//! Settings of a DP-FTS-DE run: params → validated params.

use super::subregions::WeightSchedule;
use crate::error::config;
use crate::fts::{
    default_acq_candidates, default_acq_iters, default_acq_polish, default_features,
    default_gp_prior_features, default_initial_points, default_lengthscale,
    default_mixing_exponent, default_noise_variance,
};
use crate::rff_agent::{RffModelParams, SharedSettings};
use crate::AlgorithmError;
use fedhe_dp::accountant::validate_delta;
use fedhe_dp::{AccountantKind, ClipParams, L2Clip, SubsampledGaussian, SubsampledGaussianParams};
use serde::{Deserialize, Serialize};

/// Where the Gaussian noise of Alg. 1 line 11 is added (see the module docs of
/// [`super`] for the privacy each gives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseMode {
    /// No noise: FTS-DE (or the modified FTS with `subregions = 1`); no ε.
    None,
    /// The server adds the noise after decryption (the paper's trusted server).
    #[default]
    Central,
    /// Every member adds a share before encryption; the decrypted sum is private.
    Distributed,
}

/// The accountant, as configured (`moments` or `rdp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccountantChoice {
    /// The moments accountant, as the paper reports ε.
    #[default]
    Moments,
    /// The tighter RDP accountant (dp-accounting's).
    Rdp,
}

/// Standard deviations of a distributed noise share the channel bound allows.
pub const NOISE_SHARE_TAIL: f64 = 16.0;

fn default_subregions() -> usize {
    1
}
fn default_softmax_a() -> f64 {
    15.0
}
fn default_weight_warmup() -> usize {
    5
}
fn default_weight_decay() -> usize {
    5
}
fn default_sampling_rate() -> f64 {
    1.0
}
fn default_noise_multiplier() -> f64 {
    1.0
}
fn default_clip_norm() -> f64 {
    11.0
}

/// The settings of a DP-FTS-DE federation, as written in a config file.
/// Defaults are paper 000 §5.1's synthetic setting (`S = 11`, `a = 15`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpFtsDeParams {
    /// Number of agents `N` (at least 2).
    pub members: usize,
    /// Rounds `T` (one broadcast and one query per agent each).
    pub rounds: usize,
    /// Initial points per agent `N_init`, in its sub-region.
    #[serde(default = "default_initial_points")]
    pub initial_points: usize,
    /// Random features `M`.
    #[serde(default = "default_features")]
    pub features: usize,
    /// SE length-scale of the shared features (unit cube).
    #[serde(default = "default_lengthscale")]
    pub lengthscale: f64,
    /// `λ` of eq. 2, the observation-noise variance.
    #[serde(default = "default_noise_variance")]
    pub noise_variance: f64,
    /// `c` in `1 − p_t = t^(−c)` (0.5: `1/√t`; 1: `1/t`).
    #[serde(default = "default_mixing_exponent")]
    pub mixing_exponent: f64,
    /// Sub-regions `P` (1: DP-FTS without distributed exploration).
    #[serde(default = "default_subregions")]
    pub subregions: usize,
    /// The softmax constant `a`.
    #[serde(default = "default_softmax_a")]
    pub softmax_a: f64,
    /// Rounds at temperature 1.
    #[serde(default = "default_weight_warmup")]
    pub weight_warmup: usize,
    /// Rounds over which `a_t` falls from `a + 1` to 1.
    #[serde(default = "default_weight_decay")]
    pub weight_decay: usize,
    /// Where the noise is added.
    #[serde(default)]
    pub noise: NoiseMode,
    /// Poisson sampling rate `q ∈ (0, 1]`.
    #[serde(default = "default_sampling_rate")]
    pub sampling_rate: f64,
    /// Noise multiplier `z > 0`.
    #[serde(default = "default_noise_multiplier")]
    pub noise_multiplier: f64,
    /// Clipping norm `S > 0` of the joint vector (`S/√P` per sub-region).
    #[serde(default = "default_clip_norm")]
    pub clip_norm: f64,
    /// `δ ∈ (0, 1)` of the reported (ε, δ); default `1/N^1.1` (paper 000 §5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// Distributed noise: the fewest members whose contributions a round's
    /// sum can hold, `m ≤ N` (a t-of-n study's quorum, when members may be
    /// offline). Each share then has variance `σ²/m`, so a sum over any `m`
    /// members already carries the full `σ²` the accountant assumes (the
    /// worst case); with all `N` present the sum carries `σ²·N/m`. Default `N`.
    #[serde(default)]
    pub min_present: Option<usize>,
    /// The accountant.
    #[serde(default)]
    pub accountant: AccountantChoice,
    /// Acquisition optimiser: uniform candidates (shared among sub-regions).
    #[serde(default = "default_acq_candidates")]
    pub acq_candidates: usize,
    /// Acquisition optimiser: candidates polished by L-BFGS.
    #[serde(default = "default_acq_polish")]
    pub acq_polish: usize,
    /// Acquisition optimiser: L-BFGS iterations per polish.
    #[serde(default = "default_acq_iters")]
    pub acq_iters: u64,
    /// Random features of the prior draw in an agent's own GP-posterior
    /// sample (0: sample the `M`-feature weight posterior instead); see
    /// [`RffModelParams::gp_prior_features`].
    #[serde(default = "default_gp_prior_features")]
    pub gp_prior_features: usize,
}

impl DpFtsDeParams {
    /// Paper 000 §5.1 with `N` agents and `T` rounds: `P = 1`, central noise,
    /// `q = 1`, `z = 1`, `S = 11`.
    pub fn new(members: usize, rounds: usize) -> Self {
        Self {
            members,
            rounds,
            initial_points: default_initial_points(),
            features: default_features(),
            lengthscale: default_lengthscale(),
            noise_variance: default_noise_variance(),
            mixing_exponent: default_mixing_exponent(),
            subregions: default_subregions(),
            softmax_a: default_softmax_a(),
            weight_warmup: default_weight_warmup(),
            weight_decay: default_weight_decay(),
            noise: NoiseMode::default(),
            sampling_rate: default_sampling_rate(),
            noise_multiplier: default_noise_multiplier(),
            clip_norm: default_clip_norm(),
            delta: None,
            min_present: None,
            accountant: AccountantChoice::default(),
            acq_candidates: default_acq_candidates(),
            acq_polish: default_acq_polish(),
            acq_iters: default_acq_iters(),
            gp_prior_features: default_gp_prior_features(),
        }
    }

    /// Checks every setting. Privacy parameters are refused with the message
    /// of [`fedhe_dp`]: `q ∉ (0, 1]`, `z ≤ 0`, `δ ∉ (0, 1)`, `S ≤ 0`.
    pub fn validate(self) -> Result<ValidParams, AlgorithmError> {
        let mechanism = SubsampledGaussianParams {
            sampling_rate: self.sampling_rate,
            noise_multiplier: self.noise_multiplier,
        }
        .validate()?;
        let clip = ClipParams {
            norm: self.clip_norm,
        }
        .validate()?;
        let delta = validate_delta(
            self.delta
                .unwrap_or_else(|| (self.members as f64).powf(-1.1)),
        )?;
        if self.subregions == 0 || self.subregions > self.members {
            return Err(config(
                "subregions",
                format!(
                    "{}: between 1 and the number of agents {}",
                    self.subregions, self.members
                ),
            ));
        }
        let min_present = self.min_present.unwrap_or(self.members);
        if min_present == 0 || min_present > self.members {
            return Err(config(
                "min_present",
                format!(
                    "{min_present}: between 1 and the number of agents {}",
                    self.members
                ),
            ));
        }
        if !(self.softmax_a.is_finite() && self.softmax_a > 0.0) {
            return Err(config(
                "softmax_a",
                format!("{} is not finite and positive", self.softmax_a),
            ));
        }
        let model = RffModelParams {
            features: self.features,
            lengthscale: self.lengthscale,
            noise_variance: self.noise_variance,
            acq_candidates: self.acq_candidates,
            acq_polish: self.acq_polish,
            acq_iters: self.acq_iters,
            gp_prior_features: self.gp_prior_features,
        };
        let shared = SharedSettings::validate(
            self.members,
            self.rounds,
            self.initial_points,
            self.mixing_exponent,
            model,
        )?;
        Ok(ValidParams {
            shared,
            subregions: self.subregions,
            weights: WeightSchedule {
                a: self.softmax_a,
                warmup: self.weight_warmup,
                decay: self.weight_decay,
            },
            noise: self.noise,
            mechanism,
            clip,
            delta,
            min_present,
            accountant: match self.accountant {
                AccountantChoice::Moments => AccountantKind::Moments,
                AccountantChoice::Rdp => AccountantKind::Rdp,
            },
        })
    }
}

/// Validated [`DpFtsDeParams`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidParams {
    /// `N`, `T`, `N_init`, the model and `p_t`.
    pub shared: SharedSettings,
    /// `P`.
    pub subregions: usize,
    /// The softmax weights.
    pub weights: WeightSchedule,
    /// Where the noise is added.
    pub noise: NoiseMode,
    /// `q` and `z`.
    pub mechanism: SubsampledGaussian,
    /// `S`.
    pub clip: L2Clip,
    /// `δ`.
    pub delta: f64,
    /// `m`: distributed noise shares are sized for a sum over `m` members.
    pub min_present: usize,
    /// The accountant.
    pub accountant: AccountantKind,
}

impl ValidParams {
    /// The standard deviation of one member's distributed noise share for a
    /// sum whose noise must have standard deviation `sum_std` (`z·φ_max·S`,
    /// eq. 4): `sum_std/√m`, so any `m` shares add up to variance `sum_std²`.
    pub fn noise_share_std(&self, sum_std: f64) -> f64 {
        sum_std / (self.min_present as f64).sqrt()
    }

    /// The bound of every contributed value: `|φ_n^(i) ω̂_{n,m}| ≤ S/√P ≤ S`
    /// (clipping, `φ ≤ 1`), plus, with distributed noise, 16 standard
    /// deviations of a noise share `z·φ_max·S/√m ≤ z·S/√m` (a share beyond it,
    /// probability below 1e−57 per value, makes the round fail rather than wrap).
    pub fn channel_bound(&self) -> f64 {
        let s = self.clip.norm();
        match self.noise {
            NoiseMode::Distributed => {
                s * (1.0
                    + NOISE_SHARE_TAIL * self.noise_share_std(self.mechanism.noise_multiplier()))
            }
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_privacy_parameters_are_refused_with_their_name() {
        let ok = DpFtsDeParams::new(10, 5);
        assert!(ok.clone().validate().is_ok());
        type Edit = Box<dyn Fn(&mut DpFtsDeParams)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("q (sampling rate)", Box::new(|p| p.sampling_rate = 0.0)),
            ("q (sampling rate)", Box::new(|p| p.sampling_rate = 1.5)),
            (
                "z (noise multiplier)",
                Box::new(|p| p.noise_multiplier = 0.0),
            ),
            (
                "z (noise multiplier)",
                Box::new(|p| p.noise_multiplier = -1.0),
            ),
            ("delta", Box::new(|p| p.delta = Some(0.0))),
            ("delta", Box::new(|p| p.delta = Some(1.0))),
            ("S (clipping norm)", Box::new(|p| p.clip_norm = 0.0)),
            ("S (clipping norm)", Box::new(|p| p.clip_norm = -2.0)),
            ("subregions", Box::new(|p| p.subregions = 0)),
            ("min_present", Box::new(|p| p.min_present = Some(0))),
            ("min_present", Box::new(|p| p.min_present = Some(11))),
        ];
        for (name, edit) in cases {
            let mut p = ok.clone();
            edit(&mut p);
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
    }

    #[test]
    fn delta_defaults_to_the_papers_and_the_bound_covers_noise_shares() {
        let mut p = DpFtsDeParams::new(200, 40);
        let v = p.clone().validate().unwrap();
        assert!((v.delta - 0.0029435).abs() < 1e-6, "{}", v.delta);
        assert_eq!(v.channel_bound(), 11.0);
        p.noise = NoiseMode::Distributed;
        let d = p.clone().validate().unwrap();
        assert!((d.channel_bound() - 11.0 * (1.0 + 16.0 / 200f64.sqrt())).abs() < 1e-12);
        // Sized for 50 present of 200: each share has σ/√50, so 50 shares sum
        // to variance σ² (and all 200 to 4σ²), and the bound widens with it.
        p.min_present = Some(50);
        let m = p.validate().unwrap();
        let sigma = 3.0;
        assert!((50.0 * m.noise_share_std(sigma).powi(2) - sigma * sigma).abs() < 1e-12);
        assert!((200.0 * m.noise_share_std(sigma).powi(2) - 4.0 * sigma * sigma).abs() < 1e-12);
        assert!((m.channel_bound() - 11.0 * (1.0 + 16.0 / 50f64.sqrt())).abs() < 1e-12);
    }
}
