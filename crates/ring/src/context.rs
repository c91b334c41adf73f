//! The ring context: degree, RNS primes and their cached NTT plans.

use crate::modular::{add_mod, is_prime, mul_mod_shoup, neg_mod_if, shoup_precompute};
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
    reducers: Vec<SignedReducer>,
}

/// Constants to reduce a signed 128-bit integer modulo p with multiplications only.
#[derive(Clone, Copy, Debug)]
struct SignedReducer {
    p: u64,
    /// 2^64 mod p and its Shoup constant.
    r64: u64,
    r64_shoup: u64,
    /// Shoup constant of 1: mul_mod_shoup(x, 1, ·) = x mod p for any 64-bit x.
    one_shoup: u64,
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
        let reducers = moduli
            .iter()
            .map(|&p| {
                let r64 = ((1u128 << 64) % p as u128) as u64;
                SignedReducer {
                    p,
                    r64,
                    r64_shoup: shoup_precompute(r64, p),
                    one_shoup: shoup_precompute(1, p),
                }
            })
            .collect();
        Ok(Self {
            degree,
            moduli: moduli.to_vec(),
            plans,
            reducers,
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

    /// c mod p_limb for any signed 128-bit c, without division:
    /// |c| = h·2^64 + l gives |c| ≡ h·(2^64 mod p) + l (mod p), both terms by
    /// Shoup multiplication; a negative c is then negated.
    ///
    /// Both terms are always computed: flooding draws straddle 2^64 and have
    /// random signs, so branching on h or on the sign would mispredict half the time.
    #[inline]
    pub fn reduce_signed(&self, limb: usize, c: i128) -> u64 {
        let r = &self.reducers[limb];
        let m = c.unsigned_abs();
        let low = mul_mod_shoup(m as u64, 1, r.one_shoup, r.p);
        let high = mul_mod_shoup((m >> 64) as u64, r.r64, r.r64_shoup, r.p);
        neg_mod_if(add_mod(low, high, r.p), c < 0, r.p)
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
    fn signed_reduction_matches_euclidean_remainder() {
        let ctx = RingContext::new(1024, &[0x3fffffffffff0001, 0x3ffffffffffe8001, 12289]).unwrap();
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for i in 0..5000 {
            x = x
                .wrapping_mul(0x2360ed051fc65da44385df649fccf645)
                .wrapping_add(0x5851f42d4c957f2d);
            let c = (x as i128) >> (i % 100);
            for (limb, &p) in ctx.moduli().iter().enumerate() {
                assert_eq!(
                    ctx.reduce_signed(limb, c),
                    c.rem_euclid(p as i128) as u64,
                    "c = {c}"
                );
            }
        }
        for c in [
            0i128,
            1,
            -1,
            i128::MAX,
            i128::MIN + 1,
            -(1i128 << 65),
            (1 << 65) - 1,
        ] {
            assert_eq!(
                ctx.reduce_signed(0, c),
                c.rem_euclid(0x3fffffffffff0001) as u64
            );
        }
    }

    #[test]
    fn contexts_are_cached() {
        let a = RingContext::new(1024, &[0x3fffffffffff0001]).unwrap();
        let b = RingContext::new(1024, &[0x3fffffffffff0001]).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!((a.log2_modulus() - 62.0).abs() < 1e-3);
    }
}
