use thiserror::Error;

/// Errors of the ring layer: invalid ring parameters or mismatched operands.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RingError {
    /// The ring degree N is not a power of two in the supported range.
    #[error("ring degree {0} is not a power of two between 16 and 65536")]
    InvalidDegree(usize),
    /// A modulus is not a prime ≡ 1 (mod 2N) below 2^62.
    #[error("modulus {modulus:#x} is not a prime ≡ 1 mod 2N below 2^62 for N = {degree}")]
    InvalidModulus {
        /// The offending modulus.
        modulus: u64,
        /// The ring degree it was checked against.
        degree: usize,
    },
    /// No modulus, or the same modulus twice.
    #[error("the moduli must be one or more distinct primes (got {0} moduli)")]
    InvalidModulusChain(usize),
    /// Two operands live in different rings or representations.
    #[error("operand mismatch: {0}")]
    Mismatch(&'static str),
    /// A residue is not reduced modulo its prime.
    #[error("residue {value:#x} at position {position} is not below its modulus {modulus:#x}")]
    ResidueOutOfRange {
        /// Index in the flat limb-major coefficient array.
        position: usize,
        /// The value found.
        value: u64,
        /// The modulus it must be below.
        modulus: u64,
    },
    /// A slice has the wrong length.
    #[error("expected {expected} values, got {got}")]
    Length {
        /// Expected length.
        expected: usize,
        /// Length given.
        got: usize,
    },
}
