//! The ring context: degree, RNS primes and their cached NTT plans.

use crate::modular::is_prime;
use crate::RingError;
use concrete_ntt::prime64::Plan;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// R_q = Z_q\[X\]/(X^N + 1) with q = ∏ p_i: the degree, the primes, and one
/// negacyclic NTT plan per prime. Building plans costs milliseconds, so contexts
/// are cached process-wide: [`RingContext::new`] returns the same `Arc` for the
/// same (N, primes).
pub struct RingContext {
    degree: usize,
    moduli: Vec<u64>,
    plans: Vec<Plan>,
}

impl std::fmt::Debug for RingContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingContext")
            .field("degree", &self.degree)
            .field("moduli", &self.moduli)
            .finish()
    }
}

impl PartialEq for RingContext {
    fn eq(&self, other: &Self) -> bool {
        self.degree == other.degree && self.moduli == other.moduli
    }
}
impl Eq for RingContext {}

type ContextCache = Mutex<HashMap<(usize, Vec<u64>), Arc<RingContext>>>;

impl RingContext {
    /// The context for degree N and the given primes, built once per process.
    ///
    /// Each prime must be distinct, below 2^62 and ≡ 1 (mod 2N) so that a
    /// primitive 2N-th root of unity exists (negacyclic NTT).
    pub fn new(degree: usize, moduli: &[u64]) -> Result<Arc<Self>, RingError> {
        static CACHE: OnceLock<ContextCache> = OnceLock::new();
        let key = (degree, moduli.to_vec());
        let cache = CACHE.get_or_init(Default::default);
        if let Some(ctx) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(Arc::clone(ctx));
        }
        let ctx = Arc::new(Self::build(degree, moduli)?);
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, Arc::clone(&ctx));
        Ok(ctx)
    }

    fn build(degree: usize, moduli: &[u64]) -> Result<Self, RingError> {
        if !degree.is_power_of_two() || !(16..=65536).contains(&degree) {
            return Err(RingError::InvalidDegree(degree));
        }
        let mut sorted = moduli.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if moduli.is_empty() || sorted.len() != moduli.len() {
            return Err(RingError::InvalidModulusChain(moduli.len()));
        }
        let plans = moduli
            .iter()
            .map(|&p| {
                let valid = p < (1 << 62) && is_prime(p) && p % (2 * degree as u64) == 1;
                valid
                    .then(|| Plan::try_new(degree, p))
                    .flatten()
                    .ok_or(RingError::InvalidModulus { modulus: p, degree })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            degree,
            moduli: moduli.to_vec(),
            plans,
        })
    }

    /// The ring degree N.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The RNS primes p_0, …, p_{k−1}.
    pub fn moduli(&self) -> &[u64] {
        &self.moduli
    }

    /// The number of primes k.
    pub fn limb_count(&self) -> usize {
        self.moduli.len()
    }

    /// log2 q = Σ log2 p_i.
    pub fn log2_modulus(&self) -> f64 {
        self.moduli.iter().map(|&p| (p as f64).log2()).sum()
    }

    pub(crate) fn plan(&self, limb: usize) -> &Plan {
        &self.plans[limb]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_parameters() {
        assert_eq!(
            RingContext::new(1000, &[0x3fffffffffff0001]).unwrap_err(),
            RingError::InvalidDegree(1000)
        );
        // 0x3fffffffffff0001 is ≡ 1 mod 2^16 but not mod 2^18 (N = 2^17).
        assert!(matches!(
            RingContext::new(1 << 16, &[97]),
            Err(RingError::InvalidModulus { .. })
        ));
        assert!(matches!(
            RingContext::new(1024, &[0x3fffffffffff0001, 0x3fffffffffff0001]),
            Err(RingError::InvalidModulusChain(2))
        ));
        assert!(matches!(
            RingContext::new(1024, &[0x3fffffffffff0003]),
            Err(RingError::InvalidModulus { .. })
        ));
    }

    #[test]
    fn contexts_are_cached() {
        let a = RingContext::new(1024, &[0x3fffffffffff0001]).unwrap();
        let b = RingContext::new(1024, &[0x3fffffffffff0001]).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!((a.log2_modulus() - 62.0).abs() < 1e-3);
    }
}
