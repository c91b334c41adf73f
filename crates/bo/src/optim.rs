//! The acquisition optimiser in a box: seeded raw candidates (uniform or
//! scrambled Sobol', plus perturbations of anchors), then L-BFGS from a few of
//! them, the best few or a Boltzmann sample (BoTorch's `optimize_acqf`).
//!
//! argmin's L-BFGS is unconstrained; the box is enforced by the reparameterisation
//! `x = lo + (hi − lo)·sigmoid(u)`, so every iterate is feasible, and the gradient
//! picks up the factor `(hi − lo)·s(1 − s)`. The result is deterministic for a
//! seed: candidates come from a ChaCha8 stream and the polish is deterministic.

use crate::error::invalid;
use crate::sobol::Sobol;
use crate::BoError;
use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use nalgebra::DVector;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

/// A box `lower ≤ x ≤ upper`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl Bounds {
    /// A validated box: same length, finite, `lower < upper` in every coordinate.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Self, BoError> {
        if lower.len() != upper.len() || lower.is_empty() {
            return Err(fedhe_gp::GpError::Dimension {
                what: "bounds (upper vs lower)",
                expected: lower.len(),
                got: upper.len(),
            }
            .into());
        }
        for (l, u) in lower.iter().zip(&upper) {
            if !(l.is_finite() && u.is_finite() && l < u) {
                return Err(invalid(
                    "bounds",
                    format!("[{l}, {u}] is not a finite interval"),
                ));
            }
        }
        Ok(Self { lower, upper })
    }

    /// The unit cube `[0, 1]^dim`.
    pub fn unit(dim: usize) -> Result<Self, BoError> {
        Self::new(vec![0.0; dim], vec![1.0; dim])
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.lower.len()
    }

    /// Lower bounds.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// Upper bounds.
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }

    /// A uniform random point in the box.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<f64> {
        self.lower
            .iter()
            .zip(&self.upper)
            .map(|(l, u)| rng.gen_range(*l..*u))
            .collect()
    }

    /// Whether `x` lies in the box.
    pub fn contains(&self, x: &[f64]) -> bool {
        x.len() == self.dim()
            && x.iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(v, (l, u))| *v >= *l && *v <= *u)
    }
}

/// How the raw candidates of [`maximize_near`] that are not around anchors
/// are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RawSampling {
    /// Independent uniform points of the box.
    #[default]
    Uniform,
    /// A scrambled Sobol' sequence ([`crate::sobol::Sobol`]), as BoTorch's
    /// `raw_samples`: more even coverage of the box for the same count.
    Sobol,
}

/// Which scored candidates start an L-BFGS polish.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RestartSelection {
    /// The `n_polish` best.
    #[default]
    TopK,
    /// `n_polish` drawn without replacement with probability `∝ exp(η z)`,
    /// `z` the standardised candidate value, the best always included:
    /// BoTorch's `initialize_q_batch` (Balandat et al. 2020, App. F.1),
    /// which spreads the starts over several basins instead of one.
    Boltzmann {
        /// The temperature `η > 0` (BoTorch: 1).
        eta: f64,
    },
}

/// Settings of [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizerConfig {
    /// Number of raw candidates scored first.
    pub n_candidates: usize,
    /// Number of candidates polished by L-BFGS.
    pub n_polish: usize,
    /// L-BFGS iterations per polish.
    pub max_iters: u64,
    /// Seed of the candidate stream.
    pub seed: u64,
    /// How the raw candidates are drawn.
    pub raw: RawSampling,
    /// Which candidates are polished.
    pub restarts: RestartSelection,
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        Self {
            n_candidates: 2048,
            n_polish: 5,
            max_iters: 200,
            seed: 0,
            raw: RawSampling::Uniform,
            restarts: RestartSelection::TopK,
        }
    }
}

/// The indices of `n` starts among candidate values `values` (descending
/// order not required) by `selection`, drawing from `rng` for a Boltzmann
/// sample. Non-finite values are never chosen unless nothing else is left.
pub fn select_restarts<R: Rng + ?Sized>(
    values: &[f64],
    n: usize,
    selection: RestartSelection,
    rng: &mut R,
) -> Vec<usize> {
    let n = n.min(values.len());
    let mut order: Vec<usize> = (0..values.len()).collect();
    // Descending by value; ties keep generation order (stable sort).
    order.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
    let eta = match selection {
        RestartSelection::TopK => return order.into_iter().take(n).collect(),
        RestartSelection::Boltzmann { eta } => eta,
    };
    let finite: Vec<usize> = order
        .iter()
        .copied()
        .filter(|i| values[*i].is_finite())
        .collect();
    if finite.len() <= n || n == 0 {
        return order.into_iter().take(n).collect();
    }
    let count = finite.len() as f64;
    let mean = finite.iter().map(|i| values[*i]).sum::<f64>() / count;
    let var = finite
        .iter()
        .map(|i| (values[*i] - mean).powi(2))
        .sum::<f64>()
        / count;
    let std = var.sqrt();
    // exp(η (z − z_max)) ∈ (0, 1]: the normalisation cancels in the draw.
    let best = values[finite[0]];
    let mut weights: Vec<f64> = finite
        .iter()
        .map(|i| {
            if std > 0.0 {
                (eta * (values[*i] - best) / std).exp()
            } else {
                1.0
            }
        })
        .collect();
    let mut chosen = vec![finite[0]];
    weights[0] = 0.0;
    while chosen.len() < n {
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            // Every remaining weight underflowed: take the best remaining.
            let next = (0..finite.len()).find(|j| !chosen.contains(&finite[*j]));
            match next {
                Some(j) => {
                    chosen.push(finite[j]);
                    weights[j] = 0.0;
                    continue;
                }
                None => break,
            }
        }
        let mut u = rng.gen::<f64>() * total;
        let mut pick = None;
        for (j, w) in weights.iter().enumerate() {
            if *w <= 0.0 {
                continue;
            }
            pick = Some(j);
            if u < *w {
                break;
            }
            u -= w;
        }
        // Some weight is positive (total > 0); rounding may run past the last.
        let Some(pick) = pick else { break };
        chosen.push(finite[pick]);
        weights[pick] = 0.0;
    }
    chosen
}

/// The maximiser found and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Maximum {
    /// The arg max, inside the box.
    pub x: Vec<f64>,
    /// The objective there.
    pub value: f64,
}

const EDGE: f64 = 1e-9;

/// `−f(x(u))` for L-BFGS.
struct Negated<'a, F> {
    f: &'a F,
    bounds: &'a Bounds,
}

fn sigmoid(u: f64) -> f64 {
    1.0 / (1.0 + (-u).exp())
}

impl<F: Fn(&[f64]) -> (f64, Vec<f64>)> Negated<'_, F> {
    fn to_x(&self, u: &DVector<f64>) -> Vec<f64> {
        u.iter()
            .zip(self.bounds.lower.iter().zip(&self.bounds.upper))
            .map(|(u, (l, h))| l + (h - l) * sigmoid(*u))
            .collect()
    }

    fn to_u(&self, x: &[f64]) -> DVector<f64> {
        DVector::from_iterator(
            x.len(),
            x.iter()
                .zip(self.bounds.lower.iter().zip(&self.bounds.upper))
                .map(|(x, (l, h))| {
                    let s = ((x - l) / (h - l)).clamp(EDGE, 1.0 - EDGE);
                    (s / (1.0 - s)).ln()
                }),
        )
    }

    fn eval(&self, u: &DVector<f64>) -> (f64, DVector<f64>) {
        let x = self.to_x(u);
        let (v, g) = (self.f)(&x);
        let du = DVector::from_fn(u.len(), |i, _| {
            let s = sigmoid(u[i]);
            -g[i] * (self.bounds.upper[i] - self.bounds.lower[i]) * s * (1.0 - s)
        });
        (-v, du)
    }
}

impl<F: Fn(&[f64]) -> (f64, Vec<f64>)> CostFunction for Negated<'_, F> {
    type Param = DVector<f64>;
    type Output = f64;
    fn cost(&self, u: &DVector<f64>) -> Result<f64, argmin::core::Error> {
        let c = self.eval(u).0;
        if c.is_finite() {
            Ok(c)
        } else {
            Err(argmin::core::Error::msg("objective is not finite"))
        }
    }
}

impl<F: Fn(&[f64]) -> (f64, Vec<f64>)> Gradient for Negated<'_, F> {
    type Param = DVector<f64>;
    type Gradient = DVector<f64>;
    fn gradient(&self, u: &DVector<f64>) -> Result<DVector<f64>, argmin::core::Error> {
        Ok(self.eval(u).1)
    }
}

/// Maximises `f` (returning its value and gradient) over `bounds`: scores
/// `n_candidates` seeded raw points ([`RawSampling`]), polishes `n_polish` of
/// them ([`RestartSelection`]) with L-BFGS, and returns the best point seen.
pub fn maximize<F>(f: F, bounds: &Bounds, config: &OptimizerConfig) -> Result<Maximum, BoError>
where
    F: Fn(&[f64]) -> (f64, Vec<f64>),
{
    maximize_near(f, bounds, config, &[])
}

/// Relative widths (of each side of the box) of the Gaussian perturbations
/// drawn around anchors: from polishing an incumbent to leaving its basin.
const ANCHOR_SIGMAS: [f64; 3] = [0.01, 0.05, 0.2];

/// [`maximize`] with `anchors` (e.g. the best points observed so far): half of
/// the candidates are Gaussian perturbations of the anchors, clipped to the box,
/// the anchors themselves included. In many dimensions uniform candidates
/// almost never land in the narrow region an acquisition peaks in near an
/// incumbent; sampling around the best points is the remedy BoTorch's
/// `sample_around_best` initial conditions use.
pub fn maximize_near<F>(
    f: F,
    bounds: &Bounds,
    config: &OptimizerConfig,
    anchors: &[Vec<f64>],
) -> Result<Maximum, BoError>
where
    F: Fn(&[f64]) -> (f64, Vec<f64>),
{
    if config.n_candidates == 0 {
        return Err(invalid("n_candidates", "at least one candidate is needed"));
    }
    if let RestartSelection::Boltzmann { eta } = config.restarts {
        if !(eta.is_finite() && eta > 0.0) {
            return Err(invalid(
                "restarts",
                format!("Boltzmann η = {eta} is not > 0"),
            ));
        }
    }
    if let Some(a) = anchors.iter().find(|a| !bounds.contains(a)) {
        return Err(invalid("anchors", format!("{a:?} lies outside the box")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let n_near = if anchors.is_empty() {
        0
    } else {
        config.n_candidates / 2
    };
    let score = |x: Vec<f64>| {
        let v = f(&x).0;
        (if v.is_nan() { f64::NEG_INFINITY } else { v }, x)
    };
    let n_raw = config.n_candidates - n_near;
    let mut scored: Vec<(f64, Vec<f64>)> = match config.raw {
        RawSampling::Uniform => (0..n_raw).map(|_| score(bounds.sample(&mut rng))).collect(),
        RawSampling::Sobol => {
            let mut sobol = Sobol::scrambled(bounds.dim(), &mut rng)?;
            (0..n_raw)
                .map(|_| {
                    let p = sobol.next_point(&mut rng);
                    let x = p
                        .iter()
                        .zip(bounds.lower.iter().zip(&bounds.upper))
                        .map(|(p, (l, h))| l + (h - l) * p)
                        .collect();
                    score(x)
                })
                .collect()
        }
    };
    scored.extend(anchors.iter().cloned().map(score));
    for i in 0..n_near.saturating_sub(anchors.len()) {
        let anchor = &anchors[i % anchors.len()];
        let sigma = ANCHOR_SIGMAS[(i / anchors.len()) % ANCHOR_SIGMAS.len()];
        let x = anchor
            .iter()
            .zip(bounds.lower.iter().zip(&bounds.upper))
            .map(|(a, (l, h))| {
                let z: f64 = rand_distr::StandardNormal.sample(&mut rng);
                (a + sigma * (h - l) * z).clamp(*l, *h)
            })
            .collect();
        scored.push(score(x));
    }
    let values: Vec<f64> = scored.iter().map(|s| s.0).collect();
    let starts = select_restarts(&values, config.n_polish, config.restarts, &mut rng);
    let top = select_restarts(&values, 1, RestartSelection::TopK, &mut rng)[0];
    let problem = Negated { f: &f, bounds };
    let mut best = Maximum {
        x: scored[top].1.clone(),
        value: scored[top].0,
    };
    for x0 in starts.iter().map(|i| &scored[*i].1) {
        let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
        let run = Executor::new(
            Negated {
                f: problem.f,
                bounds,
            },
            solver,
        )
        .configure(|s| s.param(problem.to_u(x0)).max_iters(config.max_iters))
        .run();
        // A polish that fails (e.g. a line search hitting a non-finite value) just
        // leaves its candidate as it was.
        if let Ok(res) = run {
            if let Some(u) = res.state().get_best_param() {
                let x = problem.to_x(u);
                let v = f(&x).0;
                if v > best.value {
                    best = Maximum { x, value: v };
                }
            }
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(x) = exp(−½ Σ a_d (x_d − c_d)²) · (1 + 0.1 Σ cos(3(x_d − c_d)))`: both
    /// factors are positive and maximised at `c` (|3(x_d − c_d)| < π in the unit
    /// cube), so the unique maximiser is `c`, with `f(c) = 1 + 0.1·D`.
    fn bump(x: &[f64], c: &[f64], a: &[f64]) -> (f64, Vec<f64>) {
        let q: f64 = x
            .iter()
            .zip(c)
            .zip(a)
            .map(|((x, c), a)| a * (x - c).powi(2))
            .sum();
        let e = (-0.5 * q).exp();
        let s: f64 = 1.0
            + 0.1
                * x.iter()
                    .zip(c)
                    .map(|(x, c)| (3.0 * (x - c)).cos())
                    .sum::<f64>();
        let grad = x
            .iter()
            .zip(c)
            .zip(a)
            .map(|((x, c), a)| -a * (x - c) * e * s - e * 0.3 * (3.0 * (x - c)).sin())
            .collect();
        (e * s, grad)
    }

    fn problem() -> (Vec<f64>, Vec<f64>) {
        let c = vec![0.12, 0.87, 0.5, 0.33, 0.71, 0.05, 0.95, 0.61, 0.28, 0.44];
        let a = vec![4.0, 9.0, 2.0, 16.0, 5.0, 3.0, 7.0, 1.0, 12.0, 6.0];
        (c, a)
    }

    #[test]
    fn finds_the_maximiser_of_a_smooth_10d_function() {
        let (c, a) = problem();
        let bounds = Bounds::unit(10).unwrap();
        let config = OptimizerConfig {
            n_candidates: 2000,
            n_polish: 3,
            max_iters: 300,
            seed: 1,
            ..OptimizerConfig::default()
        };
        let m = maximize(|x| bump(x, &c, &a), &bounds, &config).unwrap();
        let err =
            m.x.iter()
                .zip(&c)
                .map(|(x, c)| (x - c).abs())
                .fold(0.0, f64::max);
        println!(
            "10-D maximiser: max coordinate error {err:e}, value error {:e}",
            (m.value - 2.0).abs()
        );
        assert!(err < 1e-4, "max coordinate error {err}");
        assert!((m.value - 2.0).abs() < 1e-8);
        assert!(bounds.contains(&m.x));
    }

    #[test]
    fn is_deterministic_for_a_seed() {
        let (c, a) = problem();
        let bounds = Bounds::unit(10).unwrap();
        let config = OptimizerConfig {
            n_candidates: 200,
            n_polish: 2,
            max_iters: 20,
            seed: 9,
            ..OptimizerConfig::default()
        };
        let m1 = maximize(|x| bump(x, &c, &a), &bounds, &config).unwrap();
        let m2 = maximize(|x| bump(x, &c, &a), &bounds, &config).unwrap();
        assert_eq!(m1, m2);
    }

    #[test]
    fn maximiser_on_the_boundary_is_approached() {
        // f(x) = x_0 + x_1 on [0, 1]² has its maximum 2 at the corner (1, 1).
        let bounds = Bounds::unit(2).unwrap();
        let m = maximize(
            |x| (x[0] + x[1], vec![1.0, 1.0]),
            &bounds,
            &OptimizerConfig::default(),
        )
        .unwrap();
        assert!(m.value > 2.0 - 1e-6 && m.value <= 2.0, "{}", m.value);
    }

    #[test]
    fn invalid_bounds_are_rejected() {
        assert!(Bounds::new(vec![0.0], vec![0.0]).is_err());
        assert!(Bounds::new(vec![0.0, 1.0], vec![1.0]).is_err());
        assert!(Bounds::new(vec![f64::NAN], vec![1.0]).is_err());
    }

    #[test]
    fn anchors_find_a_narrow_peak_that_uniform_candidates_miss() {
        // A peak of width 0.003 in 10-D: uniform candidates essentially never
        // see it, an anchor next to it does.
        let centre = vec![0.37; 10];
        let peak = |x: &[f64]| {
            let d2: f64 = x.iter().zip(&centre).map(|(a, c)| (a - c).powi(2)).sum();
            let v = (-d2 / (2.0 * 0.003f64.powi(2))).exp();
            let g = x
                .iter()
                .zip(&centre)
                .map(|(a, c)| -v * (a - c) / 0.003f64.powi(2))
                .collect();
            (v, g)
        };
        let bounds = Bounds::unit(10).unwrap();
        let config = OptimizerConfig {
            n_candidates: 200,
            n_polish: 2,
            max_iters: 50,
            seed: 4,
            ..OptimizerConfig::default()
        };
        let blind = maximize(peak, &bounds, &config).unwrap();
        assert!(
            blind.value < 1e-6,
            "uniform candidates hit the peak: {}",
            blind.value
        );
        let anchor = vec![0.372; 10];
        let near = maximize_near(peak, &bounds, &config, &[anchor]).unwrap();
        assert!(near.value > 0.999, "{}", near.value);
        assert!(maximize_near(peak, &bounds, &config, &[vec![1.5; 10]]).is_err());
    }

    #[test]
    fn boltzmann_restarts_keep_the_best_and_follow_their_weights() {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Values 2, 1, 0 (std √(2/3)): after the best, index 1 is drawn
        // before index 2 with probability e^{η·1/σ} / (e^{η·1/σ} + 1).
        let values = [0.0, 2.0, 1.0];
        let eta = 0.5;
        let sigma = (2.0f64 / 3.0).sqrt();
        let p1 = (eta / sigma).exp() / ((eta / sigma).exp() + 1.0);
        let n = 40_000;
        let mut hits = 0;
        for _ in 0..n {
            let s = select_restarts(&values, 2, RestartSelection::Boltzmann { eta }, &mut rng);
            assert_eq!(s[0], 1, "the best first");
            assert_ne!(s[0], s[1]);
            if s[1] == 2 {
                hits += 1;
            }
        }
        let freq = hits as f64 / n as f64;
        // Binomial standard error √(p(1−p)/n) ≈ 0.0024; 4 of them.
        assert!((freq - p1).abs() < 0.01, "{freq} vs {p1}");
        // A huge η is the top-k; non-finite values are chosen last.
        let values = [0.3, f64::NEG_INFINITY, 5.0, 4.0, -1.0];
        let s = select_restarts(
            &values,
            3,
            RestartSelection::Boltzmann { eta: 1e6 },
            &mut rng,
        );
        assert_eq!(s, vec![2, 3, 0]);
        assert_eq!(
            select_restarts(&values, 3, RestartSelection::TopK, &mut rng),
            vec![2, 3, 0]
        );
        let s = select_restarts(
            &values,
            5,
            RestartSelection::Boltzmann { eta: 1.0 },
            &mut rng,
        );
        assert_eq!(s.len(), 5);
    }

    #[test]
    fn sobol_raw_samples_with_boltzmann_restarts_find_the_10d_maximiser() {
        let (c, a) = problem();
        let bounds = Bounds::unit(10).unwrap();
        let config = OptimizerConfig {
            n_candidates: 512,
            n_polish: 10,
            max_iters: 300,
            seed: 2,
            raw: RawSampling::Sobol,
            restarts: RestartSelection::Boltzmann { eta: 1.0 },
        };
        let m = maximize(|x| bump(x, &c, &a), &bounds, &config).unwrap();
        assert!((m.value - 2.0).abs() < 1e-8, "{}", m.value);
        assert_eq!(m, maximize(|x| bump(x, &c, &a), &bounds, &config).unwrap());
        let bad = OptimizerConfig {
            restarts: RestartSelection::Boltzmann { eta: 0.0 },
            ..config
        };
        let err = maximize(|x| bump(x, &c, &a), &bounds, &bad).unwrap_err();
        assert!(err.to_string().contains("restarts"), "{err}");
    }
}
