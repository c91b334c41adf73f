//! Poisson subsampling: each of n members joins a step's batch independently
//! with probability q (Abadi et al. 2016; DP-FTS-DE Alg. 1, the server's
//! "selects each agent with probability q"). The accountant's subsampled
//! Gaussian RDP assumes exactly this scheme, with add/remove-one adjacency.

use crate::sampling::bernoulli_f64;
use crate::DpError;
use fedhe_ring::Csprng;

/// Poisson sampling at rate q ∈ (0, 1], validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoissonSampling {
    rate: f64,
}

impl PoissonSampling {
    /// Checks q ∈ (0, 1]; the error names `q`.
    pub fn new(rate: f64) -> Result<Self, DpError> {
        if rate > 0.0 && rate <= 1.0 {
            Ok(Self { rate })
        } else {
            Err(DpError::invalid("q (sampling rate)", rate, "in (0, 1]"))
        }
    }

    /// The rate q.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// One exact Bernoulli(q) draw: is this member in the batch?
    pub fn includes(&self, rng: &mut Csprng) -> bool {
        bernoulli_f64(rng, self.rate)
    }

    /// The indices in 0..population selected for one step, in increasing order.
    pub fn sample(&self, rng: &mut Csprng, population: usize) -> Vec<usize> {
        (0..population).filter(|_| self.includes(rng)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes_are_binomial() {
        let mut rng = Csprng::from_u128_seed(31);
        let (n, q, reps) = (200usize, 0.25, 2000);
        let sampler = PoissonSampling::new(q).unwrap();
        let sizes: Vec<f64> = (0..reps)
            .map(|_| sampler.sample(&mut rng, n).len() as f64)
            .collect();
        let mean = sizes.iter().sum::<f64>() / reps as f64;
        let var = sizes.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (reps - 1) as f64;
        let (m, v) = (n as f64 * q, n as f64 * q * (1.0 - q));
        assert!((mean - m).abs() < 5.0 * (v / reps as f64).sqrt(), "{mean}");
        assert!((var - v).abs() < 0.15 * v, "{var}");
        // Every member is equally likely: member 0 and member 199 both near q.
        let mut first = 0;
        let mut last = 0;
        for _ in 0..reps {
            let s = sampler.sample(&mut rng, n);
            first += usize::from(s.first() == Some(&0));
            last += usize::from(s.last() == Some(&(n - 1)));
        }
        let sd = (reps as f64 * q * (1.0 - q)).sqrt();
        assert!((first as f64 - reps as f64 * q).abs() < 5.0 * sd);
        assert!((last as f64 - reps as f64 * q).abs() < 5.0 * sd);
    }

    #[test]
    fn rate_one_selects_everyone_and_bad_rates_are_refused() {
        let mut rng = Csprng::from_u128_seed(32);
        assert_eq!(
            PoissonSampling::new(1.0).unwrap().sample(&mut rng, 5),
            vec![0, 1, 2, 3, 4]
        );
        for q in [0.0, -0.1, 1.01, f64::NAN] {
            let e = PoissonSampling::new(q).unwrap_err();
            assert!(e.to_string().starts_with("invalid q"), "{e}");
        }
    }
}
