//! The posterior an acquisition reads — a client's local exact GP or the global
//! dPITC posterior (paper 004, eqs. 9-10) — and one acquisition step on it
//! (Alg. 2, lines 16-17 and 22-23).

use crate::AlgorithmError;
use fedhe_bo::acquisition::Acquisition;
use fedhe_bo::optim::{maximize_near, Bounds, OptimizerConfig};
use fedhe_bo::penalty::{lipschitz_and_max, log_softplus, LocalPenalty};
use fedhe_gp::exact::PointPrediction;
use fedhe_gp::sparse::{Dpitc, GlobalSummary};
use fedhe_gp::trend::QuadraticTrend;
use fedhe_gp::{ExactGp, Kernel};
use fedhe_tasks::Space;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A posterior over the utility in the unit cube.
pub trait Surrogate {
    /// Mean, latent variance and their gradients at `x`.
    fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError>;

    /// One joint posterior sample at the rows of `xs`.
    fn sample_joint(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<DVector<f64>, AlgorithmError>;
}

impl<K: Kernel> Surrogate for ExactGp<K> {
    fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError> {
        Ok(ExactGp::predict_point(self, x)?)
    }

    fn sample_joint(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<DVector<f64>, AlgorithmError> {
        Ok(ExactGp::sample_joint(self, xs, rng)?)
    }
}

/// A surrogate seen through a typed space (issue 46): its prediction at `x`
/// is `inner`'s at [`Space::canonical`]`(x)`, the point that stands for the
/// values `x` decodes to (an integer at its cell's centre, a choice at its
/// one-hot vertex). An acquisition on it is maximised over values that can
/// be evaluated, the kernel reading the rounded input (Garrido-Merchán and
/// Hernández-Lobato 2020, "Dealing with categorical and integer-valued
/// variables in Bayesian optimization with Gaussian processes", eq. 5).
/// Its gradient is `inner`'s in the float coordinates and zero in the others,
/// where the prediction is piecewise constant (and in a float's coordinates
/// where `x` leaves the float inactive, which the canonical point fixes):
/// the optimiser's random candidates choose the discrete values, its
/// gradient steps the floats.
pub struct Projected<'a> {
    inner: &'a dyn Surrogate,
    space: &'a Space,
}

impl<'a> Projected<'a> {
    /// `inner` seen through `space`.
    pub fn new(inner: &'a dyn Surrogate, space: &'a Space) -> Self {
        Self { inner, space }
    }

    /// `surrogate` seen through `space` when there is one, else itself.
    pub fn maybe(surrogate: &'a dyn Surrogate, space: Option<&'a Space>) -> ProjectedOr<'a> {
        match space {
            Some(space) => ProjectedOr::Projected(Self::new(surrogate, space)),
            None => ProjectedOr::Plain(surrogate),
        }
    }
}

/// What [`Projected::maybe`] gives: a surrogate through a space, or as it is.
pub enum ProjectedOr<'a> {
    /// Seen through a typed space.
    Projected(Projected<'a>),
    /// A box of floats: the surrogate itself.
    Plain(&'a dyn Surrogate),
}

impl<'a> ProjectedOr<'a> {
    /// The surrogate to hand an acquisition step.
    pub fn get(&self) -> &dyn Surrogate {
        match self {
            ProjectedOr::Projected(p) => p,
            ProjectedOr::Plain(s) => *s,
        }
    }
}

impl Surrogate for Projected<'_> {
    fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError> {
        let mut p = self.inner.predict_point(&self.space.canonical(x))?;
        for (k, continuous) in self.space.continuous_at(x).iter().enumerate() {
            if !continuous {
                if let Some(g) = p.mean_grad.get_mut(k) {
                    *g = 0.0;
                }
                if let Some(g) = p.variance_grad.get_mut(k) {
                    *g = 0.0;
                }
            }
        }
        Ok(p)
    }

    fn sample_joint(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<DVector<f64>, AlgorithmError> {
        let mut projected = xs.clone();
        for mut row in projected.row_iter_mut() {
            let x: Vec<f64> = row.iter().copied().collect();
            for (v, c) in row.iter_mut().zip(self.space.canonical(&x)) {
                *v = c;
            }
        }
        self.inner.sample_joint(&projected, rng)
    }
}

/// The global posterior: the shared dPITC model and the decrypted global summary.
#[derive(Debug, Clone)]
pub struct GlobalPosterior<K: Kernel> {
    /// The shared model (kernel, noise, support set).
    pub model: Dpitc<K>,
    /// The global summary `G` (eq. 8).
    pub summary: GlobalSummary,
    /// A trend the model was fitted around (`global_trend = "quadratic"` or `"quadratic-spaced"`):
    /// the summaries are of the residuals from it, so it is added back to
    /// every prediction and sample (its weights taken as known).
    pub trend: Option<QuadraticTrend>,
}

impl<K: Kernel> Surrogate for GlobalPosterior<K> {
    fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError> {
        let mut p = self.model.predict_point(&self.summary, x)?;
        if let Some(trend) = &self.trend {
            let (m, grad) = trend.value_and_gradient(x);
            p.mean += m;
            p.mean_grad.iter_mut().zip(grad).for_each(|(a, g)| *a += g);
        }
        Ok(p)
    }

    fn sample_joint(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<DVector<f64>, AlgorithmError> {
        let mut sample = self.model.sample_joint(&self.summary, xs, rng)?;
        if let Some(trend) = &self.trend {
            for (r, v) in sample.iter_mut().enumerate() {
                let x: Vec<f64> = xs.row(r).iter().copied().collect();
                *v += trend.value(&x);
            }
        }
        Ok(sample)
    }
}

/// Which acquisition function a client maximises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcquisitionKind {
    /// GP-UCB.
    Ucb,
    /// Expected improvement (maximised as the numerically stable log-EI).
    Ei,
    /// Probability of improvement (maximised as log-PI).
    Pi,
    /// Thompson sampling: one joint posterior sample on random candidates.
    Ts,
}

/// The exploration weight of GP-UCB.
///
/// The regret analysis (paper 004, Lemma 6) needs `β_t` to grow as `O(log t)`,
/// which both schedules do; at budgets of tens of rounds in ten dimensions they
/// keep the search near the box's corners, where the posterior variance is
/// largest, so the default is a fixed `β = 1` (mean plus one standard deviation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UcbBeta {
    /// A constant `β`.
    Fixed(f64),
    /// `β_t = 0.2 · D · ln(2t)` (Kandasamy et al., 2015).
    Kandasamy,
    /// `β_t = 2 log(t^(D/2+2) π² / 3δ)` (Srinivas et al., 2010, Thm. 2).
    Srinivas {
        /// The failure probability `δ`.
        delta: f64,
    },
}

/// How a client picks its next point.
#[derive(Debug, Clone, PartialEq)]
pub struct AcquisitionStep {
    /// The acquisition function.
    pub kind: AcquisitionKind,
    /// The UCB `β`.
    pub ucb_beta: UcbBeta,
    /// Random candidates and L-BFGS polish of the maximiser.
    pub optimizer: OptimizerConfig,
    /// Candidates of a Thompson sample.
    pub ts_candidates: usize,
}

impl AcquisitionStep {
    /// The UCB `β_t` at round `t ≥ 1` in dimension `dim`.
    pub fn beta(&self, t: usize, dim: usize) -> Result<f64, AlgorithmError> {
        let t = t.max(1);
        Ok(match self.ucb_beta {
            UcbBeta::Fixed(b) => b,
            UcbBeta::Kandasamy => 0.2 * dim as f64 * (2.0 * t as f64).ln(),
            UcbBeta::Srinivas { delta } => fedhe_bo::acquisition::ucb_beta(t, dim, delta)?,
        })
    }

    /// The maximiser in the unit cube of the acquisition on `surrogate` at round
    /// `t`, with `incumbent` the best utility seen by this client (EI, PI) and
    /// `anchors` its best points, around which half the candidates are drawn.
    pub fn propose(
        &self,
        surrogate: &dyn Surrogate,
        t: usize,
        incumbent: f64,
        anchors: &[Vec<f64>],
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let dim = anchors.first().map_or(0, Vec::len);
        self.propose_in(surrogate, t, incumbent, anchors, &Bounds::unit(dim)?, rng)
    }

    /// [`Self::propose`] in the box `bounds` of the unit cube (a trust
    /// region, `fedhe_bo::trust_region`).
    pub fn propose_in(
        &self,
        surrogate: &dyn Surrogate,
        t: usize,
        incumbent: f64,
        anchors: &[Vec<f64>],
        bounds: &Bounds,
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let dim = bounds.dim();
        let Some(acquisition) = self.acquisition(t, dim, incumbent)? else {
            let (lo, hi) = (bounds.lower(), bounds.upper());
            let candidates = DMatrix::from_fn(self.ts_candidates.max(1), dim, |_, j| {
                lo[j] + (hi[j] - lo[j]) * rng.gen::<f64>()
            });
            let sample = surrogate.sample_joint(&candidates, rng)?;
            let best = sample.argmax().0;
            return Ok(candidates.row(best).iter().copied().collect());
        };
        let config = OptimizerConfig {
            seed: rng.gen(),
            ..self.optimizer.clone()
        };
        let objective = |x: &[f64]| match surrogate.predict_point(x) {
            Ok(p) => acquisition.value_and_grad(&p),
            Err(_) => (f64::NEG_INFINITY, vec![0.0; x.len()]),
        };
        Ok(maximize_near(objective, bounds, &config, anchors)?.x)
    }

    /// The acquisition function at round `t`; `None` for Thompson sampling,
    /// which draws a sample instead.
    fn acquisition(
        &self,
        t: usize,
        dim: usize,
        incumbent: f64,
    ) -> Result<Option<Acquisition>, AlgorithmError> {
        Ok(match self.kind {
            AcquisitionKind::Ucb => Some(Acquisition::Ucb {
                beta: self.beta(t, dim)?,
            }),
            AcquisitionKind::Ei => Some(Acquisition::LogEi { best: incumbent }),
            AcquisitionKind::Pi => Some(Acquisition::LogPi { best: incumbent }),
            AcquisitionKind::Ts => None,
        })
    }

    /// A batch of `size` points on `surrogate` by local penalisation
    /// (González et al. 2016, Alg. 1): the first maximises the acquisition as
    /// [`Self::propose`] does, each next one the acquisition's log (UCB through
    /// a softplus) plus the log-penalties of the points before it
    /// ([`LocalPenalty`]), with `L` and `M` estimated on `anchors` and `sample`
    /// uniform points (`M = max (μ + κσ)` with `κ = optimism`; see
    /// [`lipschitz_and_max`]). Thompson sampling draws `size` independent samples.
    /// Deterministic given `rng`, so members that share its seed compute the
    /// same batch.
    #[allow(clippy::too_many_arguments)]
    pub fn propose_batch(
        &self,
        surrogate: &dyn Surrogate,
        t: usize,
        incumbent: f64,
        anchors: &[Vec<f64>],
        size: usize,
        sample: usize,
        optimism: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let dim = anchors.first().map_or(0, Vec::len);
        let Some(acquisition) = self.acquisition(t, dim, incumbent)? else {
            return (0..size)
                .map(|_| self.propose(surrogate, t, incumbent, anchors, rng))
                .collect();
        };
        let bounds = Bounds::unit(dim)?;
        let mut points = anchors.to_vec();
        points.extend((0..sample).map(|_| (0..dim).map(|_| rng.gen::<f64>()).collect::<Vec<_>>()));
        let predictions = points
            .iter()
            .map(|x| surrogate.predict_point(x))
            .collect::<Result<Vec<_>, _>>()?;
        let (lipschitz, max) = lipschitz_and_max(&predictions, optimism).ok_or_else(|| {
            crate::error::config("acquisition", "a batch needs anchors or sample points")
        })?;
        let log_acquisition = |p: &PointPrediction| {
            let (value, grad) = acquisition.value_and_grad(p);
            match acquisition {
                Acquisition::Ucb { .. } => {
                    let (log, slope) = log_softplus(value);
                    (log, grad.into_iter().map(|g| g * slope).collect())
                }
                _ => (value, grad),
            }
        };
        let mut penalties: Vec<LocalPenalty> = Vec::with_capacity(size);
        let mut batch = Vec::with_capacity(size);
        for _ in 0..size {
            let config = OptimizerConfig {
                seed: rng.gen(),
                ..self.optimizer.clone()
            };
            let objective = |x: &[f64]| match surrogate.predict_point(x) {
                Ok(p) => {
                    let (mut value, mut grad) = log_acquisition(&p);
                    for penalty in &penalties {
                        let (v, g) = penalty.log_value_and_grad(x);
                        value += v;
                        grad.iter_mut().zip(g).for_each(|(a, b)| *a += b);
                    }
                    (value, grad)
                }
                Err(_) => (f64::NEG_INFINITY, vec![0.0; x.len()]),
            };
            let x = maximize_near(objective, &bounds, &config, anchors)?.x;
            let at = surrogate.predict_point(&x)?;
            penalties.push(LocalPenalty::new(x.clone(), &at, lipschitz, max)?);
            batch.push(x);
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_gp::{ExactGpParams, KernelParams, SquaredExponential};
    use rand::SeedableRng;

    /// A GP on eight points of a 2-D function with one peak at (0.7, 0.3):
    /// uncertain away from the points, as a posterior is while a batch is
    /// worth spreading.
    fn peaked() -> ExactGp<SquaredExponential> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = DMatrix::from_fn(8, 2, |_, _| rng.gen::<f64>());
        let y = DVector::from_fn(8, |i, _| {
            let (a, b) = (x[(i, 0)] - 0.7, x[(i, 1)] - 0.3);
            -(a * a + b * b) * 8.0
        });
        let kernel = SquaredExponential::new(KernelParams::isotropic(2, 0.2, 1.0).unwrap());
        ExactGpParams::new(kernel)
            .noise_variance(1e-4)
            .fit(&x, &y)
            .unwrap()
    }

    /// Issue 46: through a space of a float and an int, the model is read
    /// (and sampled) at the int's cell centre, and its gradient is zero along
    /// the int.
    #[test]
    fn a_projected_surrogate_reads_the_model_at_the_canonical_point() {
        let gp = peaked();
        let space: fedhe_tasks::SpaceSpec = serde_json::from_value(serde_json::json!({
            "params": [
                {"name": "a", "type": "float", "low": 0.0, "high": 1.0},
                {"name": "k", "type": "int", "low": 0, "high": 4},
            ]
        }))
        .unwrap();
        let space = space.validate().unwrap();
        let projected = Projected::new(&gp, &space);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..200 {
            let x = [rng.gen::<f64>(), rng.gen::<f64>()];
            let c = space.canonical(&x);
            assert_ne!(c[1], x[1]);
            let p = projected.predict_point(&x).unwrap();
            let q = gp.predict_point(&c).unwrap();
            assert_eq!((p.mean, p.variance), (q.mean, q.variance));
            assert_eq!(p.mean_grad[0], q.mean_grad[0]);
            assert_eq!((p.mean_grad[1], p.variance_grad[1]), (0.0, 0.0));
        }
        let xs = DMatrix::from_fn(5, 2, |_, _| rng.gen::<f64>());
        let canonical =
            DMatrix::from_fn(5, 2, |r, j| space.canonical(&[xs[(r, 0)], xs[(r, 1)]])[j]);
        let mut r1 = ChaCha8Rng::seed_from_u64(9);
        let mut r2 = ChaCha8Rng::seed_from_u64(9);
        assert_eq!(
            projected.sample_joint(&xs, &mut r1).unwrap(),
            gp.sample_joint(&canonical, &mut r2).unwrap()
        );
    }

    fn step(kind: AcquisitionKind) -> AcquisitionStep {
        AcquisitionStep {
            kind,
            ucb_beta: UcbBeta::Fixed(1.0),
            optimizer: OptimizerConfig {
                n_candidates: 500,
                n_polish: 2,
                max_iters: 50,
                ..OptimizerConfig::default()
            },
            ts_candidates: 64,
        }
    }

    /// A penalised batch: its first point is the acquisition's maximiser (the
    /// same value as an unpenalised search finds), the others are spread
    /// apart, and the batch repeats for a seed.
    #[test]
    fn a_penalised_batch_starts_at_the_maximiser_and_spreads() {
        let gp = peaked();
        let anchors = vec![vec![0.6, 0.4], vec![0.2, 0.9]];
        for kind in [AcquisitionKind::Ucb, AcquisitionKind::Ei] {
            let s = step(kind);
            let incumbent = gp.train_y_standardized().max();
            let batch = |seed| {
                s.propose_batch(
                    &gp,
                    3,
                    incumbent,
                    &anchors,
                    4,
                    64,
                    0.0,
                    &mut ChaCha8Rng::seed_from_u64(seed),
                )
                .unwrap()
            };
            let a = batch(11);
            assert_eq!(a, batch(11), "{kind:?}: deterministic for a seed");
            assert_eq!(a.len(), 4);
            // A member that needs only the first two slots computes the same
            // two points as one that computes all four.
            let prefix = s
                .propose_batch(
                    &gp,
                    3,
                    incumbent,
                    &anchors,
                    2,
                    64,
                    0.0,
                    &mut ChaCha8Rng::seed_from_u64(11),
                )
                .unwrap();
            assert_eq!(prefix[..], a[..2], "{kind:?}: a shorter batch is a prefix");
            let acquisition = s.acquisition(3, 2, incumbent).unwrap().unwrap();
            let value = |x: &[f64]| acquisition.value_and_grad(&gp.predict_point(x).unwrap()).0;
            let alone = s
                .propose(
                    &gp,
                    3,
                    incumbent,
                    &anchors,
                    &mut ChaCha8Rng::seed_from_u64(5),
                )
                .unwrap();
            assert!(
                value(&a[0]) >= value(&alone) - 1e-3 * value(&alone).abs().max(1.0),
                "{kind:?}: the first point maximises the acquisition"
            );
            for i in 0..a.len() {
                for j in 0..i {
                    let d = a[i]
                        .iter()
                        .zip(&a[j])
                        .map(|(u, v)| (u - v).powi(2))
                        .sum::<f64>();
                    assert!(
                        d.sqrt() > 0.02,
                        "{kind:?}: points {i} and {j} coincide: {a:?}"
                    );
                }
            }
        }
    }
}
