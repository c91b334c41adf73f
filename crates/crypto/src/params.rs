//! Parameter sets: data, not code. Each states its security level from the
//! HomomorphicEncryption.org standard table, and the insecure toy set is refused
//! unless the caller explicitly allows it.

use crate::ChannelError;
use fedhe_ring::{CrtBasis, RingContext};
use std::sync::Arc;

/// The first prime of the default modulus chain (≡ 1 mod 2^16).
pub const P0: u64 = 0x3fffffffffff0001;
/// The second prime (≡ 1 mod 2^15).
pub const P1: u64 = 0x3ffffffffffe8001;
/// The third prime of the wide set (≡ 1 mod 2^14).
pub const P2: u64 = 0x3ffffffffff1c001;

/// A parameter set of the encrypted-sum channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParameterSet {
    /// Name, as the command line and configuration files spell it.
    pub name: &'static str,
    /// Identifier in the wire format.
    pub id: u16,
    /// Ring degree N.
    pub degree: usize,
    /// RNS primes; q = ∏ p_i.
    pub moduli: &'static [u64],
    /// η of the centred-binomial error distribution (variance η/2).
    pub error_eta: u32,
    /// Decryption-share flooding: uniform integers in [−2^b, 2^b).
    pub flooding_bits: u32,
    /// Upper bound on log2 of the plaintext modulus t of a sum (t < 2^63 always;
    /// the codec lowers t further when the member count needs a larger Δ).
    pub max_plaintext_bits: u32,
}

/// The HomomorphicEncryption.org security standard (Albrecht et al., 2018),
/// Table 1 for a uniform ternary secret and error σ ≈ 3.2 (classical attacks):
/// the largest log2 q for 128-, 192- and 256-bit security at each N.
pub const HE_STANDARD_MAX_LOG_Q: [(usize, [u32; 3]); 6] = [
    (1024, [27, 19, 14]),
    (2048, [54, 37, 29]),
    (4096, [109, 75, 58]),
    (8192, [218, 152, 118]),
    (16384, [438, 305, 237]),
    (32768, [881, 611, 476]),
];

impl ParameterSet {
    /// The default set: N = 8192, q = p0·p1 ≈ 2^124.
    pub const N8192_Q124: Self = Self {
        name: "n8192-q124",
        id: 1,
        degree: 8192,
        moduli: &[P0, P1],
        error_eta: 21,
        flooding_bits: 65,
        max_plaintext_bits: 62,
    };

    /// Three primes, q ≈ 2^186: room for larger federations and bounds at full precision.
    pub const N8192_Q186: Self = Self {
        name: "n8192-q186",
        id: 2,
        degree: 8192,
        moduli: &[P0, P1, P2],
        error_eta: 21,
        flooding_bits: 65,
        max_plaintext_bits: 62,
    };

    /// Insecure: N = 1024 with the default modulus, for fast tests only.
    pub const TOY_N1024: Self = Self {
        name: "toy-n1024",
        id: 0xff01,
        degree: 1024,
        moduli: &[P0, P1],
        error_eta: 21,
        flooding_bits: 65,
        max_plaintext_bits: 62,
    };

    /// Every known set.
    pub const ALL: [Self; 3] = [Self::N8192_Q124, Self::N8192_Q186, Self::TOY_N1024];

    /// The default set.
    pub const DEFAULT: Self = Self::N8192_Q124;

    /// The set with this name.
    pub fn by_name(name: &str) -> Result<Self, ChannelError> {
        Self::ALL
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| ChannelError::UnknownParameterSet(name.to_string()))
    }

    /// The set with this wire identifier.
    pub fn by_id(id: u16) -> Result<Self, ChannelError> {
        Self::ALL
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| ChannelError::UnknownParameterSet(format!("id {id:#06x}")))
    }

    /// The bit length of q (= ⌈log2 q⌉ for q not a power of two), the modulus
    /// size the security table is indexed by. Exact: f64 logarithms would round
    /// (2^54 + 1)(2^55 + 1) down to 2^109.
    pub fn modulus_bits(&self) -> u32 {
        let q: num_bigint::BigUint = self
            .moduli
            .iter()
            .map(|&p| num_bigint::BigUint::from(p))
            .product();
        q.bits() as u32
    }

    /// The security level in bits (256, 192 or 128) by the HE standard table, or
    /// 0 when the set meets none of them (or N is not in the table).
    pub fn security_bits(&self) -> u32 {
        let log_q = self.modulus_bits();
        HE_STANDARD_MAX_LOG_Q
            .iter()
            .find(|(n, _)| *n == self.degree)
            .and_then(|(_, max)| {
                [256u32, 192, 128]
                    .into_iter()
                    .zip([max[2], max[1], max[0]])
                    .find(|&(_, m)| log_q <= m)
                    .map(|(level, _)| level)
            })
            .unwrap_or(0)
    }

    /// Whether the set meets at least 128-bit security.
    pub fn is_secure(&self) -> bool {
        self.security_bits() >= 128
    }

    /// Validates the set under a policy and builds its ring: the only way to
    /// obtain [`Params`], which every protocol function takes.
    pub fn validate(self, policy: InsecurePolicy) -> Result<Arc<Params>, ChannelError> {
        if !self.is_secure() && policy != InsecurePolicy::Allow {
            return Err(ChannelError::InsecureParameters {
                name: self.name,
                log_q: self.modulus_bits(),
                degree: self.degree,
            });
        }
        let ring = RingContext::new(self.degree, self.moduli)?;
        let crt = CrtBasis::new(self.moduli)?;
        Ok(Arc::new(Params {
            set: self,
            ring,
            crt,
        }))
    }
}

/// Bits of statistical distance every decryption share's flooding keeps above
/// the ciphertext noise it hides (DESIGN.md §2, §6).
pub const STATISTICAL_MARGIN_BITS: u32 = 40;

impl ParameterSet {
    /// The noise bound of an aggregate of `members` fresh encryptions before
    /// flooding, E_ct(n) = n·η·(2·N·n + 1): each encryption carries
    /// |e_pk·u + e1·s + e0| ≤ η·(2·N·n + 1) since e_pk and s are sums of n
    /// CBD(η) and ternary polynomials (the codec's noise model, [`crate::codec`]).
    pub fn ciphertext_noise_bound(&self, members: usize) -> u128 {
        let n = members as u128;
        n * self.error_eta as u128 * (2 * self.degree as u128 * n + 1)
    }

    /// The flooding bits b(n) of a decryption share in a federation of n members:
    /// b(n) = max(b_set, m − 1 + ⌈log2 E_ct(n)⌉) with m = [`STATISTICAL_MARGIN_BITS`].
    ///
    /// The flooding term is uniform on the 2^(b+1) integers [−2^b, 2^b), and
    /// adding a value e with |e| ≤ E to it moves it by statistical distance
    /// exactly |e|/2^(b+1) ≤ E/2^(b+1) per coefficient (the flooding lemma,
    /// Li–Micciancio), so b + 1 − log2 E_ct(n) ≥ m keeps a distance of at most
    /// 2^−m at every n. The set's own b_set (2^65 at the shipped sets) is kept
    /// while it suffices, so federations of up to 13 members (N = 8192, η = 21)
    /// behave exactly as before; the margin −log2(distance) per federation
    /// size is [`Self::flooding_margin_bits`]:
    ///
    /// | n | log2 E_ct(n) | b(n) | margin (bits) |
    /// | ---: | ---: | ---: | ---: |
    /// | 2 | 20.39 | 65 | 45.61 |
    /// | 10 | 25.04 | 65 | 40.96 |
    /// | 13 | 25.79 | 65 | 40.21 |
    /// | 14 | 26.01 | 66 | 40.99 |
    /// | 100 | 31.68 | 71 | 40.32 |
    /// | 1000 | 38.32 | 78 | 40.68 |
    /// | 2^20 | 58.39 | 98 | 40.61 |
    ///
    /// (N = 8192, η = 21: the three shipped sets share both.) With a fixed 2^65
    /// the margin falls below 40 bits from n = 14 on (39.99 bits there, 34.3 at
    /// n = 100). The codec sizes its plaintext modulus from n·2^b(n), so a
    /// federation too large for the modulus is refused there
    /// ([`crate::CodecError::TooManyMembers`], [`crate::CodecError::Overflow`]).
    pub fn flooding_bits_for(&self, members: usize) -> u32 {
        let e = self.ciphertext_noise_bound(members.max(1));
        // ⌈log2 e⌉ for e ≥ 1.
        let ceil_log2 = 128 - (e - 1).leading_zeros();
        self.flooding_bits
            .max(STATISTICAL_MARGIN_BITS - 1 + ceil_log2)
    }

    /// The statistical margin of the flooding at n members, in bits:
    /// −log2 of the per-coefficient statistical distance E_ct(n)/2^(b(n)+1),
    /// i.e. b(n) + 1 − log2 E_ct(n); at least [`STATISTICAL_MARGIN_BITS`] for every n.
    pub fn flooding_margin_bits(&self, members: usize) -> f64 {
        self.flooding_bits_for(members) as f64 + 1.0
            - (self.ciphertext_noise_bound(members.max(1)) as f64).log2()
    }
}

/// Whether parameter sets below 128-bit security may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InsecurePolicy {
    /// Refuse them (the default everywhere).
    #[default]
    Refuse,
    /// Allow them: tests and local experiments only.
    Allow,
}

/// A validated parameter set with its ring context and CRT basis.
#[derive(Debug)]
pub struct Params {
    set: ParameterSet,
    ring: Arc<RingContext>,
    crt: CrtBasis,
}

impl Params {
    /// The parameter set.
    pub fn set(&self) -> &ParameterSet {
        &self.set
    }

    /// The ring R_q.
    pub fn ring(&self) -> &Arc<RingContext> {
        &self.ring
    }

    /// The CRT basis of q.
    pub fn crt(&self) -> &CrtBasis {
        &self.crt
    }

    /// N, the number of slots of one plaintext.
    pub fn degree(&self) -> usize {
        self.set.degree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_levels_follow_the_standard_table() {
        // q ≈ 2^124 at N = 8192: ≤ 152 (192-bit) but > 118 (256-bit).
        assert_eq!(ParameterSet::N8192_Q124.modulus_bits(), 124);
        assert_eq!(ParameterSet::N8192_Q124.security_bits(), 192);
        // q ≈ 2^186: ≤ 218 (128-bit) but > 152.
        assert_eq!(ParameterSet::N8192_Q186.modulus_bits(), 186);
        assert_eq!(ParameterSet::N8192_Q186.security_bits(), 128);
        // N = 1024 allows only 27 bits of q for 128-bit security.
        assert_eq!(ParameterSet::TOY_N1024.security_bits(), 0);
        let edge = ParameterSet {
            degree: 4096,
            moduli: &[(1 << 54) + 1, (1 << 55) + 1],
            ..ParameterSet::TOY_N1024
        };
        assert_eq!(edge.modulus_bits(), 110);
        assert_eq!(edge.security_bits(), 0); // 110 > 109
    }

    #[test]
    fn every_prime_supports_the_negacyclic_ntt() {
        for set in ParameterSet::ALL {
            let params = set.validate(InsecurePolicy::Allow).unwrap();
            assert_eq!(params.ring().degree(), set.degree);
            for &p in set.moduli {
                assert_eq!(p % (2 * set.degree as u64), 1);
            }
        }
    }

    #[test]
    fn toy_set_is_refused_unless_allowed() {
        let err = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Refuse)
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("toy-n1024")
                && msg.contains("128-bit")
                && msg.contains("--allow-insecure"),
            "{msg}"
        );
        assert!(ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .is_ok());
        assert!(ParameterSet::DEFAULT
            .validate(InsecurePolicy::Refuse)
            .is_ok());
    }

    #[test]
    fn flooding_keeps_the_margin_at_every_size() {
        use num_bigint::BigUint;
        // Independent reference: E_ct(n) in big integers and the smallest b with
        // 2^(b+1) ≥ 2^40·E_ct(n) (distance E/2^(b+1) ≤ 2^−40), found by search
        // rather than by a logarithm.
        let reference = |set: &ParameterSet, n: u64| -> (BigUint, u32) {
            let e = BigUint::from(n)
                * BigUint::from(set.error_eta)
                * (BigUint::from(2 * set.degree as u64) * BigUint::from(n) + 1u32);
            let target = &e << 40u32;
            let b = (0..200u32)
                .find(|&b| (BigUint::from(1u32) << (b + 1)) >= target)
                .unwrap();
            (e, b.max(set.flooding_bits))
        };
        let sizes: Vec<u64> = (1..=64).chain([100, 1000, 4096, 65_536, 1 << 20]).collect();
        for set in ParameterSet::ALL {
            for &n in &sizes {
                let (e, b) = reference(&set, n);
                assert_eq!(BigUint::from(set.ciphertext_noise_bound(n as usize)), e);
                assert_eq!(set.flooding_bits_for(n as usize), b, "{} n = {n}", set.name);
                assert!(set.flooding_margin_bits(n as usize) >= 40.0);
                // The sampler draws at most 120 bits.
                assert!(b <= 120);
            }
        }
        let d = ParameterSet::DEFAULT;
        // Unchanged for n ≤ 13; the fixed 2^65 would have kept only 39.99 bits at n = 14.
        assert_eq!(d.flooding_bits_for(13), 65);
        assert_eq!(d.flooding_bits_for(14), 66);
        assert!(66.0 - (d.ciphertext_noise_bound(14) as f64).log2() < 40.0);
        // The table in the docs.
        for (n, b, margin) in [
            (2, 65, 45.61),
            (10, 65, 40.96),
            (13, 65, 40.21),
            (14, 66, 40.99),
            (100, 71, 40.32),
            (1000, 78, 40.68),
            (1 << 20, 98, 40.61),
        ] {
            assert_eq!(d.flooding_bits_for(n), b, "n = {n}");
            assert!((d.flooding_margin_bits(n) - margin).abs() < 0.01, "n = {n}");
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(
            ParameterSet::by_name("n8192-q186").unwrap(),
            ParameterSet::N8192_Q186
        );
        assert_eq!(ParameterSet::by_id(1).unwrap(), ParameterSet::N8192_Q124);
        assert!(ParameterSet::by_name("n4096").is_err());
        let ids: std::collections::HashSet<u16> = ParameterSet::ALL.iter().map(|s| s.id).collect();
        assert_eq!(ids.len(), ParameterSet::ALL.len());
    }
}
