//! Output privacy: what a study's secure sums may release.
//!
//! The channel keeps every contribution secret, but the decrypted sums are
//! released to every member, and from noise-free sums a member can
//! reconstruct the others' evaluations (`fedhe-attacks`). A private study
//! ([`Privacy::Dp`]) therefore makes every release a distributed discrete
//! Gaussian mechanism ([`fedhe_dp::distributed`]): each member clips its
//! whole contribution to the released statistic to a public L2 bound, adds
//! its own share of integer noise on a public grid **before encryption**, and
//! the sum carries the noise that the study's budget needs. A
//! [`fedhe_dp::PrivacyLedger`] composes every release of the run, refuses one
//! that would exceed the budget before it is made, and reports ε at the
//! study's δ.
//!
//! **The unit of privacy is one member: its whole data** (every evaluation
//! it makes, replaced by any other; the sensitivity is twice the clip).
//! Evaluation-level privacy would not hold: a member chooses its later
//! points from its own earlier values, so one changed evaluation changes
//! every later term of its contributions. A member-level guarantee covers
//! that adaptivity (each release is a function of the member's whole data,
//! clipped), as user-level DP does in federated learning (McMahan et al.
//! 2018).
//!
//! **Who is kept out**: the server and up to `colluders` members pooling
//! their own noise shares. Each member's share is sized so that the shares
//! of the `quorum − colluders` members none of them knows already carry the
//! noise the budget needs; the ledger accounts at that many contributors.
//!
//! The noise is drawn from each member's own randomness (its private seed):
//! a seeded run over HE equals its `PlainSum` run (the shares are exact
//! multiples of the grid, which the codec encodes exactly).

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
    /// The fewest members whose contributions a release may sum (default:
    /// every member); the study's `min_contributors` may not be lower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<usize>,
    /// How many members may pool their own noise shares against another
    /// (default 1: the curious member itself); below the quorum.
    #[serde(default = "default_colluders")]
    pub colluders: usize,
    /// The L2 bound of one member's contribution to a released summary,
    /// relative to a public reference (see the algorithm's docs).
    #[serde(default = "default_clip")]
    pub clip: f64,
}

fn default_colluders() -> usize {
    1
}

fn default_delta() -> f64 {
    1e-6
}

fn default_clip() -> f64 {
    2.0
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
            Privacy::Dp(d) => format!(
                "ε = {} (δ = {:e}) per member, its whole data",
                d.epsilon, d.delta
            ),
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
        if d.colluders >= quorum {
            return Err(crate::error::config(
                "privacy.colluders",
                format!(
                    "must be below the quorum {quorum}: {} colluders would know every share of a sum",
                    d.colluders
                ),
            ));
        }
        Ok(Some(ValidDp {
            budget,
            quorum,
            colluders: d.colluders,
            clip: d.clip,
        }))
    }
}

/// The most a private method's largest releases can carry, from public
/// settings alone, before anything runs (FBO-FedGP's global summaries:
/// `fbo_fedgp::private::signal_ceiling`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignalCeiling {
    /// The noise multiplier `z` the budget gives the study's releases.
    pub noise_multiplier: f64,
    /// How many such releases the study makes.
    pub releases: usize,
    /// The values of the first (smallest) of them.
    pub values: usize,
    /// The largest ratio of a release's signal to its noise, both as L2
    /// norms, over the sum of every member's clipped contribution.
    pub ratio: f64,
    /// The members a ratio of 1 needs at the same noise and size.
    pub members_for_one: usize,
}

/// A validated [`DpSettings`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidDp {
    /// The budget.
    pub budget: PrivacyBudget,
    /// The fewest contributors of a release.
    pub quorum: usize,
    /// Members that may pool their noise shares.
    pub colluders: usize,
    /// The relative clip of a member's summary.
    pub clip: f64,
}

/// The calibration's margin below the budget: a release's RDP depends on
/// its grid (rounding), which the plan knows up to a relative ~1e-4.
const CALIBRATION_MARGIN: f64 = 1e-3;

impl ValidDp {
    /// The contributors whose noise nobody the guarantee keeps out knows:
    /// `quorum − colluders`, at least 1.
    pub fn unknown_shares(&self) -> usize {
        self.quorum.saturating_sub(self.colluders).max(1)
    }

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
        let shares = self.unknown_shares();
        let max_z = bound / (2.0 * SHARE_TAIL) * (shares as f64).sqrt() / largest.max(1e-300);
        let target = PrivacyBudgetParams {
            epsilon: self.budget.epsilon() * (1.0 - CALIBRATION_MARGIN),
            delta: self.budget.delta(),
        }
        .validate()?;
        calibrate(&target, plan, shares, FINEST_GRID, max_z).map_err(|e| match e {
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
}

impl PrivateReleases {
    /// For `dp` at noise multiplier `z`, with one noise seed per local
    /// member (from its private randomness).
    pub fn new(dp: ValidDp, z: f64, seeds: Vec<[u8; 32]>) -> Self {
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
        }
    }

    /// The noise multiplier.
    pub fn noise_multiplier(&self) -> f64 {
        self.z
    }

    /// The mechanism of a release of shape `release`.
    pub fn mechanism(&self, release: &ReleaseShape) -> Result<DistributedGaussian, AlgorithmError> {
        Ok(mechanism_for(
            self.z,
            release,
            self.dp.unknown_shares(),
            FINEST_GRID,
        )?)
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

    /// Spends one release of `dim` values at `l2_sensitivity` before it is
    /// made (once per release, whoever contributes: at the contributors no
    /// adversary knows, which bounds the loss of any larger sum). Refuses,
    /// naming `privacy.epsilon` and spending nothing, a release that would
    /// take the study past its budget.
    pub fn spend(&mut self, dim: usize, l2_sensitivity: f64) -> Result<(), AlgorithmError> {
        let release = ReleaseShape {
            dim,
            l2_sensitivity,
        };
        let mech = self.mechanism(&release)?;
        let mut after = self.ledger.clone();
        after.record(&mech, &release, self.dp.unknown_shares())?;
        let spent = after.epsilon(self.dp.budget.delta())?.epsilon;
        if spent > self.dp.budget.epsilon() {
            return Err(crate::error::config(
                "privacy.epsilon",
                format!(
                    "release {} would spend ε = {spent} of the study's {}: refused before it is made",
                    self.ledger.releases() + 1,
                    self.dp.budget.epsilon()
                ),
            ));
        }
        self.ledger = after;
        Ok(())
    }

    /// ε spent so far at the study's δ (one member, its whole data).
    pub fn epsilon(&self) -> Result<f64, AlgorithmError> {
        Ok(self.ledger.epsilon(self.dp.budget.delta())?.epsilon)
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
            colluders: 1,
            clip: 2.0,
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
        let unknown = r#"{"privacy": {"mode": "dp", "epsilon": 4.0, "eps": 4.0}}"#;
        assert!(serde_json::from_str::<S>(unknown).is_err());
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
            (
                Privacy::Dp(DpSettings { colluders: 3, ..d }),
                "privacy.colluders",
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
        let mut r = PrivateReleases::new(v, z, vec![[1; 32], [2; 32]]);
        let a = r.share(0, 0.5, &[0.1, 0.2, 0.3]).unwrap();
        let b = r.share(1, 0.5, &[0.1, 0.2, 0.3]).unwrap();
        assert_ne!(a, b, "two members draw different noise");
        let mut again = PrivateReleases::new(v, z, vec![[1; 32], [2; 32]]);
        assert_eq!(again.share(0, 0.5, &[0.1, 0.2, 0.3]).unwrap(), a);
        for _ in 0..10 {
            r.spend(3, 0.5).unwrap();
        }
        let spent = r.epsilon().unwrap();
        assert!(spent <= 4.0 && spent > 3.99, "{spent}");
        // An eleventh release would exceed the budget: refused, nothing spent.
        let e = r.spend(3, 0.5).unwrap_err().to_string();
        assert!(e.contains("privacy.epsilon"), "{e}");
        assert_eq!(r.releases(), 10);
        assert_eq!(r.epsilon().unwrap(), spent);
        assert!(r.share(2, 0.5, &[0.0]).is_err());
        // With a quorum of 2 and one colluder, the other member's share alone
        // carries the whole noise σ = z·Δ₂ (within 5 % over 4,000 draws).
        let draws = r.share(1, 0.5, &[0.0; 4000]).unwrap();
        let sd = (draws.iter().map(|v| v * v).sum::<f64>() / draws.len() as f64).sqrt();
        let expected = z * 0.5;
        assert!((sd / expected - 1.0).abs() < 0.05, "{sd} vs {expected}");
    }
}
