//! The server's side of a DP-FTS-DE round (paper 000 Alg. 1): the Poisson
//! batch (line 6), the secure sum of the agents' weighted clipped vectors
//! (line 10, through [`Aggregator`]), the central noise (line 11), the
//! broadcast (line 12) and the accountant (line 13).

use super::params::{NoiseMode, ValidParams};
use crate::channel::Aggregator;
use crate::AlgorithmError;
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_dp::{GaussianMechanism, PoissonSampling, PrivacyAccountant};
use fedhe_ring::Csprng;
use nalgebra::DVector;

/// The server role of DP-FTS-DE.
pub struct DpFtsDeServer<'c> {
    aggregator: Aggregator<'c>,
    noise: NoiseMode,
    sampling: PoissonSampling,
    clip_norm: f64,
    subregions: usize,
    rng: Csprng,
    accountant: Option<PrivacyAccountant>,
    delta: f64,
}

impl<'c> DpFtsDeServer<'c> {
    /// A server on `channel` for `params`, drawing the batch and the central
    /// noise from `rng`; it accounts for privacy unless the noise is `none`.
    pub fn new(
        channel: &'c mut dyn SecureSum,
        params: &ValidParams,
        rng: Csprng,
    ) -> Result<Self, AlgorithmError> {
        Ok(Self {
            aggregator: Aggregator::new(channel, params.channel_bound()),
            noise: params.noise,
            sampling: PoissonSampling::new(params.mechanism.sampling_rate())?,
            clip_norm: params.clip.norm(),
            subregions: params.subregions,
            rng,
            accountant: (params.noise != NoiseMode::None)
                .then(|| PrivacyAccountant::new(params.accountant, params.mechanism)),
            delta: params.delta,
        })
    }

    /// The batch `S_t`: each of `agents` agents independently with probability
    /// `q` (Alg. 1 line 6), as membership flags.
    pub fn select(&mut self, agents: usize) -> Vec<bool> {
        let batch = self.sampling.sample(&mut self.rng, agents);
        let mut flags = vec![false; agents];
        for i in batch {
            flags[i] = true;
        }
        flags
    }

    /// The standard deviation of the noise on the *sum* before division by
    /// `q`: `z·φ_max·S` (so that `ω_t^(i)` gets `z·φ_max·S/q`, line 11).
    pub fn sum_noise_std(&self, noise_multiplier: f64, phi_max: f64) -> f64 {
        noise_multiplier * phi_max * self.clip_norm
    }

    /// Lines 10-12: the secure sum `Σ_n c_n` of the agents' contributions,
    /// central noise `N(0, (z·φ_max·S)²)` when configured, divided by `q`:
    /// `ω_t^(i) = q⁻¹ Σ_{n ∈ S_t} φ_n^(i) ω̂_{n,t} + N(0, (z·φ_max·S/q)² I)`
    /// (eq. 4). Returns the `P` broadcast vectors.
    pub fn broadcast(
        &mut self,
        contributions: Vec<(MemberId, Vec<f64>)>,
        sum_noise_std: f64,
    ) -> Result<Vec<DVector<f64>>, AlgorithmError> {
        let mut sum = self
            .aggregator
            .aggregate("DP-FTS-DE weighted vectors", contributions)?;
        if self.noise == NoiseMode::Central {
            sum = GaussianMechanism::with_std_dev(sum_noise_std)?.privatize(&mut self.rng, &sum)?;
        }
        let q = self.sampling.rate();
        let m = sum.len() / self.subregions;
        Ok((0..self.subregions)
            .map(|i| DVector::from_iterator(m, sum[i * m..(i + 1) * m].iter().map(|v| v / q)))
            .collect())
    }

    /// Line 13: composes one more step of the subsampled Gaussian and returns
    /// ε at the configured δ (`None` without noise).
    pub fn account(&mut self) -> Result<Option<f64>, AlgorithmError> {
        match &mut self.accountant {
            Some(a) => {
                a.compose(1);
                Ok(Some(a.epsilon(self.delta)?.epsilon))
            }
            None => Ok(None),
        }
    }

    /// Secure sums run.
    pub fn aggregations(&self) -> usize {
        self.aggregator.aggregations()
    }

    /// Bytes `member` has sent.
    pub fn bytes_sent(&self, member: &MemberId) -> u64 {
        self.aggregator.bytes_sent(member)
    }
}
