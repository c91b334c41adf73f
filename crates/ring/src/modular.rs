//! Scalar arithmetic modulo a word-sized prime. Hot loops use `concrete-ntt`'s
//! vectorised kernels; these scalar helpers serve setup, CRT and reference code.

/// (a + b) mod p for a, b < p < 2^63.
///
/// Branch-free: when s = a + b < p, s − p wraps above s and `min` keeps s.
/// Residues are random, so a branch here would mispredict half the time; `min`
/// is a compare and a conditional move, and vectorises.
#[inline]
pub fn add_mod(a: u64, b: u64, p: u64) -> u64 {
    let s = a + b;
    s.min(s.wrapping_sub(p))
}

/// (a − b) mod p for a, b < p < 2^63, branch-free like [`add_mod`]: when a < b,
/// a − b wraps above p and adding p brings it back below.
#[inline]
pub fn sub_mod(a: u64, b: u64, p: u64) -> u64 {
    let d = a.wrapping_sub(b);
    d.min(d.wrapping_add(p))
}

/// −x mod p if `negate`, else x, for x < p < 2^63; branch-free, since the
/// callers' signs are random and a branch would mispredict half the time.
#[inline]
pub fn neg_mod_if(x: u64, negate: bool, p: u64) -> u64 {
    let mask = 0u64.wrapping_sub(negate as u64);
    x ^ ((x ^ sub_mod(0, x, p)) & mask)
}

/// (a · b) mod p through a 128-bit product.
#[inline]
pub fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    ((a as u128 * b as u128) % p as u128) as u64
}

/// a^e mod p by square-and-multiply.
pub fn pow_mod(mut a: u64, mut e: u64, p: u64) -> u64 {
    let mut r = 1 % p;
    a %= p;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, a, p);
        }
        a = mul_mod(a, a, p);
        e >>= 1;
    }
    r
}

/// a^−1 mod p for prime p (Fermat: a^(p−2)); `None` for a ≡ 0.
pub fn inv_mod(a: u64, p: u64) -> Option<u64> {
    if a.is_multiple_of(p) {
        None
    } else {
        Some(pow_mod(a, p - 2, p))
    }
}

/// The signed integer v reduced to [0, p).
#[inline]
pub fn reduce_i128(v: i128, p: u64) -> u64 {
    v.rem_euclid(p as i128) as u64
}

/// Deterministic Miller–Rabin for 64-bit integers (the bases 2..37 are exact below 2^64).
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for &b in &BASES {
        if n.is_multiple_of(b) {
            return n == b;
        }
    }
    let mut d = n - 1;
    let mut s = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    'bases: for &a in &BASES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primality_matches_trial_division() {
        let trial = |n: u64| {
            n >= 2
                && (2..)
                    .take_while(|d| d * d <= n)
                    .all(|d| !n.is_multiple_of(d))
        };
        for n in 0..5000u64 {
            assert_eq!(is_prime(n), trial(n), "n = {n}");
        }
        // Known large primes and a Carmichael number.
        assert!(is_prime(0x3fffffffffff0001));
        assert!(is_prime(0x3ffffffffffe8001));
        assert!(is_prime(18446744073709551557)); // largest prime below 2^64
        assert!(!is_prime(3215031751)); // strong pseudoprime to bases 2, 3, 5, 7
        assert!(!is_prime(561));
    }

    #[test]
    fn inverse_times_value_is_one() {
        let p = 0x3fffffffffff0001;
        for a in [1u64, 2, 3, 12345, p - 1, 0x1234_5678_9abc] {
            assert_eq!(mul_mod(a, inv_mod(a, p).unwrap(), p), 1);
        }
        assert_eq!(inv_mod(0, p), None);
        assert_eq!(reduce_i128(-1, 7), 6);
        assert_eq!(sub_mod(1, 3, 7), 5);
        assert_eq!(add_mod(5, 4, 7), 2);
        assert_eq!(neg_mod_if(2, true, 7), 5);
        assert_eq!(neg_mod_if(0, true, 7), 0);
        assert_eq!(neg_mod_if(2, false, 7), 2);
    }
}

/// Shoup's precomputation for multiplying by a fixed w modulo p: ⌊w·2^64/p⌋.
#[inline]
pub fn shoup_precompute(w: u64, p: u64) -> u64 {
    (((w as u128) << 64) / p as u128) as u64
}

/// (x · w) mod p for any 64-bit x, with w < p < 2^63 and w' = [`shoup_precompute`]`(w, p)`:
/// x·w − ⌊x·w'/2^64⌋·p lies in [0, 2p), one conditional subtraction finishes.
#[inline]
pub fn mul_mod_shoup(x: u64, w: u64, w_shoup: u64, p: u64) -> u64 {
    let q = ((x as u128 * w_shoup as u128) >> 64) as u64;
    let r = x.wrapping_mul(w).wrapping_sub(q.wrapping_mul(p));
    r.min(r.wrapping_sub(p))
}

#[cfg(test)]
mod shoup_tests {
    use super::*;

    #[test]
    fn shoup_product_matches_128_bit_product() {
        let p = 0x3ffffffffffe8001u64;
        let mut x = 0x9e3779b97f4a7c15u64;
        for w in [0u64, 1, 2, p - 1, 0x1234_5678_9abc_def0 % p] {
            let ws = shoup_precompute(w, p);
            for _ in 0..1000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                assert_eq!(
                    mul_mod_shoup(x, w, ws, p),
                    ((x as u128 * w as u128) % p as u128) as u64
                );
            }
            assert_eq!(
                mul_mod_shoup(u64::MAX, w, ws, p),
                ((u64::MAX as u128 * w as u128) % p as u128) as u64
            );
        }
    }
}
