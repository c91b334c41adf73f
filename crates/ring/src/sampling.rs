//! Samplers on tfhe's CSPRNG (AES-CTR), all drawing exact integers.

use crate::modular::add_mod;
use crate::{Poly, RingContext, RingError};
use std::sync::Arc;
use tfhe::core_crypto::commons::math::random::XofSeed;
use tfhe::core_crypto::seeders::new_seeder;
use tfhe_csprng::generators::aes_ctr::{
    Aes128Key, AesBlockCipher, AES_CALLS_PER_BATCH, BYTES_PER_BATCH,
};
use tfhe_csprng::generators::default::DefaultAes128BlockCipher;
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

/// A cryptographically secure generator: the AES-128-CTR stream of tfhe's
/// CSPRNG (`tfhe_csprng`, AES-NI or NEON when the CPU has it, detected at run
/// time), drawn in bulk.
///
/// tfhe's `RandomGenerator` hands out one byte per call, which made byte
/// bookkeeping a large share of every sampler. This type keeps the same key
/// schedule and counter layout — AES_k(offset + i) for i = 0, 1, 2, … in
/// batches of [`BYTES_PER_BATCH`] bytes, k and the offset derived from the seed
/// exactly as `tfhe_csprng` derives them — and encrypts whole batches straight
/// into the caller's buffer. The tests check that the bytes equal those of
/// `tfhe::core_crypto::commons::math::random::RandomGenerator` from the same seed.
pub struct Csprng {
    cipher: DefaultAes128BlockCipher,
    /// AES input of the first block of the next batch (tfhe's table index plus offset).
    counter: u128,
    /// The current batch; `buffer[used..]` has not been handed out yet.
    buffer: Zeroizing<[u8; BYTES_PER_BATCH]>,
    used: usize,
}

impl std::fmt::Debug for Csprng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Csprng { .. }")
    }
}

/// Values drawn per block by the polynomial samplers: a block's random bytes and
/// values stay in L1 cache, in stack buffers that are wiped when the sampler returns.
const BLOCK: usize = 512;

/// Random bytes of one block: up to 16 per value, plus room for the last
/// value's 16-byte read. Callers keep one per polynomial in a `Zeroizing`, so it
/// is wiped once rather than once per block.
type BlockBytes = [u8; BLOCK * 16 + 16];

/// Reduction of wide draws e = u − 2^b with u ∈ [0, 2^(b+1)) (the flooding
/// interval) modulo p, where 2^k ≤ p < 2^(k+1): split u = A·2^k + l with
/// l < 2^k ≤ p, then e ≡ l + T\[A\] (mod p) with T\[A\] = (A·2^k − 2^b) mod p, and
/// l + T\[A\] < 2p needs a single conditional subtraction — no 128-bit products.
/// Only built when the table is short (A < 2^(b+1−k) ≤ [`WIDE_TABLE`]), as for
/// b ≤ 70 over primes near 2^62 (the flooding of federations up to about 80
/// members, `ParameterSet::flooding_bits_for`).
struct WideReducer {
    p: u64,
    k: u32,
    offset: i128,
    /// 2^(b+1−k) entries (a power of two).
    table: Vec<u64>,
}

/// Largest table of [`WideReducer`].
const WIDE_TABLE: usize = 1024;

impl WideReducer {
    fn new(ctx: &RingContext, limb: usize, bits: u32) -> Option<Self> {
        let p = ctx.moduli()[limb];
        let k = 63 - p.leading_zeros();
        if bits + 1 > k + WIDE_TABLE.trailing_zeros() {
            return None;
        }
        let offset = 1i128 << bits;
        let len = 1usize << (bits + 1).saturating_sub(k);
        let table = (0..len)
            .map(|a| ctx.reduce_signed(limb, ((a as i128) << k) - offset))
            .collect();
        Some(Self {
            p,
            k,
            offset,
            table,
        })
    }

    /// e mod p for e in [−2^b, 2^b).
    #[inline]
    fn reduce(&self, e: i128) -> u64 {
        let u = (e + self.offset) as u128;
        let low = (u as u64) & ((1u64 << self.k) - 1);
        let index = (u >> self.k) as usize & (self.table.len() - 1);
        add_mod(low, self.table[index], self.p)
    }
}

/// The popcounts of the low and of the high 32-bit half of x. Plain 64-bit
/// arithmetic (SWAR): x86-64's baseline has no POPCNT instruction, so
/// `count_ones` would be a long bit-twiddling sequence per call; this does both
/// halves in one, and vectorises across draws.
#[inline]
fn half_popcounts(x: u64) -> (u32, u32) {
    let x = x - ((x >> 1) & 0x5555_5555_5555_5555);
    let x = (x & 0x3333_3333_3333_3333) + ((x >> 2) & 0x3333_3333_3333_3333);
    let x = (x + (x >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Every byte holds its own popcount (≤ 8); byte 3 of the product sums bytes
    // 0..=3 and byte 7 sums bytes 4..=7, without carries (sums ≤ 32).
    let sums = x.wrapping_mul(0x0101_0101);
    (((sums >> 24) & 0xff) as u32, (sums >> 56) as u32)
}

/// r ≡ c (mod p) in [0, p) for |c| < p, without a branch.
#[inline]
fn reduce_small(c: i64, p: u64) -> u64 {
    (c as u64).wrapping_add(p & (c >> 63) as u64)
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
        // tfhe_csprng's XOF initialisation (CBC-MAC under the all-zero AES key
        // of domain ‖ seed, zero-padded to 16-byte blocks, then of its bit
        // length): the last MAC block is the key, the one before the counter offset.
        let xof = XofSeed::new(seed.to_vec(), domain);
        let mut mac = DefaultAes128BlockCipher::new(Aes128Key::new(0));
        let blocks = xof
            .bytes()
            .chunks(16)
            .map(|chunk| {
                let mut block = [0u8; 16];
                block[..chunk.len()].copy_from_slice(chunk);
                u128::from_ne_bytes(block)
            })
            .chain(std::iter::once(xof.bit_len().to_le()));
        let (mut previous, mut last) = (0u128, 0u128);
        for block in blocks {
            previous = last;
            last = u128::from_ne_bytes(mac.generate_next(previous ^ block));
        }
        Self::from_key(Aes128Key::new(last), previous.to_le())
    }

    /// A generator from a 128-bit seed: reproducible runs and tests. The seed is
    /// the AES key and the counter starts at 0, as in `tfhe_csprng`.
    pub fn from_u128_seed(seed: u128) -> Self {
        Self::from_key(Aes128Key::new(u128::from_le(seed)), 0)
    }

    fn from_key(key: Aes128Key, counter: u128) -> Self {
        Self {
            cipher: DefaultAes128BlockCipher::new(key),
            counter,
            buffer: Zeroizing::new([0; BYTES_PER_BATCH]),
            used: BYTES_PER_BATCH,
        }
    }

    /// The next [`BYTES_PER_BATCH`] bytes of the stream.
    #[inline]
    fn next_batch(&mut self) -> [u8; BYTES_PER_BATCH] {
        let counter = self.counter;
        let inputs: [u128; AES_CALLS_PER_BATCH] =
            std::array::from_fn(|i| counter.wrapping_add(i as u128).to_le());
        self.counter = counter.wrapping_add(AES_CALLS_PER_BATCH as u128);
        self.cipher.generate_batch(inputs)
    }

    /// Fills `dest` with the next `dest.len()` bytes of the stream.
    pub fn fill_bytes(&mut self, dest: &mut [u8]) {
        let buffered = (BYTES_PER_BATCH - self.used).min(dest.len());
        let (head, rest) = dest.split_at_mut(buffered);
        head.copy_from_slice(&self.buffer[self.used..self.used + buffered]);
        self.used += buffered;
        let mut batches = rest.chunks_exact_mut(BYTES_PER_BATCH);
        for batch in &mut batches {
            batch.copy_from_slice(&self.next_batch());
        }
        let tail = batches.into_remainder();
        if !tail.is_empty() {
            *self.buffer = self.next_batch();
            tail.copy_from_slice(&self.buffer[..tail.len()]);
            self.used = tail.len();
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

    /// Appends `count` draws of [`Self::uniform_below`]`(p)` to `out`: the same
    /// words in the same order (each rejected word is followed by the next),
    /// fetched in blocks rather than eight bytes at a time. A block never
    /// holds more words than values still needed, so no word is drawn that
    /// the one-at-a-time loop would not draw; the block is wiped (the values
    /// may be secret masks).
    pub fn extend_uniform_below(&mut self, p: u64, count: usize, out: &mut Vec<u64>) {
        debug_assert!(p > 1);
        const WORDS: usize = 256;
        let mask = u64::MAX >> (p - 1).leading_zeros();
        let mut block = Zeroizing::new([0u8; 8 * WORDS]);
        let mut left = count;
        while left > 0 {
            let words = left.min(WORDS);
            self.fill_bytes(&mut block[..8 * words]);
            for word in block[..8 * words].chunks_exact(8) {
                let v = u64::from_le_bytes(word.try_into().expect("chunks of 8")) & mask;
                if v < p {
                    out.push(v);
                    left -= 1;
                }
            }
        }
    }

    /// A uniform element of R_q, in coefficient form: independent uniform
    /// residues modulo each prime are, by the CRT, uniform modulo q.
    pub fn uniform_poly(&mut self, ctx: &Arc<RingContext>) -> Poly {
        let n = ctx.degree();
        let mut data = Vec::with_capacity(n * ctx.limb_count());
        for &p in ctx.moduli() {
            self.extend_uniform_below(p, n, &mut data);
        }
        Poly::from_residues(ctx, crate::Representation::Coefficient, data)
            .expect("uniform residues are below their primes")
    }

    /// `count` independent draws, in a buffer wiped on drop (they may be secret).
    pub fn sample_signed(&mut self, count: usize, dist: SmallDistribution) -> Zeroizing<Vec<i128>> {
        let mut out = Zeroizing::new(vec![0; count]);
        let mut bytes = Zeroizing::new([0u8; BLOCK * 16 + 16]);
        for block in out.chunks_mut(BLOCK) {
            self.draw(block, dist, &mut bytes);
        }
        out
    }

    /// Fills `out` (at most [`BLOCK`] values) with independent draws from `dist`.
    ///
    /// Ternary values take 2 bits each (the fourth pattern is rejected); CBD(η)
    /// takes η bits a from ⌈η/8⌉ bytes and η bits b from the next ⌈η/8⌉ bytes
    /// and returns popcount(a) − popcount(b); the interval [−2^b, 2^b) takes
    /// b + 1 bits from ⌈(b+1)/8⌉ bytes. Bits above those used are ignored.
    fn draw(&mut self, out: &mut [i128], dist: SmallDistribution, bytes: &mut BlockBytes) {
        debug_assert!(out.len() <= BLOCK);
        match dist {
            SmallDistribution::Ternary => {
                const VALUES: [i128; 4] = [0, 1, -1, 0];
                if out.is_empty() {
                    return;
                }
                // Rejection without a data-dependent branch: every pair is written
                // at the next free slot, and only accepted pairs advance it.
                let mut produced = 0;
                let chunk = &mut bytes[..64];
                'draw: loop {
                    self.fill_bytes(chunk);
                    for &b in chunk.iter() {
                        for shift in [0, 2, 4, 6] {
                            let pair = (b >> shift) & 3;
                            out[produced] = VALUES[pair as usize];
                            produced += usize::from(pair != 3);
                            if produced == out.len() {
                                break 'draw;
                            }
                        }
                    }
                }
            }
            SmallDistribution::CenteredBinomial { eta } => {
                debug_assert!(eta <= 32);
                let half = (eta as usize).div_ceil(8);
                let width = 2 * half;
                let mask = (1u64 << eta) - 1;
                self.fill_bytes(&mut bytes[..out.len() * width]);
                for (i, o) in out.iter_mut().enumerate() {
                    // An 8-byte read at the value's offset; its bits beyond the
                    // value's 2·⌈η/8⌉ bytes belong to the next value and are masked off.
                    let at = i * width;
                    let w = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                    let a = w & mask;
                    let b = (w >> (8 * half)) & mask;
                    let (ones_a, ones_b) = half_popcounts(a | b << 32);
                    *o = ones_a as i128 - ones_b as i128;
                }
            }
            SmallDistribution::UniformInterval { bits } => {
                debug_assert!(bits <= 120);
                let width = (bits as usize + 1).div_ceil(8);
                let span_mask = (1u128 << (bits + 1)) - 1;
                self.fill_bytes(&mut bytes[..out.len() * width]);
                for (i, o) in out.iter_mut().enumerate() {
                    let at = i * width;
                    let w = u128::from_le_bytes(bytes[at..at + 16].try_into().expect("16 bytes"));
                    // Uniform on [0, 2^(b+1)), shifted to [−2^b, 2^b).
                    *o = (w & span_mask) as i128 - (1i128 << bits);
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
        let mut poly = Poly::zero(ctx, crate::Representation::Coefficient);
        self.sample_into(&mut poly, dist, |_, e, _| e)?;
        Ok(poly)
    }

    /// poly ← poly + e with e drawn like [`Csprng::sample_poly`], in place:
    /// no polynomial of secret noise is ever materialised, and no second pass
    /// adds it. `poly` must be in coefficient form.
    pub fn add_sample_assign(
        &mut self,
        poly: &mut Poly,
        dist: SmallDistribution,
    ) -> Result<(), RingError> {
        self.sample_into(poly, dist, add_mod)
    }

    /// residue ← combine(residue, e mod p, p) for every coefficient, with the
    /// draws e taken block by block and reduced modulo every prime.
    fn sample_into(
        &mut self,
        poly: &mut Poly,
        dist: SmallDistribution,
        combine: impl Fn(u64, u64, u64) -> u64,
    ) -> Result<(), RingError> {
        if poly.representation() != crate::Representation::Coefficient {
            return Err(RingError::Mismatch("samples are drawn in coefficient form"));
        }
        let ctx = Arc::clone(poly.context());
        let n = ctx.degree();
        // Small draws are below every prime (at most 21 against primes of dozens
        // of bits; `reduce_small` needs |e| < p).
        let small = ctx.moduli().iter().all(|&p| dist.max_abs() < p as u128);
        let wide: Vec<Option<WideReducer>> = match dist {
            SmallDistribution::UniformInterval { bits } if !small => (0..ctx.limb_count())
                .map(|limb| WideReducer::new(&ctx, limb, bits))
                .collect(),
            _ => Vec::new(),
        };
        let mut values = Zeroizing::new([0i128; BLOCK]);
        let mut bytes = Zeroizing::new([0u8; BLOCK * 16 + 16]);
        for start in (0..n).step_by(BLOCK) {
            let block = &mut values[..BLOCK.min(n - start)];
            self.draw(block, dist, &mut bytes);
            for (limb, &p) in ctx.moduli().iter().enumerate() {
                let dst = &mut poly.limb_mut(limb)[start..start + block.len()];
                if small {
                    for (r, &e) in dst.iter_mut().zip(block.iter()) {
                        *r = combine(*r, reduce_small(e as i64, p), p);
                    }
                } else if let Some(wide) = wide.get(limb).and_then(Option::as_ref) {
                    for (r, &e) in dst.iter_mut().zip(block.iter()) {
                        *r = combine(*r, wide.reduce(e), p);
                    }
                } else {
                    for (r, &e) in dst.iter_mut().zip(block.iter()) {
                        *r = combine(*r, ctx.reduce_signed(limb, e), p);
                    }
                }
            }
        }
        Ok(())
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

    /// An upper 99.9% quantile of χ²(df), Wilson–Hilferty approximation.
    fn chi_square_999(df: usize) -> f64 {
        let d = df as f64;
        let c = 2.0 / (9.0 * d);
        d * (1.0 - c + 3.09 * c.sqrt()).powi(3)
    }

    /// C(n, k) / 2^n, the binomial(n, 1/2) probability mass, from its recurrence.
    fn binomial_half_pmf(n: u32, k: u32) -> f64 {
        let mut c = 1f64;
        for i in 0..k {
            c = c * (n - i) as f64 / (i + 1) as f64;
        }
        c / 2f64.powi(n as i32)
    }

    #[test]
    fn centered_binomial_matches_the_exact_pmf() {
        // χ² of the counts against P(X = x) = C(2η, x + η) / 2^(2η), with values
        // whose expected count is below 20 merged into the two tails.
        let eta = 21u32;
        let mut rng = Csprng::from_u128_seed(21);
        let xs = rng.sample_signed(DRAWS, SmallDistribution::CenteredBinomial { eta });
        let expected: Vec<f64> = (0..=2 * eta)
            .map(|k| binomial_half_pmf(2 * eta, k) * DRAWS as f64)
            .collect();
        let cut = (0..=eta).find(|&k| expected[k as usize] >= 20.0).unwrap() as i128 - eta as i128;
        let bin = |x: i128| (x.clamp(cut, -cut) - cut) as usize;
        let bins = (-2 * cut + 1) as usize;
        let mut observed = vec![0f64; bins];
        let mut wanted = vec![0f64; bins];
        for &x in xs.iter() {
            observed[bin(x)] += 1.0;
        }
        for (k, &e) in expected.iter().enumerate() {
            wanted[bin(k as i128 - eta as i128)] += e;
        }
        let chi2: f64 = observed
            .iter()
            .zip(&wanted)
            .map(|(o, e)| (o - e).powi(2) / e)
            .sum();
        assert!(
            chi2 < chi_square_999(bins - 1),
            "χ² = {chi2} over {bins} bins"
        );
    }

    #[test]
    fn half_popcounts_match_count_ones() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let expect = ((x as u32).count_ones(), ((x >> 32) as u32).count_ones());
            assert_eq!(half_popcounts(x), expect, "{x:#x}");
        }
        assert_eq!(half_popcounts(u64::MAX), (32, 32));
        assert_eq!(half_popcounts(0), (0, 0));
    }

    #[test]
    fn flooding_covers_exactly_its_interval() {
        let bits = 65;
        let half = 1i128 << bits;
        let mut rng = Csprng::from_u128_seed(65);
        let xs = rng.sample_signed(DRAWS, SmallDistribution::UniformInterval { bits });
        let (lo, hi) = (*xs.iter().min().unwrap(), *xs.iter().max().unwrap());
        assert!(lo >= -half && hi < half, "[{lo}, {hi}]");
        // Both ends are reached to within 2^−8 of the width (a miss has
        // probability (1 − 2^−9)^200000 < 2^−500), so no bit of the range is lost.
        assert!(
            lo < -half + (half >> 8) && hi >= half - (half >> 8),
            "[{lo}, {hi}]"
        );
        let negative = xs.iter().filter(|&&x| x < 0).count() as f64 / DRAWS as f64;
        assert!((negative - 0.5).abs() < 0.01, "{negative}");
    }

    #[test]
    fn wide_reduction_matches_euclidean_remainder() {
        let ctx = RingContext::new(1024, &[0x3fffffffffff0001, 0x3ffffffffffe8001]).unwrap();
        // 65: the shipped sets' floor; 66 and 70: the flooding of larger federations.
        for bits in [65, 66, 70] {
            let half = 1i128 << bits;
            let mut rng = Csprng::from_u128_seed(66);
            let draws = rng.sample_signed(20_000, SmallDistribution::UniformInterval { bits });
            for (limb, &p) in ctx.moduli().iter().enumerate() {
                let wide =
                    WideReducer::new(&ctx, limb, bits).expect("primes near 2^62 get a table");
                let edges = [
                    -half,
                    -half + 1,
                    -1,
                    0,
                    1,
                    half - 1,
                    -(p as i128),
                    p as i128,
                ];
                for &e in draws.iter().chain(&edges) {
                    assert_eq!(wide.reduce(e), e.rem_euclid(p as i128) as u64, "e = {e}");
                }
            }
        }
        // A small prime would need a table of 2^60 entries, and b = 71 one of
        // 2^11: none is built.
        let toy = RingContext::new(16, &[97]).unwrap();
        assert!(WideReducer::new(&toy, 0, 65).is_none());
        assert!(WideReducer::new(&ctx, 0, 71).is_none());
    }

    #[test]
    fn polynomial_samplers_reduce_the_signed_draws() {
        // From one seed, sample_poly and add_sample_assign must give the residues
        // of exactly the values sample_signed draws, against `rem_euclid`; the
        // toy prime takes the generic wide path, the large ones the table.
        let dists = [
            SmallDistribution::Ternary,
            SmallDistribution::CenteredBinomial { eta: 21 },
            SmallDistribution::UniformInterval { bits: 65 },
        ];
        let rings = [
            RingContext::new(2048, &[0x3fffffffffff0001, 0x3ffffffffffe8001]).unwrap(),
            RingContext::new(2048, &[12289]).unwrap(),
        ];
        for ctx in &rings {
            for (i, &dist) in dists.iter().enumerate() {
                let seed = 100 + i as u128;
                let n = ctx.degree();
                let values = Csprng::from_u128_seed(seed).sample_signed(n, dist);
                let sampled = Csprng::from_u128_seed(seed).sample_poly(ctx, dist).unwrap();
                let base = Csprng::from_u128_seed(7).uniform_poly(ctx);
                let mut added = base.clone();
                Csprng::from_u128_seed(seed)
                    .add_sample_assign(&mut added, dist)
                    .unwrap();
                for (limb, &p) in ctx.moduli().iter().enumerate() {
                    for j in 0..n {
                        let e = values[j].rem_euclid(p as i128) as u64;
                        assert_eq!(sampled.limb(limb)[j], e, "{dist:?} mod {p}, j = {j}");
                        assert_eq!(added.limb(limb)[j], add_mod(base.limb(limb)[j], e, p));
                    }
                }
            }
        }
        let ctx = &rings[0];
        let mut ntt = Poly::zero(ctx, crate::Representation::Ntt);
        assert!(Csprng::from_u128_seed(1)
            .add_sample_assign(&mut ntt, SmallDistribution::Ternary)
            .is_err());
    }

    #[test]
    fn bulk_stream_equals_tfhe_byte_stream() {
        use tfhe::core_crypto::commons::math::random::{
            DefaultRandomGenerator, RandomGenerator, Seed,
        };
        // Uneven request sizes cross the 128-byte batch boundaries every way:
        // inside the buffer, exactly at its end, whole batches, and tails.
        let sizes = [1usize, 3, 16, 127, 128, 129, 1, 300, 255, 1000, 7, 4096];
        let total: usize = sizes.iter().sum();
        let check = |mut ours: Csprng, mut theirs: RandomGenerator<DefaultRandomGenerator>| {
            let expected: Vec<u8> = (0..total).map(|_| theirs.generate_next()).collect();
            let mut got = Vec::with_capacity(total);
            for &len in &sizes {
                let mut chunk = vec![0u8; len];
                ours.fill_bytes(&mut chunk);
                got.extend_from_slice(&chunk);
            }
            assert_eq!(got, expected);
        };
        for seed in [
            0u128,
            1,
            0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
            u128::MAX,
        ] {
            check(
                Csprng::from_u128_seed(seed),
                RandomGenerator::new(Seed(seed)),
            );
        }
        let mut seed = [0u8; SEED_BYTES];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = (i * 37 + 11) as u8;
        }
        for domain in [*b"fedhe-cr", *b"\0\0\0\0\0\0\0\0"] {
            check(
                Csprng::from_seed(&seed, domain),
                RandomGenerator::new(XofSeed::new(seed.to_vec(), domain)),
            );
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
    fn block_draws_are_the_one_at_a_time_draws_and_leave_the_same_state() {
        // 5 rejects 3 words in 8 (mask 7); the 62-bit prime almost none.
        for p in [5u64, 0x3fffffffffff0001] {
            for count in [0usize, 1, 255, 256, 257, 1000] {
                let mut one = Csprng::from_u128_seed(11);
                let mut block = Csprng::from_u128_seed(11);
                let expected: Vec<u64> = (0..count).map(|_| one.uniform_below(p)).collect();
                let mut got = vec![42];
                block.extend_uniform_below(p, count, &mut got);
                assert_eq!(got[0], 42, "appends");
                assert_eq!(&got[1..], &expected[..], "p = {p}, {count} draws");
                assert_eq!(one.next_u64(), block.next_u64(), "p = {p}, {count} draws");
            }
        }
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
