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
