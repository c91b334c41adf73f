//! The posterior an acquisition reads — a client's local exact GP or the global
//! dPITC posterior (paper 004, eqs. 9-10) — and one acquisition step on it
//! (Alg. 2, lines 16-17 and 22-23).

use crate::AlgorithmError;
use fedhe_bo::acquisition::Acquisition;
use fedhe_bo::optim::{maximize_near, Bounds, OptimizerConfig};
use fedhe_gp::exact::PointPrediction;
use fedhe_gp::sparse::{Dpitc, GlobalSummary};
use fedhe_gp::{ExactGp, Kernel};
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

/// The global posterior: the shared dPITC model and the decrypted global summary.
#[derive(Debug, Clone)]
pub struct GlobalPosterior<K: Kernel> {
    /// The shared model (kernel, noise, support set).
    pub model: Dpitc<K>,
    /// The global summary `G` (eq. 8).
    pub summary: GlobalSummary,
}

impl<K: Kernel> Surrogate for GlobalPosterior<K> {
    fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError> {
        Ok(self.model.predict_point(&self.summary, x)?)
    }

    fn sample_joint(
        &self,
        xs: &DMatrix<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<DVector<f64>, AlgorithmError> {
        Ok(self.model.sample_joint(&self.summary, xs, rng)?)
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
        let bounds = Bounds::unit(dim)?;
        let acquisition = match self.kind {
            AcquisitionKind::Ucb => Acquisition::Ucb {
                beta: self.beta(t, dim)?,
            },
            AcquisitionKind::Ei => Acquisition::LogEi { best: incumbent },
            AcquisitionKind::Pi => Acquisition::LogPi { best: incumbent },
            AcquisitionKind::Ts => {
                let candidates =
                    DMatrix::from_fn(self.ts_candidates.max(1), dim, |_, _| rng.gen::<f64>());
                let sample = surrogate.sample_joint(&candidates, rng)?;
                let best = sample.argmax().0;
                return Ok(candidates.row(best).iter().copied().collect());
            }
        };
        let config = OptimizerConfig {
            seed: rng.gen(),
            ..self.optimizer.clone()
        };
        let objective = |x: &[f64]| match surrogate.predict_point(x) {
            Ok(p) => acquisition.value_and_grad(&p),
            Err(_) => (f64::NEG_INFINITY, vec![0.0; x.len()]),
        };
        Ok(maximize_near(objective, &bounds, &config, anchors)?.x)
    }
}
