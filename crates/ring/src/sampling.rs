//! Samplers on tfhe's CSPRNG (AES-CTR), all drawing exact integers.

use crate::{Poly, RingContext, RingError};
use std::sync::Arc;
use tfhe::core_crypto::commons::math::random::{
    DefaultRandomGenerator, RandomGenerator, Seed, XofSeed,
};
use tfhe::core_crypto::seeders::new_seeder;
use zeroize::Zeroizing;

/// Length in bytes of a seed for [`Csprng::from_seed`].
pub const SEED_BYTES: usize = 32;

/// A distribution of small signed integers for secrets and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmallDistribution {
    /// Uniform on {−1, 0, 1}: secrets and the encryption randomness u.
    Ternary,
    /// Centred binomial B(2η, 1/2) − η: Σ_{i<η} (a_i − b_i) for fair bits a_i, b_i.
    /// Variance η/2 (η = 21 gives σ ≈ 3.24, the HE-standard σ = 3.2), support [−η, η].
    CenteredBinomial {
        /// η, at most 32.
        eta: u32,
    },
    /// Uniform on the integers [−2^bits, 2^bits): noise flooding.
    UniformInterval {
        /// log2 of the half-width, at most 120.
        bits: u32,
    },
}

impl SmallDistribution {
    /// The largest |value| the distribution can produce.
    pub fn max_abs(self) -> u128 {
        match self {
            Self::Ternary => 1,
            Self::CenteredBinomial { eta } => eta as u128,
            Self::UniformInterval { bits } => 1u128 << bits,
        }
    }

    /// The variance of one draw.
    pub fn variance(self) -> f64 {
        match self {
            Self::Ternary => 2.0 / 3.0,
            Self::CenteredBinomial { eta } => eta as f64 / 2.0,
            // Discrete uniform on 2^(b+1) consecutive integers: ((2^(b+1))^2 − 1)/12.
            Self::UniformInterval { bits } => ((2f64).powi(2 * bits as i32 + 2) - 1.0) / 12.0,
        }
    }
}

/// A cryptographically secure generator: tfhe's AES-CTR `RandomGenerator`
/// (AES-NI or NEON when the CPU has it, detected at run time).
pub struct Csprng {
    inner: RandomGenerator<DefaultRandomGenerator>,
}

impl std::fmt::Debug for Csprng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Csprng { .. }")
    }
}

impl Csprng {
    /// A generator seeded with fresh entropy from tfhe's seeder (RDSEED where
    /// available, else the operating system).
    pub fn from_entropy() -> Self {
        let mut seeder = new_seeder();
        Self::from_u128_seed(seeder.seed().0)
    }

    /// The generator expanded from a 32-byte public seed with an 8-byte domain
    /// separator (tfhe's XOF seeding): the same (seed, domain) always gives the
    /// same stream. For public randomness such as the common reference polynomial.
    pub fn from_seed(seed: &[u8; SEED_BYTES], domain: [u8; 8]) -> Self {
        Self {
            inner: RandomGenerator::new(XofSeed::new(seed.to_vec(), domain)),
        }
    }

    /// A generator from a 128-bit seed: reproducible runs and tests.
    pub fn from_u128_seed(seed: u128) -> Self {
        Self {
            inner: RandomGenerator::new(Seed(seed)),
        }
    }

    /// Fills `dest` with uniform bytes.
    pub fn fill_bytes(&mut self, dest: &mut [u8]) {
        for b in dest {
            *b = self.inner.generate_next();
        }
    }

    /// A uniform 64-bit word.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut buf = [0u8; 8];
        self.fill_bytes(&mut buf);
        u64::from_le_bytes(buf)
    }

    /// A uniform 32-byte seed.
    pub fn seed_bytes(&mut self) -> [u8; SEED_BYTES] {
        let mut s = [0u8; SEED_BYTES];
        self.fill_bytes(&mut s);
        s
    }

    /// Uniform on [0, p) by rejection sampling of ⌈log2 p⌉-bit words (exactly uniform).
    #[inline]
    pub fn uniform_below(&mut self, p: u64) -> u64 {
        debug_assert!(p > 1);
        let mask = u64::MAX >> (p - 1).leading_zeros();
        loop {
            let v = self.next_u64() & mask;
            if v < p {
                return v;
            }
        }
    }

    /// A uniform element of R_q, in coefficient form: independent uniform
    /// residues modulo each prime are, by the CRT, uniform modulo q.
    pub fn uniform_poly(&mut self, ctx: &Arc<RingContext>) -> Poly {
        let n = ctx.degree();
        let mut data = Vec::with_capacity(n * ctx.limb_count());
        for &p in ctx.moduli() {
            data.extend((0..n).map(|_| self.uniform_below(p)));
        }
        Poly::from_residues(ctx, crate::Representation::Coefficient, data)
            .expect("uniform residues are below their primes")
    }

    /// `count` independent draws, in a buffer wiped on drop (they may be secret).
    ///
    /// Draws in bulk from one buffer of random bytes: ternary values take 2 bits
    /// each (the fourth pattern is rejected), CBD(η) takes 2η bits rounded up to
    /// bytes, the interval [−2^b, 2^b) takes b + 1 bits rounded up to bytes.
    pub fn sample_signed(&mut self, count: usize, dist: SmallDistribution) -> Zeroizing<Vec<i128>> {
        let mut out = Zeroizing::new(Vec::with_capacity(count));
        self.sample_each(count, dist, |c| out.push(c));
        out
    }

    /// Draws `count` values and hands each to `sink`, in order.
    fn sample_each(&mut self, count: usize, dist: SmallDistribution, mut sink: impl FnMut(i128)) {
        match dist {
            SmallDistribution::Ternary => {
                // 4 pairs per byte, 3/4 accepted: 3 values per byte on average.
                let mut bytes = Zeroizing::new(vec![0u8; count / 3 + 16]);
                let mut produced = 0;
                while produced < count {
                    self.fill_bytes(&mut bytes);
                    for &b in bytes.iter() {
                        for shift in [0, 2, 4, 6] {
                            let v = match (b >> shift) & 3 {
                                0 => 0,
                                1 => 1,
                                2 => -1,
                                _ => continue,
                            };
                            if produced < count {
                                sink(v);
                                produced += 1;
                            }
                        }
                    }
                }
            }
            SmallDistribution::CenteredBinomial { eta } => {
                debug_assert!(eta <= 32);
                let width = (2 * eta as usize).div_ceil(8);
                let mask = (1u64 << eta) - 1;
                let mut bytes = Zeroizing::new(vec![0u8; count * width]);
                self.fill_bytes(&mut bytes);
                for chunk in bytes.chunks_exact(width) {
                    let mut w = [0u8; 8];
                    w[..width].copy_from_slice(chunk);
                    let w = u64::from_le_bytes(w);
                    sink(
                        (w & mask).count_ones() as i128 - ((w >> eta) & mask).count_ones() as i128,
                    );
                }
            }
            SmallDistribution::UniformInterval { bits } => {
                debug_assert!(bits <= 120);
                let width = (bits as usize + 1).div_ceil(8);
                let span_mask = (1u128 << (bits + 1)) - 1;
                let mut bytes = Zeroizing::new(vec![0u8; count * width]);
                self.fill_bytes(&mut bytes);
                for chunk in bytes.chunks_exact(width) {
                    let mut w = [0u8; 16];
                    w[..width].copy_from_slice(chunk);
                    // Uniform on [0, 2^(b+1)), shifted to [−2^b, 2^b).
                    sink((u128::from_le_bytes(w) & span_mask) as i128 - (1i128 << bits));
                }
            }
        }
    }

    /// A coefficient-form polynomial with independent coefficients drawn from `dist`.
    pub fn sample_poly(
        &mut self,
        ctx: &Arc<RingContext>,
        dist: SmallDistribution,
    ) -> Result<Poly, RingError> {
        // Straight into the residues: no intermediate buffer of secret values.
        let (n, k) = (ctx.degree(), ctx.limb_count());
        let mut data = vec![0u64; n * k];
        let mut j = 0;
        self.sample_each(n, dist, |c| {
            for limb in 0..k {
                data[limb * n + j] = ctx.reduce_signed(limb, c);
            }
            j += 1;
        });
        Poly::from_residues(ctx, crate::Representation::Coefficient, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(xs: &[i128]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var)
    }

    /// Pearson's χ² statistic of observed counts against equal expected counts.
    fn chi_square_uniform(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let e = total as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    const DRAWS: usize = 200_000;

    #[test]
    fn ternary_is_uniform_on_three_values() {
        let mut rng = Csprng::from_u128_seed(1);
        let xs = rng.sample_signed(DRAWS, SmallDistribution::Ternary);
        let mut counts = [0u64; 3];
        for &x in xs.iter() {
            counts[(x + 1) as usize] += 1;
        }
        // χ²(2 d.o.f.) 99.9% quantile is 13.8.
        assert!(chi_square_uniform(&counts) < 13.8, "{counts:?}");
        let (mean, var) = moments(&xs);
        assert!(
            mean.abs() < 0.01 && (var - 2.0 / 3.0).abs() < 0.01,
            "{mean} {var}"
        );
    }

    #[test]
    fn centered_binomial_has_binomial_moments_and_support() {
        let dist = SmallDistribution::CenteredBinomial { eta: 21 };
        let mut rng = Csprng::from_u128_seed(2);
        let xs = rng.sample_signed(DRAWS, dist);
        assert!(xs.iter().all(|&x| x.abs() <= 21));
        let (mean, var) = moments(&xs);
        // Standard errors: sqrt(10.5/2e5) ≈ 0.007 for the mean, ≈ 0.035 for the variance.
        assert!(mean.abs() < 0.04, "mean {mean}");
        assert!((var - 10.5).abs() < 0.2, "variance {var}");
        // P(X = 0) = C(42, 21) / 2^42 ≈ 0.12253.
        let p0 = xs.iter().filter(|&&x| x == 0).count() as f64 / DRAWS as f64;
        assert!((p0 - 0.122_527).abs() < 0.004, "P(0) = {p0}");
    }

    #[test]
    fn uniform_interval_is_uniform_over_its_range() {
        for bits in [3u32, 20, 65] {
            let dist = SmallDistribution::UniformInterval { bits };
            let mut rng = Csprng::from_u128_seed(3 + bits as u128);
            let xs = rng.sample_signed(DRAWS, dist);
            let half = 1i128 << bits;
            assert!(xs.iter().all(|&x| (-half..half).contains(&x)));
            let mut counts = [0u64; 16];
            for &x in xs.iter() {
                counts[((x + half) * 16 / (2 * half)) as usize] += 1;
            }
            // χ²(15 d.o.f.) 99.9% quantile is 37.7.
            assert!(
                chi_square_uniform(&counts) < 37.7,
                "bits {bits}: {counts:?}"
            );
            let scale = half as f64;
            let normalised: Vec<f64> = xs.iter().map(|&x| x as f64 / scale).collect();
            let mean = normalised.iter().sum::<f64>() / DRAWS as f64;
            let var = normalised.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / DRAWS as f64;
            // The interval [−2^b, 2^b) has mean −1/2, i.e. −2^−(b+1) after scaling.
            let exact_mean = -0.5 / scale;
            assert!((mean - exact_mean).abs() < 0.01, "bits {bits}: mean {mean}");
            assert!((var - 1.0 / 3.0).abs() < 0.01, "bits {bits}: var {var}");
            assert!((dist.variance() / scale / scale - 1.0 / 3.0).abs() < 0.02);
        }
    }

    #[test]
    fn uniform_mod_p_is_below_p_and_uniform() {
        let p = 0x3fffffffffff0001u64;
        let mut rng = Csprng::from_u128_seed(4);
        let mut counts = [0u64; 16];
        for _ in 0..DRAWS {
            let v = rng.uniform_below(p);
            assert!(v < p);
            counts[(v as u128 * 16 / p as u128) as usize] += 1;
        }
        assert!(chi_square_uniform(&counts) < 37.7, "{counts:?}");
        let mut small = [0u64; 7];
        for _ in 0..70_000 {
            small[rng.uniform_below(7) as usize] += 1;
        }
        assert!(chi_square_uniform(&small) < 22.5, "{small:?}"); // χ²(6) 99.9%
    }

    #[test]
    fn seeded_streams_are_reproducible_and_domain_separated() {
        let ctx = RingContext::new(1024, &[0x3fffffffffff0001, 0x3ffffffffffe8001]).unwrap();
        let seed = [7u8; SEED_BYTES];
        let a = Csprng::from_seed(&seed, *b"fedhe-cr").uniform_poly(&ctx);
        let b = Csprng::from_seed(&seed, *b"fedhe-cr").uniform_poly(&ctx);
        let c = Csprng::from_seed(&seed, *b"fedhe-xx").uniform_poly(&ctx);
        let mut other = seed;
        other[31] ^= 1;
        let d = Csprng::from_seed(&other, *b"fedhe-cr").uniform_poly(&ctx);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(
            Csprng::from_entropy().next_u64(),
            Csprng::from_entropy().next_u64()
        );
    }
}
