//! `fedhe-ring`: the polynomial ring R_q = Z_q\[X\]/(X^N + 1) in RNS form.
//!
//! q is a product of word-sized primes p_i ≡ 1 (mod 2N). A polynomial is kept
//! as one residue polynomial per prime (the RNS or "double-CRT" representation),
//! either in coefficient form or in negacyclic NTT form; products go through
//! `concrete-ntt` `prime64` plans, which a [`RingContext`] builds once and caches.
//!
//! Layout follows tfhe-rs `core_crypto`: *entities* ([`Poly`], [`RingContext`])
//! hold data; *algorithms* (arithmetic, NTT conversion, CRT, sampling) are
//! functions and methods over them, each documenting the formula it computes.
//!
//! Randomness comes from tfhe's CSPRNG (AES-CTR [`Csprng`]); every sampler draws
//! exact integers (ternary, centred binomial, uniform in an interval, uniform
//! mod q) — never floating-point Gaussians.

mod context;
pub mod crt;
mod error;
pub mod modular;
mod poly;
mod sampling;

pub use context::RingContext;
pub use crt::CrtBasis;
pub use error::RingError;
pub use poly::{Poly, Representation};
pub use sampling::{Csprng, SmallDistribution, SEED_BYTES};
