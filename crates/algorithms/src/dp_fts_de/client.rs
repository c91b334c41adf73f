//! The agent's side of a DP-FTS-DE round: clip its posterior draw and weight
//! it per sub-region (paper 000 Alg. 1 lines 9-10, moved to the agent so the
//! server never sees an individual `ω_{n,t}`), and, with distributed noise,
//! add its share of the Gaussian noise before encryption.

use crate::AlgorithmError;
use fedhe_dp::{ClipParams, GaussianMechanism};
use fedhe_ring::Csprng;
use nalgebra::DVector;

/// What an agent sends in one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    /// `(φ_n^(i) ω̂_{n,t})_{i ∈ [P]}` (`P·M` values) if the agent is in the
    /// batch `S_t`, zeros otherwise; plus its noise share in distributed mode.
    pub values: Vec<f64>,
    /// Whether `ω_{n,t}` was clipped (a simulation statistic; in distributed
    /// mode nobody else learns it).
    pub clipped: bool,
}

/// `ω̂ = ω / max(1, ‖ω‖₂ / (S/√P))` (Alg. 1 line 9), and whether it was scaled.
pub fn clip_to_subregion_norm(
    omega: &DVector<f64>,
    clip_norm: f64,
    subregions: usize,
) -> Result<(Vec<f64>, bool), AlgorithmError> {
    let clip = ClipParams {
        norm: clip_norm / (subregions as f64).sqrt(),
    }
    .validate()?;
    let mut w: Vec<f64> = omega.iter().copied().collect();
    let clipped = clip.clip_in_place(&mut w)?;
    Ok((w, clipped))
}

/// The agent's contribution: `(φ_n^(i) ω̂)_{i}` when `selected`, else zeros
/// of the same length (every member contributes in every round, so the
/// channel's n-of-n decryption holds and, with distributed noise, nobody
/// learns the batch); then, if `share` is given, the agent's noise share
/// `γ·(round(v/γ) + Y)` of [`GaussianMechanism::privatize`].
pub fn contribution(
    omega: &DVector<f64>,
    clip_norm: f64,
    weights: &[f64],
    selected: bool,
    share: Option<(&GaussianMechanism, &mut Csprng)>,
) -> Result<Contribution, AlgorithmError> {
    let (clipped_omega, clipped) = clip_to_subregion_norm(omega, clip_norm, weights.len())?;
    let mut values = Vec::with_capacity(weights.len() * omega.len());
    for phi in weights {
        let scale = if selected { *phi } else { 0.0 };
        values.extend(clipped_omega.iter().map(|w| scale * w));
    }
    if let Some((mechanism, rng)) = share {
        values = mechanism.privatize(rng, &values)?;
    }
    Ok(Contribution { values, clipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contributions_are_clipped_per_subregion_and_weighted() {
        let omega = DVector::from_vec(vec![3.0, 4.0]); // ‖ω‖ = 5
        let c = contribution(&omega, 2.0 * 2f64.sqrt(), &[0.25, 0.5], true, None).unwrap();
        // S/√P = 2: ω̂ = (1.2, 1.6).
        assert!(c.clipped);
        let want = [0.3, 0.4, 0.6, 0.8];
        assert!(c
            .values
            .iter()
            .zip(want)
            .all(|(a, b)| (a - b).abs() < 1e-12));
        let out = contribution(&omega, 100.0, &[0.25, 0.5], false, None).unwrap();
        assert!(!out.clipped && out.values == vec![0.0; 4]);
        let mech = GaussianMechanism::with_std_dev(1.0).unwrap();
        let mut rng = Csprng::from_u128_seed(3);
        let noisy = contribution(&omega, 100.0, &[1.0], false, Some((&mech, &mut rng))).unwrap();
        assert!(noisy.values.iter().any(|v| *v != 0.0));
        assert!(contribution(&omega, 0.0, &[1.0], true, None).is_err());
    }
}
