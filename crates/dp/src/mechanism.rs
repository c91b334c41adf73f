//! The Gaussian and Laplace mechanisms, on a fine grid with exact integer noise.
//!
//! A mechanism with noise scale s (σ for Gaussian, b for Laplace) works on the
//! grid γℤ with γ = 2^(⌊log2 s⌋ − 20), so that s/γ ∈ [2^20, 2^21):
//!
//! 1. each input coordinate is rounded to the grid, X = round(x/γ) (a
//!    deterministic function of the input);
//! 2. integer noise Y is drawn exactly ([`crate::sampling`]): the discrete
//!    Gaussian N_ℤ(0, σ_γ²) with σ_γ² = ⌈(σ/γ)²⌉ (rounded up: never less noise
//!    than asked), or the discrete Laplace DLap(b/γ), whose scale b/γ is a
//!    dyadic rational and is used exactly;
//! 3. the output is γ·(X + Y), computed exactly in f64 (|X + Y| < 2^53).
//!
//! Every output is a deterministic function of two integers, so the set of
//! reachable outputs does not depend on the input's low-order bits: the
//! Mironov (2012) floating-point attack on textbook Laplace/Gaussian samplers
//! does not apply. The discrete Gaussian on an integer-valued query of L2
//! sensitivity Δ satisfies ½(Δ/σ)²-concentrated DP, i.e. the same RDP
//! α·Δ²/(2σ²) as the continuous one (Canonne, Kamath, Steinke 2020, §2, for one and for d coordinates),
//! and DLap(b) on an integer query of L1 sensitivity Δ₁ is (Δ₁/b)-DP (the
//! geometric mechanism, CKS 2020 §2). Rounding adds at most one grid step per
//! coordinate, so the sensitivities to account are Δ + γ√d (L2) and Δ₁ + γd
//! (L1) for d coordinates — [`GaussianMechanism::effective_l2_sensitivity`] and
//! [`LaplaceMechanism::effective_l1_sensitivity`]; with γ ≤ 2^−20·s this is a
//! relative change of about z·√d·2^−20.

use crate::sampling::{discrete_gaussian, discrete_laplace};
use crate::DpError;
use fedhe_ring::Csprng;

/// log2 of the noise scale in grid steps: s/γ ∈ [2^GRID_BITS, 2^(GRID_BITS+1)).
pub const GRID_BITS: i32 = 20;

/// Inputs must satisfy |x/γ| < 2^52 so that γ·(X + Y) stays exact.
const MAX_GRID_INPUT: f64 = 4_503_599_627_370_496.0; // 2^52

/// The grid for a noise scale s ∈ [2^−900, 2^900]: (γ, s/γ as m·2^−32 with m < 2^53).
fn grid_for(scale: f64) -> (f64, u64) {
    let exp = ((scale.to_bits() >> 52) & 0x7ff) as i32 - 1023; // ⌊log2 s⌋ (s normal)
    let grid = 2f64.powi(exp - GRID_BITS);
    let scaled = scale / grid; // exact: division by a power of two
    debug_assert!((2f64.powi(GRID_BITS)..2f64.powi(GRID_BITS + 1)).contains(&scaled));
    // scaled = m · 2^(GRID_BITS − 52) = m · 2^−32 with m the 53-bit significand.
    let m = (scaled.to_bits() & ((1u64 << 52) - 1)) | (1u64 << 52);
    (grid, m)
}

fn check_scale(name: &'static str, s: f64) -> Result<f64, DpError> {
    if s.is_finite() && (2f64.powi(-900)..=2f64.powi(900)).contains(&s) {
        Ok(s)
    } else {
        Err(DpError::invalid(
            name,
            s,
            "in [2^-900, 2^900] (positive and finite)",
        ))
    }
}

fn check_positive(name: &'static str, v: f64) -> Result<f64, DpError> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(DpError::invalid(name, v, "positive and finite"))
    }
}

/// Rounds each coordinate to the grid: round(x/γ), refusing non-finite or too large values.
fn to_grid(x: &[f64], grid: f64) -> Result<Vec<i64>, DpError> {
    x.iter()
        .enumerate()
        .map(|(index, &v)| {
            if !v.is_finite() {
                return Err(DpError::NonFiniteInput { index });
            }
            let g = (v / grid).round();
            if g.abs() >= MAX_GRID_INPUT {
                return Err(DpError::InputOutOfRange {
                    index,
                    limit: MAX_GRID_INPUT * grid,
                });
            }
            Ok(g as i64)
        })
        .collect()
}

/// Parameters of the Gaussian mechanism: noise σ = z·Δ₂.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianParams {
    /// Noise multiplier z > 0.
    pub noise_multiplier: f64,
    /// L2 sensitivity Δ₂ > 0 of the query (the clipping norm S, or φ_max·S/q in DP-FTS-DE).
    pub l2_sensitivity: f64,
}

impl GaussianParams {
    /// Checks z > 0, Δ₂ > 0 and σ = z·Δ₂ within [2^−900, 2^900]; errors name `z`, `S`, `sigma`.
    pub fn validate(self) -> Result<GaussianMechanism, DpError> {
        let z = check_positive("z (noise multiplier)", self.noise_multiplier)?;
        let s = check_positive("S (L2 sensitivity)", self.l2_sensitivity)?;
        GaussianMechanism::with_std_dev(z * s)
    }
}

/// The Gaussian mechanism x ↦ x + N(0, σ²I), realised as γ·(round(x/γ) + Y),
/// Y ~ N_ℤ(0, ⌈(σ/γ)²⌉)^d (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianMechanism {
    std_dev: f64,
    grid: f64,
    /// σ_γ² = ⌈(σ/γ)²⌉, an integer in [2^40, 2^42].
    grid_variance: u128,
}

impl GaussianMechanism {
    /// The mechanism with standard deviation `sigma` ∈ [2^−900, 2^900] (error names `sigma`).
    pub fn with_std_dev(sigma: f64) -> Result<Self, DpError> {
        let sigma = check_scale("sigma (noise standard deviation)", sigma)?;
        let (grid, m) = grid_for(sigma);
        // (σ/γ)² = m² · 2^−64, rounded up.
        let m2 = u128::from(m) * u128::from(m);
        let grid_variance = m2.div_ceil(1u128 << 64);
        Ok(Self {
            std_dev: sigma,
            grid,
            grid_variance,
        })
    }

    /// The requested standard deviation σ.
    pub fn std_dev(&self) -> f64 {
        self.std_dev
    }

    /// The grid step γ.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// The standard-deviation parameter actually used, γ·√⌈(σ/γ)²⌉ ≥ σ.
    pub fn effective_std_dev(&self) -> f64 {
        self.grid * (self.grid_variance as f64).sqrt()
    }

    /// The L2 sensitivity to account for a d-dimensional query of sensitivity Δ₂: Δ₂ + γ√d.
    pub fn effective_l2_sensitivity(&self, l2_sensitivity: f64, dim: usize) -> f64 {
        l2_sensitivity + self.grid * (dim as f64).sqrt()
    }

    /// `len` independent noise values γ·Y, Y ~ N_ℤ(0, σ_γ²).
    pub fn noise(&self, rng: &mut Csprng, len: usize) -> Vec<f64> {
        (0..len)
            .map(|_| discrete_gaussian(rng, self.grid_variance, 1) as f64 * self.grid)
            .collect()
    }

    /// x + noise, as γ·(round(x/γ) + Y). Refuses non-finite inputs and
    /// |x| ≥ 2^52·γ (the error names the coordinate).
    pub fn privatize(&self, rng: &mut Csprng, x: &[f64]) -> Result<Vec<f64>, DpError> {
        let grid_x = to_grid(x, self.grid)?;
        Ok(grid_x
            .into_iter()
            .map(|g| (g + discrete_gaussian(rng, self.grid_variance, 1)) as f64 * self.grid)
            .collect())
    }
}

/// Parameters of the Laplace mechanism: noise scale b (density ∝ e^(−|y|/b)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaplaceParams {
    /// Scale b > 0.
    pub scale: f64,
}

impl LaplaceParams {
    /// The scale b = Δ₁/ε that makes a query of L1 sensitivity Δ₁ ε-DP;
    /// errors name `epsilon` and `sensitivity`.
    pub fn for_epsilon(epsilon: f64, l1_sensitivity: f64) -> Result<Self, DpError> {
        let eps = check_positive("epsilon", epsilon)?;
        let s = check_positive("S (L1 sensitivity)", l1_sensitivity)?;
        Ok(Self { scale: s / eps })
    }

    /// Checks b ∈ [2^−900, 2^900]; the error names `b`.
    pub fn validate(self) -> Result<LaplaceMechanism, DpError> {
        let b = check_scale("b (Laplace scale)", self.scale)?;
        let (grid, m) = grid_for(b);
        Ok(LaplaceMechanism {
            scale: b,
            grid,
            scale_num: u128::from(m),
        })
    }
}

/// The Laplace mechanism x ↦ x + Lap(b)^d, realised as γ·(round(x/γ) + Y),
/// Y ~ DLap(b/γ)^d with b/γ = m/2^32 exactly (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LaplaceMechanism {
    scale: f64,
    grid: f64,
    /// b/γ = scale_num / 2^32.
    scale_num: u128,
}

impl LaplaceMechanism {
    /// The scale b.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The grid step γ.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// The L1 sensitivity to account for a d-dimensional query of sensitivity Δ₁: Δ₁ + γ·d.
    pub fn effective_l1_sensitivity(&self, l1_sensitivity: f64, dim: usize) -> f64 {
        l1_sensitivity + self.grid * dim as f64
    }

    fn draw(&self, rng: &mut Csprng) -> i64 {
        // DLap(t/s) with t/s = b/γ: t = m, s = 2^32.
        discrete_laplace(rng, 1u128 << 32, self.scale_num)
    }

    /// `len` independent noise values γ·Y, Y ~ DLap(b/γ).
    pub fn noise(&self, rng: &mut Csprng, len: usize) -> Vec<f64> {
        (0..len)
            .map(|_| self.draw(rng) as f64 * self.grid)
            .collect()
    }

    /// x + noise, as γ·(round(x/γ) + Y). Refuses non-finite inputs and |x| ≥ 2^52·γ.
    pub fn privatize(&self, rng: &mut Csprng, x: &[f64]) -> Result<Vec<f64>, DpError> {
        let grid_x = to_grid(x, self.grid)?;
        Ok(grid_x
            .into_iter()
            .map(|g| (g + self.draw(rng)) as f64 * self.grid)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kolmogorov–Smirnov statistic of a sample against a CDF.
    fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
            })
            .fold(0.0, f64::max)
    }

    /// The KS critical value at level 0.001: 1.95/√n.
    fn ks_limit(n: usize) -> f64 {
        1.95 / (n as f64).sqrt()
    }

    #[test]
    fn grid_is_a_power_of_two_below_the_scale() {
        for s in [1.0, 0.3, 22.0 / 0.25, 1e-6, 3e5] {
            let (g, m) = grid_for(s);
            assert_eq!(g.log2().fract(), 0.0);
            assert!(s / g >= 2f64.powi(GRID_BITS) && s / g < 2f64.powi(GRID_BITS + 1));
            assert_eq!(m as f64 * 2f64.powi(-32), s / g);
        }
        let mech = GaussianMechanism::with_std_dev(3.0).unwrap();
        assert!(mech.effective_std_dev() >= 3.0);
        assert!(mech.effective_std_dev() - 3.0 < 1e-12);
    }

    #[test]
    fn gaussian_noise_is_normal() {
        let mut rng = Csprng::from_u128_seed(21);
        let sigma = 2.5;
        let mech = GaussianMechanism::with_std_dev(sigma).unwrap();
        let n = 50_000;
        let xs = mech.noise(&mut rng, n);
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(mean.abs() < 5.0 * sigma / (n as f64).sqrt(), "{mean}");
        // sd of the sample variance ≈ σ²√(2/n).
        assert!(
            (var - sigma * sigma).abs() < 5.0 * sigma * sigma * (2.0 / n as f64).sqrt(),
            "{var}"
        );
        let d = ks(xs, |x| {
            0.5 * libm::erfc(-x / (sigma * std::f64::consts::SQRT_2))
        });
        assert!(d < ks_limit(n), "KS = {d}");
        // Every value is on the grid.
        let again = mech.noise(&mut rng, 100);
        assert!(again.iter().all(|v| (v / mech.grid()).fract() == 0.0));
    }

    #[test]
    fn laplace_noise_is_laplace() {
        let mut rng = Csprng::from_u128_seed(22);
        let b = 0.7;
        let mech = LaplaceParams { scale: b }.validate().unwrap();
        let n = 50_000;
        let xs = mech.noise(&mut rng, n);
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(
            mean.abs() < 5.0 * (2.0f64).sqrt() * b / (n as f64).sqrt(),
            "{mean}"
        );
        // Var = 2b²; the sample variance has sd ≈ √(20/n)·b² (fourth moment 24b⁴).
        assert!(
            (var - 2.0 * b * b).abs() < 5.0 * b * b * (20.0 / n as f64).sqrt(),
            "{var}"
        );
        let cdf = |x: f64| {
            if x < 0.0 {
                0.5 * (x / b).exp()
            } else {
                1.0 - 0.5 * (-x / b).exp()
            }
        };
        let d = ks(xs, cdf);
        assert!(d < ks_limit(n), "KS = {d}");
    }

    #[test]
    fn privatize_adds_noise_around_the_input() {
        let mut rng = Csprng::from_u128_seed(23);
        let mech = GaussianParams {
            noise_multiplier: 1.0,
            l2_sensitivity: 1e-3,
        }
        .validate()
        .unwrap();
        let x = vec![0.5, -2.0, 10.0];
        let n = 2000;
        let mut sums = [0.0; 3];
        for _ in 0..n {
            let y = mech.privatize(&mut rng, &x).unwrap();
            for (s, v) in sums.iter_mut().zip(&y) {
                *s += v;
            }
        }
        for (s, v) in sums.iter().zip(&x) {
            assert!((s / n as f64 - v).abs() < 5.0 * 1e-3 / (n as f64).sqrt());
        }
        let lap = LaplaceParams::for_epsilon(1.0, 0.01)
            .unwrap()
            .validate()
            .unwrap();
        let y = lap.privatize(&mut rng, &x).unwrap();
        assert!(y.iter().zip(&x).all(|(a, b)| (a - b).abs() < 1.0));
    }

    #[test]
    fn refuses_bad_parameters_and_inputs() {
        let e = GaussianParams {
            noise_multiplier: 1.0,
            l2_sensitivity: 0.0,
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().starts_with("invalid S"), "{e}");
        let e = GaussianParams {
            noise_multiplier: -1.0,
            l2_sensitivity: 1.0,
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().starts_with("invalid z"), "{e}");
        assert!(GaussianMechanism::with_std_dev(f64::NAN).is_err());
        assert!(GaussianMechanism::with_std_dev(1e-300).is_err());
        assert!(LaplaceParams { scale: 0.0 }.validate().is_err());
        assert!(LaplaceParams::for_epsilon(0.0, 1.0).is_err());
        let mut rng = Csprng::from_u128_seed(24);
        let mech = GaussianMechanism::with_std_dev(1.0).unwrap();
        assert_eq!(
            mech.privatize(&mut rng, &[0.0, f64::NAN]),
            Err(DpError::NonFiniteInput { index: 1 })
        );
        assert!(matches!(
            mech.privatize(&mut rng, &[1e30]),
            Err(DpError::InputOutOfRange { index: 0, .. })
        ));
    }
}
