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

/// Σ_k a_k · b_k mod p for residues a_k, b_k < p < 2^63.
///
/// Equal to folding [`mul_mod`] and [`add_mod`] over the pairs, but the
/// products are summed in 128 bits and reduced once per run of as many as
/// fit (16 for the 62-bit primes of the default set), not once each: a
/// 128-bit remainder is a library call, and the sum digests of issue 16
/// take one inner product per coefficient of every ciphertext they check.
pub fn dot_mod(a: &[u64], b: &[u64], p: u64) -> u64 {
    assert_eq!(a.len(), b.len(), "dot_mod of slices of unequal length");
    let max_product = (p as u128 - 1) * (p as u128 - 1);
    // p = 1 makes every product 0: any run fits.
    let run = u128::MAX
        .checked_div(max_product)
        .map_or(usize::MAX, |r| r.min(usize::MAX as u128) as usize);
    let mut total = 0u64;
    for (xs, ys) in a.chunks(run).zip(b.chunks(run)) {
        let acc = xs
            .iter()
            .zip(ys)
            .fold(0u128, |acc, (&x, &y)| acc + x as u128 * y as u128);
        total = add_mod(total, (acc % p as u128) as u64, p);
    }
    total
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

    /// a · b mod p by doubling and adding (no 128-bit arithmetic): an
    /// independent reference for the products `dot_mod` sums in 128 bits.
    fn peasant_mul(mut a: u64, mut b: u64, p: u64) -> u64 {
        let mut r = 0;
        while b > 0 {
            if b & 1 == 1 {
                r = add_mod(r, a, p);
            }
            a = add_mod(a, a, p);
            b >>= 1;
        }
        r
    }

    #[test]
    fn dot_mod_is_the_sum_of_products_at_every_run_boundary() {
        let largest_below_2_63 = (1u64 << 63) - 25;
        assert!(is_prime(largest_below_2_63));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for p in [
            2u64,
            3,
            0x3fffffffffff0001,
            0x3ffffffffffe8001,
            largest_below_2_63,
        ] {
            for len in [0usize, 1, 2, 3, 4, 15, 16, 17, 33, 1000] {
                // All p − 1: the largest products, where a sum of one run more
                // would overflow 128 bits; then random residues.
                let worst = vec![p - 1; len];
                let a: Vec<u64> = (0..len).map(|_| next() % p).collect();
                let b: Vec<u64> = (0..len).map(|_| next() % p).collect();
                for (x, y) in [(&worst, &worst), (&a, &b), (&worst, &b)] {
                    let reference = x
                        .iter()
                        .zip(y)
                        .fold(0, |acc, (&u, &v)| add_mod(acc, peasant_mul(u, v, p), p));
                    assert_eq!(dot_mod(x, y, p), reference, "p = {p}, length {len}");
                }
            }
        }
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
