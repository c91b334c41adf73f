//! Output privacy: what a study's secure sums may release.
//!
//! The channel keeps every contribution secret, but the decrypted sums are
//! released to every member, and from noise-free sums a member can
//! reconstruct the others' evaluations (`fedhe-attacks`). A private study
//! ([`Privacy::Dp`]) therefore makes every release a distributed discrete
//! Gaussian mechanism ([`fedhe_dp::distributed`]): each member clips every
//! evaluation's term of the released statistic to a public L2 bound, adds
//! its own share of integer noise on a public grid **before encryption**, and
//! the sum over the quorum carries the noise that the study's budget needs.
//! A [`fedhe_dp::PrivacyLedger`] composes every release of the run and
//! reports ε at the study's δ.
//!
//! The unit of privacy is one evaluation of one member, added or removed.
//! A member's whole history of k evaluations is covered at the same noise
//! with k times the sensitivity (group privacy), reported by
//! [`PrivateReleases::history_epsilon`].
//!
//! The noise is drawn from each member's own randomness (its private seed),
//! never from public streams: a seeded run over HE equals its `PlainSum` run
//! (the shares are exact multiples of the grid, which the codec encodes
//! exactly).

use crate::AlgorithmError;
use fedhe_dp::distributed::{calibrate, mechanism_for, DistributedGaussian, ReleaseShape};
use fedhe_dp::{PrivacyBudget, PrivacyBudgetParams, PrivacyLedger};
use fedhe_ring::Csprng;
use serde::{Deserialize, Serialize};

/// The finest grid a member's noisy share may use: the two-limb codec's
/// coarse limb (`fedhe_crypto`'s 2^−24 split) and every one-limb codec at the
/// default parameter sets encode multiples of it exactly.
pub const FINEST_GRID: f64 = 1.0 / 16_777_216.0; // 2^-24

/// Standard deviations of a member's share that stay inside the channel's
/// bound: a share beyond `bound / 2` (half for the value itself) is refused
/// by the channel, and N_ℤ(0, σ²) exceeds 12σ with probability below 2^−100.
const SHARE_TAIL: f64 = 12.0;

/// A study's output-privacy setting (the signed spec carries it).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "mode", deny_unknown_fields)]
pub enum Privacy {
    /// Sums are released without noise. Only for simulations, baselines and
    /// the measurements of the attack suite: it protects no member's data
    /// from the others. Labelled `noise-free` wherever a study is shown.
    #[default]
    NoiseFree,
    /// Every release carries distributed discrete Gaussian noise sized so
    /// that the whole study costs each member at most `epsilon` at `delta`
    /// for one of its evaluations.
    Dp(DpSettings),
}

/// The settings of [`Privacy::Dp`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpSettings {
    /// ε per member for the whole study (one evaluation's).
    pub epsilon: f64,
    /// δ ∈ (0, 1).
    #[serde(default = "default_delta")]
    pub delta: f64,
    /// The fewest members whose contributions a release may sum (each
    /// member's noise share is sized for it; default: every member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<usize>,
    /// The L2 bound of one evaluation's term of a released summary, in units
    /// of one evaluation at a support point (see the algorithm's docs).
    #[serde(default = "default_clip")]
    pub clip: f64,
}

fn default_delta() -> f64 {
    1e-6
}

fn default_clip() -> f64 {
    1.0
}

impl Privacy {
    /// Whether the study releases noise-free sums.
    pub fn is_noise_free(&self) -> bool {
        matches!(self, Privacy::NoiseFree)
    }

    /// A short label for logs, specs and reports: `noise-free` or
    /// `ε = 4 (δ = 1e-6)`.
    pub fn label(&self) -> String {
        match self {
            Privacy::NoiseFree => "noise-free".to_string(),
            Privacy::Dp(d) => format!("ε = {} (δ = {:e}) per member", d.epsilon, d.delta),
        }
    }

    /// Checks the budget (`privacy.epsilon`, `privacy.delta`), the clip and
    /// the quorum (at least 1, at most `members`); the error names the field.
    pub fn validate(&self, members: usize) -> Result<Option<ValidDp>, AlgorithmError> {
        let Privacy::Dp(d) = self else {
            return Ok(None);
        };
        let budget = PrivacyBudgetParams {
            epsilon: d.epsilon,
            delta: d.delta,
        }
        .validate()
        .map_err(|e| crate::error::config("privacy", e.to_string()))?;
        if !(d.clip > 0.0 && d.clip.is_finite()) {
            return Err(crate::error::config(
                "privacy.clip",
                format!("must be positive and finite, got {}", d.clip),
            ));
        }
        let quorum = d.quorum.unwrap_or(members);
        if quorum < 1 || quorum > members {
            return Err(crate::error::config(
                "privacy.quorum",
                format!("must be in [1, {members}] (the members), got {quorum}"),
            ));
        }
        Ok(Some(ValidDp {
            budget,
            quorum,
            clip: d.clip,
        }))
    }
}

/// A validated [`DpSettings`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidDp {
    /// The budget.
    pub budget: PrivacyBudget,
    /// The quorum every member's share is sized for.
    pub quorum: usize,
    /// The clip of a summary term, in units of one evaluation at a support point.
    pub clip: f64,
}

impl ValidDp {
    /// The noise multiplier z that spends at most the budget over `plan`
    /// (every release's σ = z·Δ₂), with shares inside the channel's `bound`.
    /// Refuses, naming `privacy.epsilon`, a budget the plan cannot meet.
    pub fn noise_multiplier(
        &self,
        plan: &[(ReleaseShape, u64)],
        bound: f64,
    ) -> Result<f64, AlgorithmError> {
        // A share's standard deviation is z·Δ₂/√T; it must stay below
        // bound / (2·SHARE_TAIL) for the largest Δ₂ of the plan.
        let largest = plan
            .iter()
            .map(|(r, _)| r.l2_sensitivity)
            .fold(0.0f64, f64::max);
        let max_z = bound / (2.0 * SHARE_TAIL) * (self.quorum as f64).sqrt() / largest.max(1e-300);
        calibrate(&self.budget, plan, self.quorum, FINEST_GRID, max_z).map_err(|e| match e {
            fedhe_dp::DpError::InvalidParameter {
                name: "epsilon", ..
            } => crate::error::config(
                "privacy.epsilon",
                format!(
                    "ε = {} at δ = {:e} cannot be met by the study's {} releases with noise the \
                     channel's bound {bound} can carry: raise epsilon, shorten the study or \
                     raise channel_bound",
                    self.budget.epsilon(),
                    self.budget.delta(),
                    plan.iter().map(|(_, c)| c).sum::<u64>()
                ),
            ),
            other => other.into(),
        })
    }
}

/// A run's private releases: the calibrated noise multiplier, each local
/// member's noise generator, and the ledger of what has been released.
pub struct PrivateReleases {
    dp: ValidDp,
    z: f64,
    /// One generator per local member, in the order of the run's clients.
    noise: Vec<Csprng>,
    ledger: PrivacyLedger,
    /// The ledger of a member's whole history (sensitivity × its cap of evaluations).
    history: PrivacyLedger,
    history_factor: f64,
}

impl PrivateReleases {
    /// For `dp` at noise multiplier `z`, with one noise seed per local
    /// member (from its private randomness) and `max_points`, the public cap
    /// on one member's evaluations.
    pub fn new(dp: ValidDp, z: f64, seeds: Vec<[u8; 32]>, max_points: f64) -> Self {
        let noise = seeds
            .iter()
            .map(|s| {
                let mut seed = [0u8; fedhe_ring::SEED_BYTES];
                let n = seed.len().min(s.len());
                seed[..n].copy_from_slice(&s[..n]);
                Csprng::from_seed(&seed, *b"dp-share")
            })
            .collect();
        Self {
            dp,
            z,
            noise,
            ledger: PrivacyLedger::new(),
            history: PrivacyLedger::new(),
            history_factor: max_points.max(1.0),
        }
    }

    /// The noise multiplier.
    pub fn noise_multiplier(&self) -> f64 {
        self.z
    }

    /// The mechanism of a release of shape `release`.
    pub fn mechanism(&self, release: &ReleaseShape) -> Result<DistributedGaussian, AlgorithmError> {
        Ok(mechanism_for(self.z, release, self.dp.quorum, FINEST_GRID)?)
    }

    /// Local member `position`'s noisy share of `values` for a release of
    /// `l2_sensitivity` (its terms already clipped to it).
    pub fn share(
        &mut self,
        position: usize,
        l2_sensitivity: f64,
        values: &[f64],
    ) -> Result<Vec<f64>, AlgorithmError> {
        let release = ReleaseShape {
            dim: values.len(),
            l2_sensitivity,
        };
        let mech = self.mechanism(&release)?;
        let rng = self.noise.get_mut(position).ok_or_else(|| {
            crate::error::config(
                "privacy",
                format!("no noise generator for member {position}"),
            )
        })?;
        Ok(mech.member_share(rng, values)?)
    }

    /// Records one release (once per release, whoever contributed: at the
    /// quorum, the fewest contributors, which bounds the loss of any larger sum).
    pub fn record(&mut self, dim: usize, l2_sensitivity: f64) -> Result<(), AlgorithmError> {
        let release = ReleaseShape {
            dim,
            l2_sensitivity,
        };
        let mech = self.mechanism(&release)?;
        self.ledger.record(&mech, &release, self.dp.quorum)?;
        let whole = ReleaseShape {
            dim,
            l2_sensitivity: l2_sensitivity * self.history_factor,
        };
        self.history.record(&mech, &whole, self.dp.quorum)?;
        Ok(())
    }

    /// ε spent so far at the study's δ (one evaluation of one member).
    pub fn epsilon(&self) -> Result<f64, AlgorithmError> {
        Ok(self.ledger.epsilon(self.dp.budget.delta())?.epsilon)
    }

    /// ε spent so far for a member's whole history at the study's δ.
    pub fn history_epsilon(&self) -> Result<f64, AlgorithmError> {
        Ok(self.history.epsilon(self.dp.budget.delta())?.epsilon)
    }

    /// Releases recorded.
    pub fn releases(&self) -> u64 {
        self.ledger.releases()
    }

    /// The validated settings.
    pub fn settings(&self) -> &ValidDp {
        &self.dp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dp(epsilon: f64, delta: f64) -> Privacy {
        Privacy::Dp(DpSettings {
            epsilon,
            delta,
            quorum: None,
            clip: 1.0,
        })
    }

    #[test]
    fn settings_parse_and_refuse_bad_budgets_by_name() {
        #[derive(Deserialize)]
        struct S {
            privacy: Privacy,
        }
        let s: S = serde_json::from_str(r#"{"privacy": {"mode": "dp", "epsilon": 4.0}}"#).unwrap();
        assert_eq!(s.privacy, dp(4.0, 1e-6));
        let s: S = serde_json::from_str(r#"{"privacy": {"mode": "noise-free"}}"#).unwrap();
        assert!(s.privacy.is_noise_free());
        assert_eq!(s.privacy.label(), "noise-free");
        assert!(serde_json::from_str::<S>(r#"{"privacy": {"mode": "dp", "eps": 4.0}}"#).is_err());
        for (p, field) in [
            (dp(0.0, 1e-6), "epsilon"),
            (dp(-2.0, 1e-6), "epsilon"),
            (dp(f64::NAN, 1e-6), "epsilon"),
            (dp(4.0, 0.0), "delta"),
            (dp(4.0, 1.0), "delta"),
        ] {
            let e = p.validate(3).unwrap_err().to_string();
            assert!(e.contains(field), "{p:?}: {e}");
        }
        let Privacy::Dp(d) = dp(4.0, 1e-6) else {
            unreachable!()
        };
        for (p, field) in [
            (Privacy::Dp(DpSettings { clip: 0.0, ..d }), "privacy.clip"),
            (
                Privacy::Dp(DpSettings {
                    quorum: Some(0),
                    ..d
                }),
                "privacy.quorum",
            ),
            (
                Privacy::Dp(DpSettings {
                    quorum: Some(4),
                    ..d
                }),
                "privacy.quorum",
            ),
        ] {
            let e = p.validate(3).unwrap_err().to_string();
            assert!(e.contains(field), "{p:?}: {e}");
        }
        assert_eq!(dp(4.0, 1e-6).validate(3).unwrap().unwrap().quorum, 3);
    }

    #[test]
    fn a_budget_the_channel_cannot_carry_is_refused_naming_epsilon() {
        let v = dp(0.01, 1e-9).validate(3).unwrap().unwrap();
        let plan = [(
            ReleaseShape {
                dim: 152,
                l2_sensitivity: 1.0,
            },
            1000,
        )];
        let e = v.noise_multiplier(&plan, 8.0).unwrap_err().to_string();
        assert!(e.contains("privacy.epsilon"), "{e}");
        let z = dp(4.0, 1e-6)
            .validate(3)
            .unwrap()
            .unwrap()
            .noise_multiplier(&plan[..], 1024.0)
            .unwrap();
        assert!(z > 1.0, "{z}");
    }

    #[test]
    fn shares_are_private_to_their_member_and_the_ledger_spends_what_was_planned() {
        let v = dp(4.0, 1e-6).validate(2).unwrap().unwrap();
        let shape = ReleaseShape {
            dim: 3,
            l2_sensitivity: 0.5,
        };
        let z = v.noise_multiplier(&[(shape, 10)], 1024.0).unwrap();
        let mut r = PrivateReleases::new(v, z, vec![[1; 32], [2; 32]], 20.0);
        let a = r.share(0, 0.5, &[0.1, 0.2, 0.3]).unwrap();
        let b = r.share(1, 0.5, &[0.1, 0.2, 0.3]).unwrap();
        assert_ne!(a, b, "two members draw different noise");
        let mut again = PrivateReleases::new(v, z, vec![[1; 32], [2; 32]], 20.0);
        assert_eq!(again.share(0, 0.5, &[0.1, 0.2, 0.3]).unwrap(), a);
        for _ in 0..10 {
            r.record(3, 0.5).unwrap();
        }
        let spent = r.epsilon().unwrap();
        assert!(spent <= 4.0 && spent > 3.99, "{spent}");
        // Twenty evaluations: about twenty times the loss of one (ε grows
        // about linearly with the sensitivity at this budget).
        assert!(r.history_epsilon().unwrap() > 10.0 * spent);
        assert!(r.share(2, 0.5, &[0.0]).is_err());
        // Each share carries its member's part of the noise: σ·/√T with
        // σ = z·Δ₂ at the quorum T = 2 (within 5 % over 4,000 draws).
        let draws = r.share(1, 0.5, &[0.0; 4000]).unwrap();
        let sd = (draws.iter().map(|v| v * v).sum::<f64>() / draws.len() as f64).sqrt();
        let expected = z * 0.5 / 2f64.sqrt();
        assert!((sd / expected - 1.0).abs() < 0.05, "{sd} vs {expected}");
    }
}
