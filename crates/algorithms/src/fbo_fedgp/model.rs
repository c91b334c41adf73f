//! What the federation shares in plaintext after a secure sum: the output
//! scaling, the kernel hyper-parameters, and the normalisation of summaries.

use crate::AlgorithmError;
use fedhe_gp::hyperfit::HyperBounds;
use fedhe_gp::sparse::{packed_len, LocalSummary};
use fedhe_gp::{Kernel, KernelParams};
use serde::{Deserialize, Serialize};

/// A fixed monotone transform of the utility before modelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputWarping {
    /// The utility as it is.
    None,
    /// `sign(u) · ln(1 + |u|)`: keeps heavy-tailed objectives (CEC-2005 values
    /// span ten orders of magnitude) within what a stationary GP can fit and
    /// within the fixed-point channel's bound. Monotone, so maximisers agree.
    SignedLog,
}

impl OutputWarping {
    /// `w(u)`.
    pub fn apply(self, u: f64) -> f64 {
        match self {
            OutputWarping::None => u,
            OutputWarping::SignedLog => u.signum() * u.abs().ln_1p(),
        }
    }
}

/// The federation's output standardisation, from the secure sum of every
/// client's `(n_i, Σu, Σu²)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputScaling {
    /// Mean utility over all clients' data.
    pub mean: f64,
    /// Its standard deviation (1 when the data are constant).
    pub std: f64,
}

impl OutputScaling {
    /// From the summed statistics `(n, Σu, Σu²)` (each divided by the same
    /// public constant, which cancels).
    pub fn from_sums(sums: &[f64]) -> Result<Self, AlgorithmError> {
        let [n, s, s2] = sums else {
            return Err(crate::error::config(
                "statistics",
                format!("expected 3 sums, got {}", sums.len()),
            ));
        };
        if n.is_nan() || *n <= 0.0 {
            return Err(crate::error::config(
                "statistics",
                "no data in the federation",
            ));
        }
        let mean = s / n;
        let var = (s2 / n - mean * mean).max(0.0);
        let std = var.sqrt();
        Ok(Self {
            mean,
            std: if std > 1e-12 { std } else { 1.0 },
        })
    }

    /// `(u − mean) / std`.
    pub fn standardise(&self, u: f64) -> f64 {
        (u - self.mean) / self.std
    }
}

/// Kernel hyper-parameters in log space: `[log ℓ_1..log ℓ_D, log σ_f², log σ_n²]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hyperparameters {
    log: Vec<f64>,
}

impl Hyperparameters {
    /// From natural units.
    pub fn new(
        lengthscales: Vec<f64>,
        signal_variance: f64,
        noise_variance: f64,
    ) -> Result<Self, AlgorithmError> {
        let params = KernelParams::new(lengthscales, signal_variance)?;
        if !(noise_variance.is_finite() && noise_variance > 0.0) {
            return Err(crate::error::config(
                "noise_variance",
                format!("must be finite and positive, got {noise_variance}"),
            ));
        }
        let mut log = params.to_log();
        log.push(noise_variance.ln());
        Ok(Self { log })
    }

    /// From the log vector.
    pub fn from_log(log: Vec<f64>) -> Result<Self, AlgorithmError> {
        if log.len() < 3 || log.iter().any(|v| !v.is_finite()) {
            return Err(crate::error::config(
                "hyperparameters",
                "need finite log length-scales, signal and noise variance",
            ));
        }
        Ok(Self { log })
    }

    /// The log vector (what a client contributes to the average).
    pub fn log(&self) -> &[f64] {
        &self.log
    }

    /// The kernel of `family` with these hyper-parameters.
    pub fn kernel<K: Kernel>(&self, family: &K) -> Result<K, AlgorithmError> {
        let params = KernelParams::from_log(&self.log[..self.log.len() - 1])?;
        Ok(family.with_params(params))
    }

    /// Public candidates for the federated maximum-likelihood search: these
    /// values, an isotropic grid (8 length-scales log-spaced over the bounds ×
    /// 4 noise levels, unit signal variance), and log-normal perturbations of
    /// these values (σ = 0.5 per coordinate), clamped to `bounds`, up to `count`.
    pub fn candidates<R: rand::Rng + ?Sized>(
        &self,
        bounds: &HyperBounds,
        count: usize,
        rng: &mut R,
    ) -> Vec<Hyperparameters> {
        use rand_distr::{Distribution, Normal};
        let dim = self.log.len() - 2;
        let clamp_log = |v: f64, (lo, hi): (f64, f64)| v.clamp(lo.ln(), hi.ln());
        let bound_of = |i: usize| {
            if i < dim {
                bounds.lengthscale
            } else if i == dim {
                bounds.signal_variance
            } else {
                bounds.noise_variance
            }
        };
        let mut out = vec![self.clone()];
        let (l_lo, l_hi) = (bounds.lengthscale.0.ln(), bounds.lengthscale.1.ln());
        let (n_lo, n_hi) = (bounds.noise_variance.0.ln(), bounds.noise_variance.1.ln());
        for i in 0..8 {
            for j in 0..4 {
                let l = l_lo + (l_hi - l_lo) * (i as f64 + 0.5) / 8.0;
                let n = n_lo + (n_hi - n_lo) * j as f64 / 4.0;
                let mut log = vec![l; dim];
                log.push(clamp_log(0.0, bounds.signal_variance));
                log.push(n);
                out.push(Self { log });
            }
        }
        let step = Normal::new(0.0, 0.5).expect("σ = 0.5 is valid");
        while out.len() < count {
            let log = self
                .log
                .iter()
                .enumerate()
                .map(|(i, v)| clamp_log(v + step.sample(rng), bound_of(i)))
                .collect();
            out.push(Self { log });
        }
        out.truncate(count.max(1));
        out
    }

    /// The signal variance `σ_f²`.
    pub fn signal_variance(&self) -> f64 {
        self.log[self.log.len() - 2].exp()
    }

    /// The noise variance `σ_n²`.
    pub fn noise(&self) -> f64 {
        self.log[self.log.len() - 1].exp()
    }
}

/// How a local summary is normalised for the channel. With `C = Σ_{D_i D_i|S}`,
/// `σ_n² C⁻¹ ⪯ I`, so `σ_n²/σ_f⁴ · K̇_SS` has entries at most `n_i` and
/// `σ_n²/σ_f² · ṁ_S` at most `n_i · max|y|`; dividing also by the public cap
/// `n_max` on a client's data keeps every entry near 1 whatever the noise level,
/// so the fixed-point channel's precision goes where the values are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SummaryScaling {
    support: usize,
    m_factor: f64,
    k_factor: f64,
}

impl SummaryScaling {
    /// For support size `|S|`, the federation's hyper-parameters and `n_max`.
    pub fn new(support: usize, hyper: &Hyperparameters, n_max: f64) -> Self {
        let (sf2, sn2) = (hyper.signal_variance(), hyper.noise());
        Self {
            support,
            m_factor: sn2 / (sf2 * n_max),
            k_factor: sn2 / (sf2 * sf2 * n_max),
        }
    }

    /// The packed, normalised vector a client sends.
    pub fn to_channel(&self, summary: &LocalSummary) -> Vec<f64> {
        let mut packed = summary.pack();
        for (i, v) in packed.iter_mut().enumerate() {
            *v *= if i < self.support {
                self.m_factor
            } else {
                self.k_factor
            };
        }
        packed
    }

    /// The summed summary back in model units.
    pub fn from_channel(&self, sum: &[f64]) -> Result<LocalSummary, AlgorithmError> {
        if sum.len() != packed_len(self.support) {
            return Err(crate::error::config(
                "summary",
                format!(
                    "expected {} values for |S| = {}, got {}",
                    packed_len(self.support),
                    self.support,
                    sum.len()
                ),
            ));
        }
        let unscaled: Vec<f64> = sum
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v / if i < self.support {
                    self.m_factor
                } else {
                    self.k_factor
                }
            })
            .collect();
        Ok(LocalSummary::unpack(self.support, &unscaled)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn scaling_from_sums_is_the_pooled_mean_and_std() {
        // Two clients: {1, 2} and {3}: mean 2, population variance 2/3.
        let s = OutputScaling::from_sums(&[3.0 / 10.0, 6.0 / 10.0, 14.0 / 10.0]).unwrap();
        assert!((s.mean - 2.0).abs() < 1e-15);
        assert!((s.std - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!(OutputScaling::from_sums(&[0.0, 0.0, 0.0]).is_err());
        assert!(OutputScaling::from_sums(&[1.0, 2.0]).is_err());
    }

    #[test]
    fn signed_log_is_monotone_and_odd() {
        let w = OutputWarping::SignedLog;
        assert_eq!(w.apply(0.0), 0.0);
        assert!((w.apply(std::f64::consts::E - 1.0) - 1.0).abs() < 1e-15);
        assert_eq!(w.apply(-5.0), -w.apply(5.0));
        assert!(w.apply(1e10) > w.apply(1e9));
    }

    #[test]
    fn summary_scaling_round_trips() {
        let hyper = Hyperparameters::new(vec![0.5, 0.5], 2.0, 0.01).unwrap();
        let scaling = SummaryScaling::new(2, &hyper, 50.0);
        let summary = LocalSummary {
            m_s: DVector::from_vec(vec![3.0, -1.0]),
            k_ss: DMatrix::from_row_slice(2, 2, &[4.0, 1.5, 1.5, 2.0]),
        };
        let sent = scaling.to_channel(&summary);
        assert_eq!(sent.len(), packed_len(2));
        assert!((sent[0] - 3.0 * 0.01 / (2.0 * 50.0)).abs() < 1e-18);
        let back = scaling.from_channel(&sent).unwrap();
        assert!((back.m_s - summary.m_s).amax() < 1e-12);
        assert!((back.k_ss - summary.k_ss).amax() < 1e-12);
        assert!(scaling.from_channel(&sent[1..]).is_err());
    }
}
