//! The Chinese remainder theorem over the RNS primes: exact reconstruction of a
//! coefficient, and the RNS scale-and-round that decryption uses.

use crate::modular::{inv_mod, mul_mod};
use crate::RingError;
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

/// Precomputed CRT data for primes p_0..p_{k−1} with q = ∏ p_i:
/// q̂_i = q/p_i and q̃_i = q̂_i^−1 mod p_i, so that for residues x_i,
/// x ≡ Σ_i [x_i·q̃_i]_{p_i} · q̂_i (mod q).
#[derive(Clone, Debug)]
pub struct CrtBasis {
    moduli: Vec<u64>,
    q: BigUint,
    q_hat: Vec<BigUint>,
    q_tilde: Vec<u64>,
}

impl CrtBasis {
    /// The basis for distinct primes.
    pub fn new(moduli: &[u64]) -> Result<Self, RingError> {
        if moduli.is_empty() {
            return Err(RingError::InvalidModulusChain(0));
        }
        let q: BigUint = moduli.iter().map(|&p| BigUint::from(p)).product();
        let mut q_hat = Vec::with_capacity(moduli.len());
        let mut q_tilde = Vec::with_capacity(moduli.len());
        for &p in moduli {
            let hat = &q / p;
            let hat_mod_p = (&hat % p).to_u64().unwrap_or(0);
            let tilde =
                inv_mod(hat_mod_p, p).ok_or(RingError::InvalidModulusChain(moduli.len()))?;
            q_hat.push(hat);
            q_tilde.push(tilde);
        }
        Ok(Self {
            moduli: moduli.to_vec(),
            q,
            q_hat,
            q_tilde,
        })
    }

    /// q = ∏ p_i.
    pub fn modulus(&self) -> &BigUint {
        &self.q
    }

    /// The integer x ∈ (−q/2, q/2] with x ≡ residues\[i\] (mod p_i) for every i.
    pub fn reconstruct_centered(&self, residues: &[u64]) -> BigInt {
        let mut x = BigUint::default();
        for (i, &r) in residues.iter().enumerate() {
            let y = mul_mod(r % self.moduli[i], self.q_tilde[i], self.moduli[i]);
            x += &self.q_hat[i] * y;
        }
        x %= &self.q;
        let half = &self.q >> 1u32;
        if x > half {
            BigInt::from(x) - BigInt::from(self.q.clone())
        } else {
            BigInt::from(x)
        }
    }

    /// [`Self::reconstruct_centered`] as an `i128`, when it fits.
    pub fn reconstruct_centered_i128(&self, residues: &[u64]) -> Option<i128> {
        self.reconstruct_centered(residues).to_i128()
    }

    /// The per-prime constants of `scale_and_round` for a plaintext modulus t.
    pub fn scaler(&self, t: u64) -> ScaleAndRound {
        let terms = self
            .moduli
            .iter()
            .zip(&self.q_tilde)
            .map(|(&p, &q_tilde)| ScaleTerm {
                p,
                q_tilde,
                t_div_p: t / p,
                t_mod_p: t % p,
            })
            .collect();
        ScaleAndRound { t, terms }
    }
}

#[derive(Clone, Copy, Debug)]
struct ScaleTerm {
    p: u64,
    q_tilde: u64,
    t_div_p: u64,
    t_mod_p: u64,
}

/// Computes ⌊t·x/q⌉ mod t from the residues of x without reconstructing x.
///
/// With y_i = [x_i·q̃_i]_{p_i}, x = Σ y_i·q̂_i − κq for an integer κ, so
/// t·x/q ≡ Σ_i y_i·t/p_i (mod t). Each term splits exactly into an integer
/// part y_i·⌊t/p_i⌋ + ⌊y_i·(t mod p_i)/p_i⌋ (128-bit arithmetic, t < 2^63) and
/// a fraction in [0, 1); only the k fractions are summed in floating point, so
/// the result is exact unless t·x/q lies within k·2^−52 of a half-integer —
/// which the decryption noise margin rules out.
#[derive(Clone, Debug)]
pub struct ScaleAndRound {
    t: u64,
    terms: Vec<ScaleTerm>,
}

impl ScaleAndRound {
    /// ⌊t·x/q⌉ mod t for the coefficient whose residues are `residues[i]` mod p_i.
    #[inline]
    pub fn apply(&self, residues: impl Iterator<Item = u64>) -> u64 {
        let t = self.t as u128;
        let mut integer: u128 = 0;
        let mut fraction = 0f64;
        for (term, x) in self.terms.iter().zip(residues) {
            let y = mul_mod(x, term.q_tilde, term.p);
            let num = y as u128 * term.t_mod_p as u128;
            let (quo, rem) = (num / term.p as u128, (num % term.p as u128) as u64);
            integer += (y as u128 * term.t_div_p as u128) % t + quo % t;
            fraction += rem as f64 / term.p as f64;
        }
        let rounded = integer + fraction.round() as u128;
        (rounded % t) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Csprng;

    const P: [u64; 3] = [0x3fffffffffff0001, 0x3ffffffffffe8001, 0x3ffffffffff1c001];

    /// Reference: ⌊num/den⌉ in big integers.
    fn round_div(num: &BigUint, den: &BigUint) -> BigUint {
        (num + (den >> 1u32)) / den
    }

    #[test]
    fn reconstruction_inverts_reduction() {
        let basis = CrtBasis::new(&P[..2]).unwrap();
        for v in [
            0i128,
            1,
            -1,
            123456789012345678901234567,
            -(1i128 << 122),
            (1i128 << 122) + 5,
        ] {
            let residues: Vec<u64> = P[..2]
                .iter()
                .map(|&p| v.rem_euclid(p as i128) as u64)
                .collect();
            assert_eq!(basis.reconstruct_centered_i128(&residues), Some(v));
        }
        let basis3 = CrtBasis::new(&P).unwrap();
        let v = BigInt::from(-7i64) * BigInt::from(1u128 << 100) * BigInt::from(1u64 << 60);
        let residues: Vec<u64> = P
            .iter()
            .map(|&p| {
                let r = &v % BigInt::from(p);
                let r = if r < BigInt::default() {
                    r + BigInt::from(p)
                } else {
                    r
                };
                r.to_u64().unwrap()
            })
            .collect();
        assert_eq!(basis3.reconstruct_centered(&residues), v);
    }

    #[test]
    fn scale_and_round_matches_big_integer_reference() {
        let mut rng = Csprng::from_u128_seed(9);
        for k in [1usize, 2, 3] {
            let basis = CrtBasis::new(&P[..k]).unwrap();
            for t in [
                2u64,
                1 << 20,
                (1 << 49) + 12345,
                (1 << 62) - 57,
                (1 << 63) - 25,
            ] {
                let scaler = basis.scaler(t);
                for _ in 0..2000 {
                    let residues: Vec<u64> = P[..k].iter().map(|&p| rng.uniform_below(p)).collect();
                    let x = basis.reconstruct_centered(&residues);
                    let q = BigInt::from(basis.modulus().clone());
                    let x = if x < BigInt::default() { x + &q } else { x };
                    let expect = round_div(&(x.to_biguint().unwrap() * t), basis.modulus()) % t;
                    // Skip the measure-zero case of an exact half (both roundings valid).
                    let got = scaler.apply(residues.iter().copied());
                    assert_eq!(BigUint::from(got), expect, "k={k} t={t}");
                }
            }
        }
    }
}
