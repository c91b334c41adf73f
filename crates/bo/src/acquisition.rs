//! Acquisition functions, in the maximisation convention: for a posterior
//! `f(x) ~ N(μ, σ²)` and incumbent `best` (the largest value seen),
//! EI = `E[max(f − best, 0)]`, PI = `P(f > best)`, UCB = `μ + √β σ`.
//!
//! Each acquisition is a function of `(μ, σ)`; [`Acquisition::value_and_grad`]
//! chains its partial derivatives with the GP's `∂μ/∂x`, `∂σ²/∂x` so the
//! optimiser can use L-BFGS.

use crate::error::invalid;
use crate::optim::{maximize, Bounds, Maximum, OptimizerConfig};
use crate::BoError;
use fedhe_gp::exact::PointPrediction;
use fedhe_gp::rff::{RandomFourierFeatures, RffPosterior};
use fedhe_gp::{ExactGp, Kernel};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use std::f64::consts::{PI, SQRT_2};

/// `log √(2π)`.
const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Standard normal density `φ(z)`.
pub fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z - LOG_SQRT_2PI).exp()
}

/// Standard normal distribution function `Φ(z) = erfc(−z/√2)/2`, accurate in
/// both tails (no `1 − …` cancellation).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / SQRT_2)
}

/// `log Φ(z)`, stable for very negative `z` through the Mills ratio.
pub fn log_normal_cdf(z: f64) -> f64 {
    if z > -5.0 {
        normal_cdf(z).ln()
    } else {
        // Φ(z) = φ(z) R(−z) with the Mills ratio R(t) = 1/(t + c(t)).
        let t = -z;
        -0.5 * z * z - LOG_SQRT_2PI - (t + mills_tail(t)).ln()
    }
}

/// `d log Φ(z)/dz = φ(z)/Φ(z)`, stable for very negative `z` (there it is
/// `t + c(t)` with `t = −z`, the reciprocal of the Mills ratio).
pub fn dlog_normal_cdf(z: f64) -> f64 {
    if z > -5.0 {
        normal_pdf(z) / normal_cdf(z)
    } else {
        let t = -z;
        t + mills_tail(t)
    }
}

/// `h(z) = φ(z) + z Φ(z)`, so that `EI = σ h((μ − best)/σ)`.
pub fn ei_standard(z: f64) -> f64 {
    normal_pdf(z) + z * normal_cdf(z)
}

/// `log h(z)`, stable for all `z`: the `log_h` of LogEI (Ament, Daulton,
/// Eriksson, Balandat & Bakshy 2023, "Unexpected improvements to expected
/// improvement for Bayesian optimization", §4.1, with `LogEI(x) = log h(z) +
/// log σ`), computed without cancellation.
///
/// Ament et al. write the tail as `−z²/2 − log √(2π) + log1mexp(log(erfcx(−z/√2)|z|) + log √(π/2))`;
/// since `erfcx(t/√2) √(π/2) = R(t)`, the Mills ratio, that is
/// `log φ(z) + log(1 − t R(t))` with `t = −z`, which is evaluated here through
/// `R(t) = 1/(t + c(t))` so that `1 − t R = c/(t + c)` needs no subtraction.
///
/// For `z < −4`, with `t = −z`, `Φ(z) = φ(z)/(t + c)` where `c = c(t)` is the
/// continued fraction of `mills_tail`; then
/// `h = φ − tΦ = φ (1 − t/(t + c)) = φ c/(t + c)`, a product without cancellation:
/// `log h = −z²/2 − log √(2π) + log c − log(t + c)`.
pub fn log_ei_standard(z: f64) -> f64 {
    if z >= -4.0 {
        ei_standard(z).ln()
    } else {
        let t = -z;
        let c = mills_tail(t);
        -0.5 * z * z - LOG_SQRT_2PI + c.ln() - (t + c).ln()
    }
}

/// `Φ(z)/h(z) = d log h/dz`, stable for all `z` (equals `(t + c)/(c (t + c)) · …`
/// in the tail: `Φ/h = (φ/(t + c)) / (φ c/(t + c)) = 1/c`).
fn dlog_h(z: f64) -> f64 {
    if z >= -4.0 {
        normal_cdf(z) / ei_standard(z)
    } else {
        1.0 / mills_tail(-z)
    }
}

/// The continued fraction `c(t) = 1/(t + 2/(t + 3/(t + …)))` of the Mills ratio
/// `R(t) = Φ(−t)/φ(t) = 1/(t + c(t))` (Abramowitz & Stegun 26.2.14), by backward
/// recurrence with a fixed depth: ample for the `t ≥ 4` where it is used (the
/// truncation error after 200 terms is far below 1e-17 there).
fn mills_tail(t: f64) -> f64 {
    let mut acc = t;
    for k in (2..=200).rev() {
        acc = t + k as f64 / acc;
    }
    1.0 / acc
}

/// The GP-UCB exploration weight for a `dim`-dimensional compact domain,
/// `β_t = 2 log(t^{d/2 + 2} π² / (3δ))`: the practical form (Brochu, Cora & de
/// Freitas 2010) of Srinivas et al. (2010), Theorem 2, with its
/// problem-dependent constants dropped.
pub fn ucb_beta(t: usize, dim: usize, delta: f64) -> Result<f64, BoError> {
    if t == 0 {
        return Err(invalid("iteration", "t starts at 1"));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(invalid("delta", format!("{delta} is not in (0, 1)")));
    }
    let t = t as f64;
    Ok(2.0 * ((dim as f64 / 2.0 + 2.0) * t.ln() + (PI * PI / (3.0 * delta)).ln()))
}

/// An acquisition function of the posterior `N(μ, σ²)` at a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Acquisition {
    /// GP-UCB: `μ + √β σ`.
    Ucb {
        /// Exploration weight `β ≥ 0` (see [`ucb_beta`]).
        beta: f64,
    },
    /// Expected improvement `E[max(f − best, 0)] = σ h(z)`, `z = (μ − best)/σ`.
    Ei {
        /// The incumbent.
        best: f64,
    },
    /// `log EI = log σ + log h(z)`, finite far into the tail where EI underflows.
    LogEi {
        /// The incumbent.
        best: f64,
    },
    /// Probability of improvement `Φ(z)`.
    Pi {
        /// The incumbent.
        best: f64,
    },
    /// `log Φ(z)`, stable in the lower tail.
    LogPi {
        /// The incumbent.
        best: f64,
    },
}

/// Below this posterior standard deviation a point is treated as certain.
const MIN_SIGMA: f64 = 1e-12;

impl Acquisition {
    /// The value at posterior mean `mean` and standard deviation `sigma`.
    pub fn value(&self, mean: f64, sigma: f64) -> f64 {
        self.value_and_partials(mean, sigma).0
    }

    /// The value and its partial derivatives `(a, ∂a/∂μ, ∂a/∂σ)`.
    ///
    /// EI: `∂/∂μ = Φ(z)`, `∂/∂σ = φ(z)`. log EI: `∂/∂μ = (Φ/h)/σ`,
    /// `∂/∂σ = (1 − z Φ/h)/σ`. PI: `∂/∂μ = φ/σ`, `∂/∂σ = −z φ/σ`.
    pub fn value_and_partials(&self, mean: f64, sigma: f64) -> (f64, f64, f64) {
        let sigma = sigma.max(MIN_SIGMA);
        match *self {
            Acquisition::Ucb { beta } => (mean + beta.sqrt() * sigma, 1.0, beta.sqrt()),
            Acquisition::Ei { best } => {
                let z = (mean - best) / sigma;
                (sigma * ei_standard(z), normal_cdf(z), normal_pdf(z))
            }
            Acquisition::LogEi { best } => {
                let z = (mean - best) / sigma;
                let r = dlog_h(z);
                (
                    sigma.ln() + log_ei_standard(z),
                    r / sigma,
                    (1.0 - z * r) / sigma,
                )
            }
            Acquisition::Pi { best } => {
                let z = (mean - best) / sigma;
                let p = normal_pdf(z);
                (normal_cdf(z), p / sigma, -z * p / sigma)
            }
            Acquisition::LogPi { best } => {
                let z = (mean - best) / sigma;
                // d log Φ/dz = φ/Φ = 1/R(−z); in the tail R(t) = 1/(t + c(t)).
                let ratio = if z > -5.0 {
                    normal_pdf(z) / normal_cdf(z)
                } else {
                    -z + mills_tail(-z)
                };
                (log_normal_cdf(z), ratio / sigma, -z * ratio / sigma)
            }
        }
    }

    /// The value at a GP point prediction and its gradient in `x`, using
    /// `∂σ/∂x = (∂σ²/∂x)/(2σ)`.
    pub fn value_and_grad(&self, p: &PointPrediction) -> (f64, Vec<f64>) {
        let sigma = p.variance.max(0.0).sqrt().max(MIN_SIGMA);
        let (a, da_dmu, da_dsigma) = self.value_and_partials(p.mean, sigma);
        let grad = p
            .mean_grad
            .iter()
            .zip(&p.variance_grad)
            .map(|(dm, dv)| da_dmu * dm + da_dsigma * dv / (2.0 * sigma))
            .collect();
        (a, grad)
    }

    /// The value at `x` under `gp`, with its gradient.
    pub fn evaluate<K: Kernel>(
        &self,
        gp: &ExactGp<K>,
        x: &[f64],
    ) -> Result<(f64, Vec<f64>), BoError> {
        Ok(self.value_and_grad(&gp.predict_point(x)?))
    }
}

/// Thompson sampling over a finite candidate set: draws one joint posterior sample
/// at the rows of `candidates` and returns the index of its maximiser and the value.
pub fn thompson_sample_candidates<K: Kernel, R: Rng + ?Sized>(
    gp: &ExactGp<K>,
    candidates: &DMatrix<f64>,
    rng: &mut R,
) -> Result<(usize, f64), BoError> {
    if candidates.nrows() == 0 {
        return Err(invalid("candidates", "empty candidate set"));
    }
    let sample = gp.sample_joint(candidates, rng)?;
    let (idx, val) = sample.argmax();
    Ok((idx, val))
}

/// Thompson sampling with random Fourier features: draws `ω` from the weight
/// posterior (paper 000, eq. 2) and maximises the sampled function `φ(x)ᵀω` in
/// `bounds` with [`crate::optim::maximize`].
pub fn thompson_sample_rff<R: Rng + ?Sized>(
    features: &RandomFourierFeatures,
    posterior: &RffPosterior,
    bounds: &Bounds,
    config: &OptimizerConfig,
    rng: &mut R,
) -> Result<Maximum, BoError> {
    let omega = posterior.sample(rng);
    maximize_rff_sample(features, &omega, bounds, config)
}

/// Maximises `φ(x)ᵀω` for given weights `ω` (e.g. a sample received from another
/// agent in FTS).
pub fn maximize_rff_sample(
    features: &RandomFourierFeatures,
    omega: &DVector<f64>,
    bounds: &Bounds,
    config: &OptimizerConfig,
) -> Result<Maximum, BoError> {
    if features.dim() != bounds.dim() {
        return Err(fedhe_gp::GpError::Dimension {
            what: "features vs bounds",
            expected: bounds.dim(),
            got: features.dim(),
        }
        .into());
    }
    // Validate once so the closure below cannot fail on sizes.
    features.evaluate_weights(omega, bounds.lower())?;
    maximize(
        |x| {
            features
                .evaluate_weights(omega, x)
                .unwrap_or((f64::NEG_INFINITY, vec![0.0; x.len()]))
        },
        bounds,
        config,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ei_of_standard_normal_below_incumbent_is_tabulated_constant() {
        // E[max(X, 0)] for X ~ N(-0.5, 1) = φ(0.5) − 0.5 Φ(−0.5) = 0.197797…
        let ei = Acquisition::Ei { best: 0.0 }.value(-0.5, 1.0);
        assert!((ei - 0.197_796_557_401_306).abs() < 1e-12, "{ei}");
        // At the incumbent, EI = σ φ(0) = σ/√(2π).
        let ei0 = Acquisition::Ei { best: 1.0 }.value(1.0, 2.0);
        assert!((ei0 - 2.0 / (2.0 * PI).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn pi_and_ucb_match_closed_forms() {
        assert!((Acquisition::Pi { best: 0.0 }.value(0.0, 3.0) - 0.5).abs() < 1e-15);
        // Φ(1) = 0.841344746068543.
        assert!(
            (Acquisition::Pi { best: 0.0 }.value(2.0, 2.0) - 0.841_344_746_068_543).abs() < 1e-14
        );
        assert_eq!(Acquisition::Ucb { beta: 4.0 }.value(1.0, 0.5), 2.0);
    }

    #[test]
    fn log_ei_far_in_the_tail_matches_the_asymptotic_series() {
        // For z → −∞, h(z) = φ(z)/z² (1 − 3/z² + 15/z⁴ − 105/z⁶ + …).
        for z in [-20.0f64, -40.0, -100.0, -1e3] {
            let z2 = z * z;
            let series = 1.0 - 3.0 / z2 + 15.0 / (z2 * z2) - 105.0 / (z2 * z2 * z2)
                + 945.0 / (z2 * z2 * z2 * z2);
            let want = -0.5 * z2 - LOG_SQRT_2PI - z2.ln() + series.ln();
            let got = log_ei_standard(z);
            assert!(got.is_finite());
            assert!(
                (got - want).abs() < 1e-10 * want.abs(),
                "z = {z}: {got} vs {want}"
            );
        }
        // EI itself underflows to zero there; log-EI stays finite.
        assert_eq!(Acquisition::Ei { best: 0.0 }.value(-40.0, 1.0), 0.0);
        assert!(Acquisition::LogEi { best: 0.0 }.value(-40.0, 1.0) < -800.0);
    }

    #[test]
    fn log_ei_is_continuous_across_the_branch_point() {
        let below = log_ei_standard(-4.0 - 1e-9);
        let above = log_ei_standard(-4.0 + 1e-9);
        assert!((below - above).abs() < 1e-7);
        let below = log_normal_cdf(-5.0 - 1e-9);
        let above = log_normal_cdf(-5.0 + 1e-9);
        assert!((below - above).abs() < 1e-7);
        // R(6) = Φ(−6)/φ(6) = 1/(6 + c(6)), Φ by erfc.
        let c_ref = normal_pdf(6.0) / normal_cdf(-6.0) - 6.0;
        assert!((mills_tail(6.0) - c_ref).abs() < 1e-12 * c_ref);
    }

    #[test]
    fn partials_match_finite_differences() {
        let h = 1e-6;
        for acq in [
            Acquisition::Ucb { beta: 2.5 },
            Acquisition::Ei { best: 0.3 },
            Acquisition::LogEi { best: 0.3 },
            Acquisition::LogEi { best: 6.0 },
            Acquisition::Pi { best: 0.3 },
            Acquisition::LogPi { best: 8.0 },
        ] {
            let (_, dmu, dsigma) = acq.value_and_partials(0.1, 0.7);
            let fd_mu = (acq.value(0.1 + h, 0.7) - acq.value(0.1 - h, 0.7)) / (2.0 * h);
            let fd_s = (acq.value(0.1, 0.7 + h) - acq.value(0.1, 0.7 - h)) / (2.0 * h);
            assert!((fd_mu - dmu).abs() < 1e-6 * (1.0 + dmu.abs()), "{acq:?} dμ");
            assert!(
                (fd_s - dsigma).abs() < 1e-6 * (1.0 + dsigma.abs()),
                "{acq:?} dσ"
            );
        }
    }

    #[test]
    fn rff_thompson_sample_is_maximised_over_the_box() {
        use fedhe_gp::{KernelParams, SquaredExponential};
        use rand::SeedableRng;
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.1, 1.0).unwrap());
        let rff = RandomFourierFeatures::new(&k, 64, 3).unwrap();
        let x = DMatrix::from_row_slice(4, 1, &[0.1, 0.4, 0.6, 0.9]);
        let y = DVector::from_vec(vec![0.0, 1.0, -0.5, 0.3]);
        let post = RffPosterior::fit(&rff, &x, &y, 0.01).unwrap();
        let bounds = Bounds::unit(1).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let config = OptimizerConfig {
            n_candidates: 256,
            ..OptimizerConfig::default()
        };
        let m = thompson_sample_rff(&rff, &post, &bounds, &config, &mut rng).unwrap();
        // Replay the same draw and scan a fine grid: nothing beats the optimiser.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let omega = post.sample(&mut rng);
        let grid_best = (0..=100_000)
            .map(|i| rff.evaluate_weights(&omega, &[i as f64 / 1e5]).unwrap().0)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(m.value >= grid_best - 1e-9, "{} < {grid_best}", m.value);
        assert!((rff.evaluate_weights(&omega, &m.x).unwrap().0 - m.value).abs() < 1e-12);
    }

    #[test]
    fn ucb_beta_schedule_matches_formula_and_grows() {
        let b = ucb_beta(1, 2, 0.1).unwrap();
        assert!((b - 2.0 * (PI * PI / 0.3).ln()).abs() < 1e-12);
        assert!(ucb_beta(100, 2, 0.1).unwrap() > b);
        assert!(ucb_beta(0, 2, 0.1).is_err());
        assert!(ucb_beta(1, 2, 1.5).is_err());
    }

    #[test]
    fn log_ei_equals_the_log_of_the_closed_form_where_that_is_representable() {
        // Tabulated constants: h(0) = φ(0) = 1/√(2π); h(−1) = φ(1) − Φ(−1)
        // = 0.241970724519143 − 0.158655253931457 = 0.083315470587686.
        assert!((log_ei_standard(0.0) + LOG_SQRT_2PI).abs() < 1e-15);
        assert!((log_ei_standard(-1.0) - 0.083_315_470_587_686f64.ln()).abs() < 1e-12);
        // h(2) = φ(2) + 2Φ(2) = 0.053990966513188 + 2·0.977249868051821.
        let h2: f64 = 0.053_990_966_513_188 + 2.0 * 0.977_249_868_051_821;
        assert!((log_ei_standard(2.0) - h2.ln()).abs() < 1e-13);
        // Against ln(φ + zΦ) with Φ by erfc (an independent formula): φ and Φ
        // carry relative errors of about z²ε/2 and the cancellation in
        // φ + zΦ ≈ φ/z² multiplies them by z², so it is a reference to 1e-10
        // down to z = −20 (about z⁴ε/2 ≈ 1e-11 there), across the branch at −4.
        let mut z = -20.0;
        while z <= 6.0 {
            let closed = (normal_pdf(z) + z * normal_cdf(z)).ln();
            let got = log_ei_standard(z);
            assert!((got - closed).abs() < 1e-10, "z = {z}: {got} vs {closed}");
            // And through the acquisition with σ ≠ 1: log EI = log σ + log h.
            let ei = Acquisition::Ei { best: 0.0 }.value(z * 0.3, 0.3);
            let log_ei = Acquisition::LogEi { best: 0.0 }.value(z * 0.3, 0.3);
            if ei > 0.0 {
                assert!((log_ei - ei.ln()).abs() < 1e-9, "z = {z}");
            }
            z += 0.0625;
        }
    }
}
