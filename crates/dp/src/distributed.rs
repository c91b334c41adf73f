//! The distributed discrete Gaussian: differential privacy for a secure sum.
//!
//! Kairouz, Liu, Steinke 2021, "The distributed discrete Gaussian mechanism
//! for federated learning with secure aggregation" (ICML, arXiv:2102.06387).
//! Every contributor of a secure sum adds its own share of integer noise to
//! its integer contribution *before encryption*; only the sum is ever
//! decrypted, so the release carries the noise of every contributor and no
//! single party (the server included) ever sees a value with less.
//!
//! # The mechanism
//!
//! On a public grid γ (a power of two, no finer than the channel's codec so
//! that every share encodes exactly), member i sends
//!
//! `γ·(round(x_i/γ) + Y_i)`,  `Y_i ~ N_ℤ(0, σ_m²)^d` independently,
//!
//! with the member variance `σ_m² = ⌈σ²/(γ²·T)⌉` (grid units, rounded up:
//! never less noise than asked) for the release's standard deviation σ and the
//! study's quorum T, the fewest members whose contributions a release sums.
//! A sum over n ≥ T contributors carries at least the noise asked for, even
//! when n − T members have dropped out. The samplers are exact
//! ([`crate::sampling::discrete_gaussian`]).
//!
//! # Its privacy (Prop. 14 of Kairouz et al. 2021)
//!
//! A sum of n independent `N_ℤ(0, σ_m²)^d` hides an integer query of L2
//! sensitivity Δ₂ and L1 sensitivity Δ₁ with (α, ε(α))-RDP for every α > 1,
//!
//! `ε(α) = min{ α/2·Δ̄₂² + τd,  α/2·(Δ̄₂² + 2Δ̄₁τ + τ²d),  α/2·(Δ̄₂ + √d·τ)² }`,
//!
//! where `Δ̄ₚ = Δₚ/(√n·σ_m)` and `τ = 10·Σ_{k=1}^{n−1} exp(−2π²σ_m²·k/(k+1))`.
//! τ measures how far the sum is from one discrete Gaussian; at the
//! variances used here (σ_m ≥ 2^10 grid units) it underflows to 0 and ε(α)
//! is the Gaussian mechanism's α·Δ̄₂²/2.
//!
//! Rounding each coordinate to the grid moves it by at most γ/2, so a
//! change of Δ₂ in a member's real-valued contribution changes its integers
//! by at most `Δ₂/γ + √d` in L2 and `√d·Δ₂/γ + d` in L1
//! ([`DistributedGaussian::grid_sensitivity`]); those are the sensitivities
//! accounted.
//!
//! # Unit of privacy
//!
//! The unit is one evaluation of one member, added or removed (dp-accounting's
//! `ADD_OR_REMOVE_ONE`); the released statistics clip each evaluation's term
//! to a public bound, which is Δ₂. A member's whole history of k evaluations
//! changes its contribution by at most k·Δ₂ (group privacy; the same
//! accounting at k·Δ₂).

use crate::accountant::{dp_accounting_default_orders, epsilon_improved, validate_delta};
use crate::sampling::discrete_gaussian;
use crate::{DpError, PrivacyLoss};
use fedhe_ring::Csprng;

/// Shares must satisfy |X + Y| < 2^52 so that γ·(X + Y) stays exact in f64.
const MAX_GRID_VALUE: f64 = 4_503_599_627_370_496.0; // 2^52

/// The largest member variance in grid units: keeps the exact sampler's
/// intermediate products inside u128 ([`discrete_gaussian`]).
const MAX_MEMBER_VARIANCE: f64 = 4_398_046_511_104.0; // 2^42

/// Parameters of the distributed discrete Gaussian, before validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistributedGaussianParams {
    /// Standard deviation σ > 0 of the noise on the released sum, in value
    /// units, when exactly `quorum` members contribute.
    pub std_dev: f64,
    /// The fewest contributors a release may have (≥ 1): the study's quorum.
    pub quorum: usize,
    /// The grid γ: a positive power of two, the value of one integer unit.
    pub grid: f64,
}

impl DistributedGaussianParams {
    /// Checks σ > 0 (finite), quorum ≥ 1, γ a positive power of two, and a
    /// member variance σ²/(γ²T) within [1, 2^42] grid units (σ no finer than
    /// the grid); errors name `sigma`, `quorum`, `grid`.
    pub fn validate(self) -> Result<DistributedGaussian, DpError> {
        let sigma = self.std_dev;
        if !(sigma > 0.0 && sigma.is_finite()) {
            return Err(DpError::invalid(
                "sigma (noise standard deviation)",
                sigma,
                "positive and finite",
            ));
        }
        if self.quorum == 0 {
            return Err(DpError::invalid(
                "quorum (fewest contributors)",
                0.0,
                "at least 1",
            ));
        }
        let grid = self.grid;
        let power_of_two = grid > 0.0
            && grid.is_finite()
            && grid.is_normal()
            && grid.to_bits() & ((1u64 << 52) - 1) == 0;
        if !power_of_two {
            return Err(DpError::invalid(
                "grid",
                grid,
                "a positive (normal) power of two",
            ));
        }
        let asked = (sigma / grid).powi(2) / self.quorum as f64;
        let variance = asked.ceil();
        if !(1.0..=MAX_MEMBER_VARIANCE).contains(&asked) || variance > MAX_MEMBER_VARIANCE {
            return Err(DpError::invalid(
                "sigma (noise standard deviation)",
                sigma,
                "such that each member's share sigma^2/(grid^2 quorum) is in [1, 2^42] grid units",
            ));
        }
        Ok(DistributedGaussian {
            std_dev: sigma,
            quorum: self.quorum,
            grid,
            member_variance: variance as u128,
        })
    }
}

/// A validated distributed discrete Gaussian (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct DistributedGaussian {
    std_dev: f64,
    quorum: usize,
    grid: f64,
    /// σ_m² in grid units, an integer in [1, 2^42].
    member_variance: u128,
}

impl DistributedGaussian {
    /// The grid `2^(⌊log2 σ_m⌋ − 20)` for a member standard deviation σ_m
    /// (so σ_m/γ ∈ [2^20, 2^21)), but never finer than `finest` (the channel's
    /// resolution, a power of two).
    pub fn grid_for(member_std_dev: f64, finest: f64) -> f64 {
        if !(member_std_dev > 0.0 && member_std_dev.is_finite()) {
            return finest;
        }
        let exp = member_std_dev.log2().floor() as i32 - crate::mechanism::GRID_BITS;
        2f64.powi(exp).max(finest)
    }

    /// The mechanism whose members each add `N_ℤ(0, member_variance)` on
    /// `grid` (as a signed spec states it: integers, so every member draws
    /// alike); its σ at the quorum is γ·√(T·σ_m²). Errors name `grid`,
    /// `quorum`, `member_variance`.
    pub fn from_member_variance(
        member_variance: u128,
        quorum: usize,
        grid: f64,
    ) -> Result<Self, DpError> {
        if !(1..=MAX_MEMBER_VARIANCE as u128).contains(&member_variance) {
            return Err(DpError::invalid(
                "member_variance",
                member_variance as f64,
                "in [1, 2^42] grid units",
            ));
        }
        let std_dev = grid * (quorum as f64 * member_variance as f64).sqrt();
        let checked = DistributedGaussianParams {
            std_dev: if std_dev > 0.0 { std_dev } else { f64::NAN },
            quorum,
            grid,
        }
        .validate();
        // The grid and quorum checks are validate's; the variance is exact.
        match checked {
            Err(DpError::InvalidParameter { name, .. }) if name.starts_with("sigma") => {}
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        Ok(Self {
            std_dev,
            quorum,
            grid,
            member_variance,
        })
    }

    /// The release's standard deviation σ at the quorum.
    pub fn std_dev(&self) -> f64 {
        self.std_dev
    }

    /// The quorum T.
    pub fn quorum(&self) -> usize {
        self.quorum
    }

    /// The grid γ.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// Each member's variance σ_m² in grid units.
    pub fn member_variance(&self) -> u128 {
        self.member_variance
    }

    /// The standard deviation of a sum over `contributors` members, in value
    /// units: γ·√(n·σ_m²) (≥ σ when n ≥ T).
    pub fn sum_std_dev(&self, contributors: usize) -> f64 {
        self.grid * (contributors as f64 * self.member_variance as f64).sqrt()
    }

    /// A member's share of the release: `γ·(round(x/γ) + Y)` with
    /// `Y ~ N_ℤ(0, σ_m²)^d` drawn from the member's own `rng`. Refuses a
    /// non-finite input, or one whose share would leave f64's exact integers
    /// (the error names the coordinate).
    pub fn member_share(&self, rng: &mut Csprng, x: &[f64]) -> Result<Vec<f64>, DpError> {
        let limit = MAX_GRID_VALUE / 2.0;
        x.iter()
            .enumerate()
            .map(|(index, &v)| {
                if !v.is_finite() {
                    return Err(DpError::NonFiniteInput { index });
                }
                let g = (v / self.grid).round();
                if g.abs() >= limit {
                    return Err(DpError::InputOutOfRange {
                        index,
                        limit: limit * self.grid,
                    });
                }
                let y = discrete_gaussian(rng, self.member_variance, 1) as f64;
                let share = g + y;
                if share.abs() >= MAX_GRID_VALUE {
                    return Err(DpError::InputOutOfRange {
                        index,
                        limit: limit * self.grid,
                    });
                }
                Ok(share * self.grid)
            })
            .collect()
    }

    /// The L2 and L1 sensitivities in grid units of a `dim`-coordinate
    /// contribution whose real-valued L2 sensitivity is `l2_sensitivity`:
    /// `(Δ₂/γ + √d, √d·Δ₂/γ + d)` (rounding, module docs).
    pub fn grid_sensitivity(&self, l2_sensitivity: f64, dim: usize) -> (f64, f64) {
        let d = dim as f64;
        let l2 = l2_sensitivity / self.grid;
        (l2 + d.sqrt(), d.sqrt() * l2 + d)
    }

    /// One release's RDP ε(α) at each of `orders` for a `dim`-coordinate sum
    /// over `contributors` members of real L2 sensitivity `l2_sensitivity`
    /// (Prop. 14 of Kairouz et al. 2021, module docs).
    pub fn rdp(
        &self,
        release: &ReleaseShape,
        contributors: usize,
        orders: &[f64],
    ) -> Result<Vec<f64>, DpError> {
        if contributors < self.quorum {
            return Err(DpError::invalid(
                "contributors",
                contributors as f64,
                "at least the mechanism's quorum",
            ));
        }
        let (l2, l1) = self.grid_sensitivity(release.l2_sensitivity, release.dim);
        Ok(ddg_rdp(
            self.member_variance as f64,
            contributors,
            l2,
            l1,
            release.dim,
            orders,
        ))
    }
}

/// Prop. 14 of Kairouz et al. 2021 for n independent `N_ℤ(0, σ_m²)^d`
/// (grid units): the RDP at each order of a query of L2 sensitivity `l2` and
/// L1 sensitivity `l1` (grid units).
pub fn ddg_rdp(
    member_variance: f64,
    contributors: usize,
    l2: f64,
    l1: f64,
    dim: usize,
    orders: &[f64],
) -> Vec<f64> {
    let n = contributors as f64;
    let scale = (n * member_variance).sqrt();
    let (l2s, l1s) = (l2 / scale, l1 / scale);
    let d = dim as f64;
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    let tau = 10.0
        * (1..contributors)
            .map(|k| {
                let k = k as f64;
                (-2.0 * pi2 * member_variance * k / (k + 1.0)).exp()
            })
            .sum::<f64>();
    orders
        .iter()
        .map(|&a| {
            let t1 = a / 2.0 * l2s * l2s + tau * d;
            let t2 = a / 2.0 * (l2s * l2s + 2.0 * l1s * tau + tau * tau * d);
            let t3 = a / 2.0 * (l2s + d.sqrt() * tau).powi(2);
            t1.min(t2).min(t3)
        })
        .collect()
}

/// What one release sums: its length and the L2 sensitivity of one member's
/// contribution to one unit of privacy (in value units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReleaseShape {
    /// Coordinates summed.
    pub dim: usize,
    /// The L2 norm by which one evaluation can change a member's contribution.
    pub l2_sensitivity: f64,
}

/// A privacy budget (ε, δ), before validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivacyBudgetParams {
    /// ε > 0 for the whole study, per member.
    pub epsilon: f64,
    /// δ ∈ (0, 1).
    pub delta: f64,
}

impl PrivacyBudgetParams {
    /// Checks ε > 0 (finite) and δ ∈ (0, 1); errors name `epsilon`, `delta`.
    pub fn validate(self) -> Result<PrivacyBudget, DpError> {
        if !(self.epsilon > 0.0 && self.epsilon.is_finite()) {
            return Err(DpError::invalid(
                "epsilon",
                self.epsilon,
                "positive and finite",
            ));
        }
        let delta = validate_delta(self.delta)?;
        Ok(PrivacyBudget {
            epsilon: self.epsilon,
            delta,
        })
    }
}

/// A validated privacy budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivacyBudget {
    epsilon: f64,
    delta: f64,
}

impl PrivacyBudget {
    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }
}

/// The privacy loss of a study so far: the RDP of every release composed
/// (RDP adds up, Mironov 2017 Prop. 1) at dp-accounting's default orders,
/// converted to (ε, δ) as dp-accounting's `compute_epsilon`.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivacyLedger {
    orders: Vec<f64>,
    rdp: Vec<f64>,
    releases: u64,
}

impl Default for PrivacyLedger {
    fn default() -> Self {
        Self::new()
    }
}

impl PrivacyLedger {
    /// A ledger with nothing released.
    pub fn new() -> Self {
        let orders = dp_accounting_default_orders();
        let rdp = vec![0.0; orders.len()];
        Self {
            orders,
            rdp,
            releases: 0,
        }
    }

    /// Records one release of `mechanism` over `contributors` members.
    pub fn record(
        &mut self,
        mechanism: &DistributedGaussian,
        release: &ReleaseShape,
        contributors: usize,
    ) -> Result<(), DpError> {
        let step = mechanism.rdp(release, contributors, &self.orders)?;
        for (total, r) in self.rdp.iter_mut().zip(step) {
            *total += r;
        }
        self.releases += 1;
        Ok(())
    }

    /// Releases recorded.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// The orders evaluated.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// The composed RDP at each order.
    pub fn rdp(&self) -> &[f64] {
        &self.rdp
    }

    /// ε at `delta` ∈ (0, 1) for everything recorded.
    pub fn epsilon(&self, delta: f64) -> Result<PrivacyLoss, DpError> {
        let delta = validate_delta(delta)?;
        Ok(epsilon_improved(&self.orders, &self.rdp, delta))
    }
}

/// The smallest noise multiplier z (each release's σ = z·Δ₂ of that release,
/// so every release costs the same) for which `plan` — `(release, count)`
/// pairs, every release over exactly `quorum` contributors — stays within
/// `budget`, found by bisection to a relative 1e-9 on z, and the mechanism's
/// grid for each release (from [`DistributedGaussian::grid_for`] with
/// `finest`). Refuses, naming `epsilon`, a budget the plan cannot meet with
/// z ≤ `max_multiplier` (the noise the channel can carry).
pub fn calibrate(
    budget: &PrivacyBudget,
    plan: &[(ReleaseShape, u64)],
    quorum: usize,
    finest: f64,
    max_multiplier: f64,
) -> Result<f64, DpError> {
    let loss = |z: f64| -> Result<f64, DpError> {
        let mut ledger = PrivacyLedger::new();
        for (release, count) in plan {
            let mech = mechanism_for(z, release, quorum, finest)?;
            let step = mech.rdp(release, quorum, &ledger.orders)?;
            for (total, r) in ledger.rdp.iter_mut().zip(step) {
                *total += *count as f64 * r;
            }
        }
        Ok(ledger.epsilon(budget.delta)?.epsilon)
    };
    if loss(max_multiplier)? > budget.epsilon {
        return Err(DpError::invalid(
            "epsilon",
            budget.epsilon,
            "reachable by the study's releases with the noise its channel can carry",
        ));
    }
    let (mut lo, mut hi) = (0.0f64, max_multiplier);
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        if mid > 0.0 && loss(mid)? <= budget.epsilon {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The mechanism of one release at noise multiplier `z`: σ = z·Δ₂ at the
/// quorum, on the grid [`DistributedGaussian::grid_for`] gives its members.
pub fn mechanism_for(
    z: f64,
    release: &ReleaseShape,
    quorum: usize,
    finest: f64,
) -> Result<DistributedGaussian, DpError> {
    let std_dev = z * release.l2_sensitivity;
    let member = std_dev / (quorum.max(1) as f64).sqrt();
    DistributedGaussianParams {
        std_dev,
        quorum,
        grid: DistributedGaussian::grid_for(member, finest),
    }
    .validate()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mech(sigma: f64, quorum: usize, grid: f64) -> DistributedGaussian {
        DistributedGaussianParams {
            std_dev: sigma,
            quorum,
            grid,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn shares_sum_to_the_rounded_sum_plus_the_asked_noise() {
        // Five members, σ = 3 on the sum, grid 2^-10: the sum of the shares
        // less the sum of the rounded inputs has variance ≥ σ² (within 5 %).
        let m = mech(3.0, 5, 2f64.powi(-10));
        let draws = 4000;
        let (mut sum, mut sq) = (0.0, 0.0);
        for member_seed in 0..draws {
            let mut total = 0.0;
            for i in 0..5u128 {
                let mut rng = Csprng::from_u128_seed(1 + member_seed * 5 + i);
                let share = m.member_share(&mut rng, &[0.123_456_789]).unwrap()[0];
                // Every share sits on the grid.
                assert_eq!((share / m.grid()).fract(), 0.0);
                total += share - (0.123_456_789f64 / m.grid()).round() * m.grid();
            }
            sum += total;
            sq += total * total;
        }
        let mean = sum / draws as f64;
        let var = sq / draws as f64 - mean * mean;
        assert!(mean.abs() < 0.2, "mean {mean}");
        assert!((var / 9.0 - 1.0).abs() < 0.08, "variance {var} vs 9");
        assert!(m.sum_std_dev(5) >= 3.0);
        assert!(m.sum_std_dev(7) > m.sum_std_dev(5));
    }

    #[test]
    fn rdp_is_the_gaussian_one_at_wide_shares_and_grows_when_tau_matters() {
        let orders = dp_accounting_default_orders();
        // σ_m² = 2^30 grid units: τ underflows; ε(α) = α Δ̄²/2.
        let r = ddg_rdp(2f64.powi(30), 4, 2f64.powi(15), 0.0, 10, &orders);
        let l2s2 = 2f64.powi(30) / (4.0 * 2f64.powi(30));
        for (a, v) in orders.iter().zip(&r) {
            assert!((v - a / 2.0 * l2s2).abs() <= 1e-15 * v.abs(), "{a}: {v}");
        }
        // σ_m² = 0.5: τ is not negligible, the bound is larger.
        let narrow = ddg_rdp(0.5, 4, 1.0, 3.0, 10, &orders);
        let gauss = ddg_rdp(0.5, 1, 1.0 / 2.0, 0.0, 10, &orders);
        assert!(narrow.iter().zip(&gauss).all(|(n, g)| n > g));
    }

    #[test]
    fn calibration_meets_the_budget_tightly() {
        let budget = PrivacyBudgetParams {
            epsilon: 4.0,
            delta: 1e-6,
        }
        .validate()
        .unwrap();
        let plan = [
            (
                ReleaseShape {
                    dim: 152,
                    l2_sensitivity: 0.2,
                },
                20,
            ),
            (
                ReleaseShape {
                    dim: 3,
                    l2_sensitivity: 1.0,
                },
                5,
            ),
        ];
        let z = calibrate(&budget, &plan, 3, 2f64.powi(-40), 1e6).unwrap();
        let spent = |z: f64| {
            let mut ledger = PrivacyLedger::new();
            for (release, count) in &plan {
                let m = mechanism_for(z, release, 3, 2f64.powi(-40)).unwrap();
                for _ in 0..*count {
                    ledger.record(&m, release, 3).unwrap();
                }
            }
            ledger.epsilon(1e-6).unwrap().epsilon
        };
        assert!(spent(z) <= 4.0 + 1e-9, "{}", spent(z));
        assert!(spent(z * 0.999) > 4.0);
        // More contributors than the quorum: more noise, less loss.
        let m = mechanism_for(z, &plan[0].0, 3, 2f64.powi(-40)).unwrap();
        let mut few = PrivacyLedger::new();
        let mut many = PrivacyLedger::new();
        few.record(&m, &plan[0].0, 3).unwrap();
        many.record(&m, &plan[0].0, 6).unwrap();
        assert!(many.epsilon(1e-6).unwrap().epsilon < few.epsilon(1e-6).unwrap().epsilon);
        // Fewer contributors than the quorum is refused.
        assert!(few.record(&m, &plan[0].0, 2).is_err());
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let name = |e: DpError| match e {
            DpError::InvalidParameter { name, .. } => name,
            other => panic!("{other:?}"),
        };
        for (eps, delta, field) in [
            (0.0, 1e-6, "epsilon"),
            (-1.0, 1e-6, "epsilon"),
            (f64::NAN, 1e-6, "epsilon"),
            (f64::INFINITY, 1e-6, "epsilon"),
            (1.0, 0.0, "delta"),
            (1.0, 1.0, "delta"),
            (1.0, -0.5, "delta"),
        ] {
            let err = PrivacyBudgetParams {
                epsilon: eps,
                delta,
            }
            .validate()
            .unwrap_err();
            assert!(name(err).starts_with(field), "{eps} {delta}");
        }
        let ok = DistributedGaussianParams {
            std_dev: 1.0,
            quorum: 2,
            grid: 2f64.powi(-20),
        };
        assert!(ok.validate().is_ok());
        for (p, field) in [
            (DistributedGaussianParams { std_dev: 0.0, ..ok }, "sigma"),
            (DistributedGaussianParams { quorum: 0, ..ok }, "quorum"),
            (DistributedGaussianParams { grid: 0.3, ..ok }, "grid"),
            (DistributedGaussianParams { grid: -0.5, ..ok }, "grid"),
            // Noise finer than the grid.
            (
                DistributedGaussianParams {
                    std_dev: 1e-9,
                    ..ok
                },
                "sigma",
            ),
        ] {
            assert!(name(p.validate().unwrap_err()).starts_with(field), "{p:?}");
        }
        // A budget no noise the channel carries can meet.
        let budget = PrivacyBudgetParams {
            epsilon: 1e-3,
            delta: 1e-9,
        }
        .validate()
        .unwrap();
        let plan = [(
            ReleaseShape {
                dim: 10,
                l2_sensitivity: 1.0,
            },
            1000,
        )];
        let err = calibrate(&budget, &plan, 3, 2f64.powi(-30), 10.0).unwrap_err();
        assert_eq!(name(err), "epsilon");
        // A share beyond f64's exact integers.
        let m = mech(1.0, 1, 2f64.powi(-20));
        let mut rng = Csprng::from_u128_seed(9);
        assert!(matches!(
            m.member_share(&mut rng, &[0.0, 1e300]),
            Err(DpError::InputOutOfRange { index: 1, .. })
        ));
        assert!(matches!(
            m.member_share(&mut rng, &[f64::NAN]),
            Err(DpError::NonFiniteInput { index: 0 })
        ));
    }
}
