//! Privacy accounting for T compositions of the Poisson-subsampled Gaussian
//! mechanism (sampling rate q, noise multiplier z), as DP-FTS-DE (paper 000,
//! Alg. 1 line 13 and Prop. 1) runs it once per iteration.
//!
//! Two accountants share one computation — the per-step RDP curve
//! ε_RDP(α) of [`rdp`], composed over T steps as T·ε_RDP(α) (Mironov 2017,
//! Prop. 1) — and differ in orders and conversion:
//!
//! | [`AccountantKind`] | orders α | conversion to (ε, δ) |
//! | --- | --- | --- |
//! | `Moments` | 2, …, 33 (Abadi et al.'s λ = 1, …, 32) | [`epsilon_classic`]: min_α T·ε_RDP(α) + log(1/δ)/(α−1) |
//! | `Rdp` | dp-accounting's defaults, 1.1 … 1024 | [`epsilon_improved`] (dp-accounting `get_epsilon`) |
//!
//! `Moments` reproduces the privacy losses DP-FTS-DE reports (Fig. 2c/d:
//! T = 40, δ = 1/N^1.1 with N = 200); `Rdp` agrees with Google's
//! `dp-accounting` `RdpAccountant` and is never looser.

mod conversion;
pub mod rdp;

pub use conversion::{epsilon_classic, epsilon_improved};
pub use rdp::{dp_accounting_default_orders, moments_orders, rdp_poisson_subsampled_gaussian};

use crate::DpError;

/// Which orders and which RDP → (ε, δ) conversion to use (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccountantKind {
    /// Abadi et al.'s moments accountant as DP-FTS-DE uses it.
    #[default]
    Moments,
    /// dp-accounting's `RdpAccountant` with its default orders.
    Rdp,
}

impl AccountantKind {
    /// The orders this accountant evaluates.
    pub fn orders(self) -> Vec<f64> {
        match self {
            Self::Moments => moments_orders(),
            Self::Rdp => dp_accounting_default_orders(),
        }
    }
}

impl std::str::FromStr for AccountantKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "moments" => Ok(Self::Moments),
            "rdp" => Ok(Self::Rdp),
            other => Err(format!("unknown accountant {other:?} (moments | rdp)")),
        }
    }
}

/// An (ε, δ) guarantee: ε and the RDP order α that attains it (for the
/// moments accountant, the moment order is λ = α − 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrivacyLoss {
    /// The privacy loss ε.
    pub epsilon: f64,
    /// The minimising RDP order α.
    pub order: f64,
}

/// Parameters of the Poisson-subsampled Gaussian mechanism, before validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubsampledGaussianParams {
    /// Poisson sampling rate q ∈ (0, 1]: each member is in a step's batch with probability q.
    pub sampling_rate: f64,
    /// Noise multiplier z > 0: noise standard deviation over L2 sensitivity.
    pub noise_multiplier: f64,
}

impl SubsampledGaussianParams {
    /// Checks q ∈ (0, 1] and z > 0 (finite); the error names the parameter (`q`, `z`).
    pub fn validate(self) -> Result<SubsampledGaussian, DpError> {
        let q = self.sampling_rate;
        if !(q > 0.0 && q <= 1.0) {
            return Err(DpError::invalid("q (sampling rate)", q, "in (0, 1]"));
        }
        let z = self.noise_multiplier;
        if !(z > 0.0 && z.is_finite()) {
            return Err(DpError::invalid(
                "z (noise multiplier)",
                z,
                "positive and finite",
            ));
        }
        Ok(SubsampledGaussian { q, z })
    }
}

/// A validated Poisson-subsampled Gaussian mechanism: q ∈ (0, 1], z ∈ (0, ∞).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubsampledGaussian {
    q: f64,
    z: f64,
}

impl SubsampledGaussian {
    /// The sampling rate q.
    pub fn sampling_rate(&self) -> f64 {
        self.q
    }

    /// The noise multiplier z.
    pub fn noise_multiplier(&self) -> f64 {
        self.z
    }

    /// One step's RDP ε_RDP(α) at each of `orders` ([`rdp_poisson_subsampled_gaussian`]).
    pub fn rdp(&self, orders: &[f64]) -> Vec<f64> {
        orders
            .iter()
            .map(|&a| rdp_poisson_subsampled_gaussian(self.q, self.z, a))
            .collect()
    }
}

/// Checks δ ∈ (0, 1); the error names `delta`.
pub fn validate_delta(delta: f64) -> Result<f64, DpError> {
    if delta > 0.0 && delta < 1.0 {
        Ok(delta)
    } else {
        Err(DpError::invalid("delta", delta, "in (0, 1)"))
    }
}

/// A running accountant: a mechanism, its per-step RDP at the accountant's
/// orders (computed once), and the number of steps composed so far.
#[derive(Clone, Debug)]
pub struct PrivacyAccountant {
    kind: AccountantKind,
    mechanism: SubsampledGaussian,
    orders: Vec<f64>,
    step_rdp: Vec<f64>,
    steps: u64,
}

impl PrivacyAccountant {
    /// An accountant with no steps composed yet.
    pub fn new(kind: AccountantKind, mechanism: SubsampledGaussian) -> Self {
        let orders = kind.orders();
        let step_rdp = mechanism.rdp(&orders);
        Self {
            kind,
            mechanism,
            orders,
            step_rdp,
            steps: 0,
        }
    }

    /// Composes `steps` more steps (RDP adds up: T steps give T·ε_RDP(α)).
    pub fn compose(&mut self, steps: u64) {
        self.steps = self.steps.saturating_add(steps);
    }

    /// Steps composed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The accountant kind.
    pub fn kind(&self) -> AccountantKind {
        self.kind
    }

    /// The mechanism accounted for.
    pub fn mechanism(&self) -> SubsampledGaussian {
        self.mechanism
    }

    /// The composed RDP T·ε_RDP(α) at each order.
    pub fn rdp(&self) -> Vec<f64> {
        // dp-accounting composes as `count * rdp` (a float product); so do we.
        let t = self.steps as f64;
        self.step_rdp.iter().map(|r| t * r).collect()
    }

    /// The orders evaluated.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// The privacy loss after the composed steps at `delta` ∈ (0, 1) (validated).
    ///
    /// With no steps composed, `Rdp` gives ε = 0 (as dp-accounting) while
    /// `Moments` gives its bound log(1/δ)/32 at α = 33.
    pub fn epsilon(&self, delta: f64) -> Result<PrivacyLoss, DpError> {
        let delta = validate_delta(delta)?;
        let rdp = self.rdp();
        Ok(match self.kind {
            AccountantKind::Moments => epsilon_classic(&self.orders, &rdp, delta),
            AccountantKind::Rdp => epsilon_improved(&self.orders, &rdp, delta),
        })
    }
}

/// ε after `steps` steps of the Poisson-subsampled Gaussian with rate `q` and
/// noise multiplier `z`, at `delta`: validates every parameter, then runs a
/// [`PrivacyAccountant`] of the given kind.
pub fn privacy_loss(
    kind: AccountantKind,
    q: f64,
    z: f64,
    steps: u64,
    delta: f64,
) -> Result<PrivacyLoss, DpError> {
    let mechanism = SubsampledGaussianParams {
        sampling_rate: q,
        noise_multiplier: z,
    }
    .validate()?;
    let delta = validate_delta(delta)?;
    let mut accountant = PrivacyAccountant::new(kind, mechanism);
    accountant.compose(steps);
    accountant.epsilon(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DP-FTS-DE (paper 000) Fig. 2c/d: T = 40, δ = 1/200^1.1.
    #[test]
    fn moments_accountant_reproduces_dp_fts_de() {
        let delta = 200f64.powf(-1.1);
        for &(q, z, paper) in &[
            (0.15, 1.0, 5.93),
            (0.25, 1.0, 9.91),
            (0.5, 1.0, 20.12),
            (0.25, 1.2, 7.39),
            (0.25, 1.5, 5.22),
        ] {
            let loss = privacy_loss(AccountantKind::Moments, q, z, 40, delta).unwrap();
            assert_eq!(
                format!("{:.2}", loss.epsilon),
                format!("{paper:.2}"),
                "q = {q}, z = {z}: {loss:?}"
            );
        }
    }

    /// q = 1: ε_RDP(α) = T·α/(2z²) and the classic conversion has a closed form
    /// over the reals, α* = 1 + z·√(2 log(1/δ)/T); on the integer grid the
    /// minimum is at ⌊α*⌋ or ⌈α*⌉.
    #[test]
    fn full_batch_moments_matches_analytic_gaussian() {
        let (z, t, delta) = (2.0, 10u64, 1e-5);
        let loss = privacy_loss(AccountantKind::Moments, 1.0, z, t, delta).unwrap();
        let f = |a: f64| t as f64 * a / (2.0 * z * z) - delta.ln() / (a - 1.0);
        let a_star = 1.0 + z * (2.0 * -delta.ln() / t as f64).sqrt();
        let best = f(a_star.floor()).min(f(a_star.ceil()));
        assert!((loss.epsilon - best).abs() < 1e-12, "{loss:?} vs {best}");
        assert!(loss.order == a_star.floor() || loss.order == a_star.ceil());
    }

    #[test]
    fn rdp_is_never_looser_and_grows_with_steps_and_rate() {
        let delta = 1e-5;
        let m = privacy_loss(AccountantKind::Moments, 0.25, 1.0, 40, delta).unwrap();
        let r = privacy_loss(AccountantKind::Rdp, 0.25, 1.0, 40, delta).unwrap();
        assert!(r.epsilon < m.epsilon);
        let mut last = 0.0;
        for t in [1, 10, 100, 1000] {
            let e = privacy_loss(AccountantKind::Rdp, 0.01, 1.0, t, delta)
                .unwrap()
                .epsilon;
            assert!(e > last);
            last = e;
        }
        let low = privacy_loss(AccountantKind::Rdp, 0.1, 1.0, 100, delta).unwrap();
        let high = privacy_loss(AccountantKind::Rdp, 0.2, 1.0, 100, delta).unwrap();
        assert!(high.epsilon > low.epsilon);
    }

    #[test]
    fn running_accountant_equals_one_shot() {
        let mech = SubsampledGaussianParams {
            sampling_rate: 0.25,
            noise_multiplier: 1.0,
        }
        .validate()
        .unwrap();
        let mut acc = PrivacyAccountant::new(AccountantKind::Moments, mech);
        for _ in 0..40 {
            acc.compose(1);
        }
        assert_eq!(acc.steps(), 40);
        let one_shot = privacy_loss(AccountantKind::Moments, 0.25, 1.0, 40, 1e-3).unwrap();
        assert_eq!(acc.epsilon(1e-3).unwrap(), one_shot);
    }

    #[test]
    fn invalid_parameters_are_refused_by_name() {
        let cases: [(f64, f64, f64, &str); 9] = [
            (0.0, 1.0, 1e-5, "q"),
            (1.5, 1.0, 1e-5, "q"),
            (f64::NAN, 1.0, 1e-5, "q"),
            (0.5, 0.0, 1e-5, "z"),
            (0.5, -1.0, 1e-5, "z"),
            (0.5, f64::INFINITY, 1e-5, "z"),
            (0.5, 1.0, 0.0, "delta"),
            (0.5, 1.0, 1.0, "delta"),
            (0.5, 1.0, f64::NAN, "delta"),
        ];
        for (q, z, delta, name) in cases {
            let err = privacy_loss(AccountantKind::Rdp, q, z, 10, delta).unwrap_err();
            let DpError::InvalidParameter { name: got, .. } = &err else {
                panic!("{err:?}");
            };
            assert!(got.starts_with(name), "{q} {z} {delta}: {err}");
            assert!(err.to_string().starts_with(&format!("invalid {name}")));
        }
        // q = 1 is allowed.
        assert!(privacy_loss(AccountantKind::Rdp, 1.0, 1.0, 10, 1e-5).is_ok());
    }

    #[test]
    fn accountant_kind_parses() {
        assert_eq!("moments".parse(), Ok(AccountantKind::Moments));
        assert_eq!("rdp".parse(), Ok(AccountantKind::Rdp));
        assert!("pld".parse::<AccountantKind>().is_err());
    }
}
