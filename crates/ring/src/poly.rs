//! The polynomial entity and its arithmetic.

use crate::modular::{add_mod, mul_mod_shoup, shoup_precompute, sub_mod};
use crate::{RingContext, RingError};
use std::sync::Arc;
use zeroize::Zeroize;

/// How the residues of a [`Poly`] are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Representation {
    /// Coefficients of X^0, …, X^{N−1}, one residue per prime.
    Coefficient,
    /// The forward negacyclic NTT of the coefficients (`concrete-ntt`'s
    /// bit-reversed order), one transform per prime. Products are pointwise here.
    Ntt,
}

/// An element of R_q in RNS form: `k` residue polynomials of N values each,
/// stored limb-major (`data[i·N + j]` is coefficient or slot j modulo p_i).
/// Every residue is kept fully reduced, `< p_i`.
#[derive(Clone)]
pub struct Poly {
    ctx: Arc<RingContext>,
    representation: Representation,
    data: Vec<u64>,
}

/// Never prints residues: a `Poly` may be secret (a key share, an error term).
impl std::fmt::Debug for Poly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poly")
            .field("degree", &self.ctx.degree())
            .field("limbs", &self.ctx.limb_count())
            .field("representation", &self.representation)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Poly {
    fn eq(&self, other: &Self) -> bool {
        self.ctx == other.ctx
            && self.representation == other.representation
            && self.data == other.data
    }
}
impl Eq for Poly {}

impl Zeroize for Poly {
    fn zeroize(&mut self) {
        self.data.zeroize();
    }
}

impl Poly {
    /// The zero polynomial.
    pub fn zero(ctx: &Arc<RingContext>, representation: Representation) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            representation,
            data: vec![0; ctx.degree() * ctx.limb_count()],
        }
    }

    /// A polynomial from limb-major residues, checking the length and that every
    /// residue is below its prime (the check every decoder of untrusted bytes needs).
    pub fn from_residues(
        ctx: &Arc<RingContext>,
        representation: Representation,
        data: Vec<u64>,
    ) -> Result<Self, RingError> {
        let n = ctx.degree();
        let expected = n * ctx.limb_count();
        if data.len() != expected {
            return Err(RingError::Length {
                expected,
                got: data.len(),
            });
        }
        for (limb, &p) in ctx.moduli().iter().enumerate() {
            let range = limb * n..(limb + 1) * n;
            if let Some(j) = data[range.clone()].iter().position(|&v| v >= p) {
                return Err(RingError::ResidueOutOfRange {
                    position: range.start + j,
                    value: data[range.start + j],
                    modulus: p,
                });
            }
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
            representation,
            data,
        })
    }

    /// The coefficient-form polynomial Σ c_j X^j for signed integer coefficients,
    /// each reduced modulo every prime.
    pub fn from_signed(ctx: &Arc<RingContext>, coefficients: &[i128]) -> Result<Self, RingError> {
        let n = ctx.degree();
        if coefficients.len() != n {
            return Err(RingError::Length {
                expected: n,
                got: coefficients.len(),
            });
        }
        let mut poly = Self::zero(ctx, Representation::Coefficient);
        for limb in 0..ctx.limb_count() {
            for (dst, &c) in poly.data[limb * n..(limb + 1) * n]
                .iter_mut()
                .zip(coefficients)
            {
                *dst = ctx.reduce_signed(limb, c);
            }
        }
        Ok(poly)
    }

    /// The ring this polynomial lives in.
    pub fn context(&self) -> &Arc<RingContext> {
        &self.ctx
    }

    /// Its representation.
    pub fn representation(&self) -> Representation {
        self.representation
    }

    /// All residues, limb-major.
    pub fn residues(&self) -> &[u64] {
        &self.data
    }

    /// The residues modulo prime `i`.
    pub fn limb(&self, i: usize) -> &[u64] {
        let n = self.ctx.degree();
        &self.data[i * n..(i + 1) * n]
    }

    pub(crate) fn limb_mut(&mut self, i: usize) -> &mut [u64] {
        let n = self.ctx.degree();
        &mut self.data[i * n..(i + 1) * n]
    }

    fn check_compatible(&self, other: &Self) -> Result<(), RingError> {
        if self.ctx != other.ctx {
            return Err(RingError::Mismatch("operands live in different rings"));
        }
        if self.representation != other.representation {
            return Err(RingError::Mismatch(
                "operands are in different representations",
            ));
        }
        Ok(())
    }

    /// self ← self + other (mod q), in either representation.
    pub fn add_assign(&mut self, other: &Self) -> Result<(), RingError> {
        self.zip_assign(other, add_mod)
    }

    /// self ← self − other (mod q), in either representation.
    pub fn sub_assign(&mut self, other: &Self) -> Result<(), RingError> {
        self.zip_assign(other, sub_mod)
    }

    /// self_i ← op(self_i, other_i, p) residue by residue. Generic rather than a
    /// function pointer, so that `op` is inlined and the loop vectorises.
    fn zip_assign(
        &mut self,
        other: &Self,
        op: impl Fn(u64, u64, u64) -> u64,
    ) -> Result<(), RingError> {
        self.check_compatible(other)?;
        let n = self.ctx.degree();
        for (limb, &p) in self.ctx.clone().moduli().iter().enumerate() {
            let rhs = &other.data[limb * n..(limb + 1) * n];
            for (a, &b) in self.limb_mut(limb).iter_mut().zip(rhs) {
                *a = op(*a, b, p);
            }
        }
        Ok(())
    }

    /// self ← c·self (mod q) for a constant c ∈ Z_q given by its residues
    /// c mod p_i, one per prime (so a scalar of R_q such as a Lagrange
    /// coefficient, or an integer reduced modulo each prime). Works in either
    /// representation: the NTT is linear. Each residue must be below its prime.
    pub fn mul_scalar_assign(&mut self, residues: &[u64]) -> Result<(), RingError> {
        let ctx = Arc::clone(&self.ctx);
        if residues.len() != ctx.limb_count() {
            return Err(RingError::Length {
                expected: ctx.limb_count(),
                got: residues.len(),
            });
        }
        for (limb, (&p, &c)) in ctx.moduli().iter().zip(residues).enumerate() {
            if c >= p {
                return Err(RingError::ResidueOutOfRange {
                    position: limb,
                    value: c,
                    modulus: p,
                });
            }
            let c_shoup = shoup_precompute(c, p);
            for a in self.limb_mut(limb) {
                *a = mul_mod_shoup(*a, c, c_shoup, p);
            }
        }
        Ok(())
    }

    /// self ← −self (mod q).
    pub fn neg_assign(&mut self) {
        for (limb, &p) in self.ctx.clone().moduli().iter().enumerate() {
            for a in self.limb_mut(limb) {
                *a = sub_mod(0, *a, p);
            }
        }
    }

    /// Converts to NTT form in place (no-op if already there).
    pub fn to_ntt(&mut self) {
        if self.representation == Representation::Ntt {
            return;
        }
        let ctx = Arc::clone(&self.ctx);
        for limb in 0..ctx.limb_count() {
            ctx.plan(limb).fwd(self.limb_mut(limb));
        }
        self.representation = Representation::Ntt;
    }

    /// Converts to coefficient form in place: inverse NTT, then the factor N^−1.
    pub fn to_coefficient(&mut self) {
        if self.representation == Representation::Coefficient {
            return;
        }
        let ctx = Arc::clone(&self.ctx);
        for limb in 0..ctx.limb_count() {
            let plan = ctx.plan(limb);
            let buf = self.limb_mut(limb);
            plan.inv(buf);
            plan.normalize(buf);
        }
        self.representation = Representation::Coefficient;
    }

    /// This polynomial in NTT form (a copy if it was in coefficient form).
    pub fn into_ntt(mut self) -> Self {
        self.to_ntt();
        self
    }

    /// The negacyclic product self · other in R_q, returned in coefficient form.
    ///
    /// Operands in NTT form are used as they are, so a long-lived operand (a
    /// public key, a secret share) should be kept in NTT form: the product then
    /// costs one forward transform for the other operand, a pointwise product
    /// and one inverse transform per prime. The N^−1 of the inverse transform is
    /// folded into the pointwise product (`mul_assign_normalize`).
    pub fn mul(&self, other: &Self) -> Result<Self, RingError> {
        // The product commutes: copy the operand still in coefficient form, so
        // that a cached NTT-form operand is only read and the product costs one
        // 128 KiB copy rather than two.
        let (mut out, rhs) = if self.representation == Representation::Ntt {
            (other.clone(), self)
        } else {
            (self.clone(), other)
        };
        out.mul_assign(rhs)?;
        Ok(out)
    }

    /// self ← self · other in R_q, in place, leaving self in coefficient form.
    ///
    /// Like [`Poly::mul`] without the copy: self is transformed in place if it
    /// is in coefficient form, and `other` is only read if it is in NTT form.
    pub fn mul_assign(&mut self, other: &Self) -> Result<(), RingError> {
        if self.ctx != other.ctx {
            return Err(RingError::Mismatch("operands live in different rings"));
        }
        let ctx = Arc::clone(&self.ctx);
        self.to_ntt();
        let rhs_ntt;
        let rhs = if other.representation == Representation::Ntt {
            other
        } else {
            rhs_ntt = other.clone().into_ntt();
            &rhs_ntt
        };
        for limb in 0..ctx.limb_count() {
            let plan = ctx.plan(limb);
            let buf = self.limb_mut(limb);
            plan.mul_assign_normalize(buf, rhs.limb(limb));
            plan.inv(buf);
        }
        self.representation = Representation::Coefficient;
        Ok(())
    }

    /// The pointwise product of two NTT-form polynomials, in NTT form:
    /// NTT(a·b) = NTT(a) ⊙ NTT(b).
    pub fn mul_ntt(&self, other: &Self) -> Result<Self, RingError> {
        self.check_compatible(other)?;
        if self.representation != Representation::Ntt {
            return Err(RingError::Mismatch("mul_ntt needs NTT-form operands"));
        }
        let ctx = Arc::clone(&self.ctx);
        let mut out = Self::zero(&ctx, Representation::Ntt);
        for limb in 0..ctx.limb_count() {
            ctx.plan(limb)
                .mul_accumulate(out.limb_mut(limb), self.limb(limb), other.limb(limb));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::{mul_mod, sub_mod};

    /// Test polynomials with residues from a splitmix64 stream (reduced mod
    /// each prime), so the ring arithmetic's tests do not depend on the
    /// samplers built on it (`crate::sampling`).
    struct TestPolys(u64);

    impl TestPolys {
        fn from_u128_seed(seed: u128) -> Self {
            Self(seed as u64 ^ (seed >> 64) as u64)
        }

        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn uniform_poly(&mut self, ctx: &Arc<RingContext>) -> Poly {
            let n = ctx.degree();
            let mut data = Vec::with_capacity(n * ctx.limb_count());
            for &p in ctx.moduli() {
                data.extend((0..n).map(|_| self.next() % p));
            }
            Poly::from_residues(ctx, Representation::Coefficient, data).unwrap()
        }
    }

    const P0: u64 = 0x3fffffffffff0001;
    const P1: u64 = 0x3ffffffffffe8001;

    /// Independent reference: the schoolbook negacyclic product modulo p,
    /// c_k = Σ_{i+j=k} a_i b_j − Σ_{i+j=k+N} a_i b_j.
    fn schoolbook(a: &[u64], b: &[u64], p: u64) -> Vec<u64> {
        let n = a.len();
        let mut c = vec![0u64; n];
        for (i, &ai) in a.iter().enumerate() {
            for (j, &bj) in b.iter().enumerate() {
                let t = mul_mod(ai, bj, p);
                let k = i + j;
                if k < n {
                    c[k] = add_mod(c[k], t, p);
                } else {
                    c[k - n] = sub_mod(c[k - n], t, p);
                }
            }
        }
        c
    }

    fn check_products(n: usize, seed: u128) {
        let ctx = RingContext::new(n, &[P0, P1]).unwrap();
        let mut rng = TestPolys::from_u128_seed(seed);
        let a = rng.uniform_poly(&ctx);
        let b = rng.uniform_poly(&ctx);
        let c = a.mul(&b).unwrap();
        assert_eq!(c.representation(), Representation::Coefficient);
        for (limb, &p) in ctx.moduli().iter().enumerate() {
            assert_eq!(
                c.limb(limb),
                schoolbook(a.limb(limb), b.limb(limb), p).as_slice()
            );
        }
        // Same product through the NTT-domain product and back.
        let mut d = a.clone().into_ntt().mul_ntt(&b.clone().into_ntt()).unwrap();
        d.to_coefficient();
        assert_eq!(d, c);
        // And with one operand pre-transformed (the cached public-key path),
        // either way round, and in place.
        let b_ntt = b.clone().into_ntt();
        assert_eq!(a.mul(&b_ntt).unwrap(), c);
        assert_eq!(b_ntt.mul(&a).unwrap(), c);
        let mut e = a.clone().into_ntt();
        e.mul_assign(&b_ntt).unwrap();
        assert_eq!(e, c);
        let mut e = a.clone();
        e.mul_assign(&b).unwrap();
        assert_eq!(e, c);
    }

    #[test]
    fn product_matches_schoolbook_n1024() {
        for seed in 0..3 {
            check_products(1024, seed);
        }
    }

    #[test]
    fn product_matches_schoolbook_n8192() {
        check_products(8192, 7);
    }

    #[test]
    fn product_with_small_signed_operands() {
        // (1 + X) · (1 − X) = 1 − X^2; X^{N−1} · X = X^N = −1.
        let ctx = RingContext::new(16, &[97]).unwrap();
        let n = ctx.degree();
        let mut a = vec![0i128; n];
        let mut b = vec![0i128; n];
        a[0] = 1;
        a[1] = 1;
        b[0] = 1;
        b[1] = -1;
        let c = Poly::from_signed(&ctx, &a)
            .unwrap()
            .mul(&Poly::from_signed(&ctx, &b).unwrap())
            .unwrap();
        let mut expect = vec![0i128; n];
        expect[0] = 1;
        expect[2] = -1;
        assert_eq!(c, Poly::from_signed(&ctx, &expect).unwrap());
        let mut x_top = vec![0i128; n];
        x_top[n - 1] = 1;
        let mut x = vec![0i128; n];
        x[1] = 1;
        let mut minus_one = vec![0i128; n];
        minus_one[0] = -1;
        assert_eq!(
            Poly::from_signed(&ctx, &x_top)
                .unwrap()
                .mul(&Poly::from_signed(&ctx, &x).unwrap())
                .unwrap(),
            Poly::from_signed(&ctx, &minus_one).unwrap()
        );
    }

    #[test]
    fn ntt_round_trip_and_reduced_outputs() {
        let ctx = RingContext::new(8192, &[P0, P1]).unwrap();
        let mut rng = TestPolys::from_u128_seed(11);
        let a = rng.uniform_poly(&ctx);
        let mut t = a.clone();
        t.to_ntt();
        for (limb, &p) in ctx.moduli().iter().enumerate() {
            assert!(t.limb(limb).iter().all(|&v| v < p));
        }
        t.to_coefficient();
        assert_eq!(t, a);
    }

    #[test]
    fn add_sub_neg_agree_with_scalar_arithmetic() {
        let ctx = RingContext::new(1024, &[P0, P1]).unwrap();
        let mut rng = TestPolys::from_u128_seed(5);
        let a = rng.uniform_poly(&ctx);
        let b = rng.uniform_poly(&ctx);
        let mut s = a.clone();
        s.add_assign(&b).unwrap();
        let mut d = s.clone();
        d.sub_assign(&b).unwrap();
        assert_eq!(d, a);
        let mut n = a.clone();
        n.neg_assign();
        n.add_assign(&a).unwrap();
        assert_eq!(n, Poly::zero(&ctx, Representation::Coefficient));
        for (limb, &p) in ctx.moduli().iter().enumerate() {
            for j in 0..1024 {
                assert_eq!(
                    s.limb(limb)[j],
                    ((a.limb(limb)[j] as u128 + b.limb(limb)[j] as u128) % p as u128) as u64
                );
            }
        }
    }

    #[test]
    fn scalar_product_matches_scalar_arithmetic() {
        let ctx = RingContext::new(1024, &[P0, P1]).unwrap();
        let mut rng = TestPolys::from_u128_seed(9);
        let a = rng.uniform_poly(&ctx);
        let c = [P0 - 3, 123_456_789];
        let mut b = a.clone();
        b.mul_scalar_assign(&c).unwrap();
        for (limb, &p) in ctx.moduli().iter().enumerate() {
            for j in 0..1024 {
                let want = (a.limb(limb)[j] as u128 * c[limb] as u128 % p as u128) as u64;
                assert_eq!(b.limb(limb)[j], want);
            }
        }
        // The same in NTT form, and bad scalars refused.
        let mut d = a.clone().into_ntt();
        d.mul_scalar_assign(&c).unwrap();
        d.to_coefficient();
        assert_eq!(d, b);
        assert!(b.mul_scalar_assign(&[1]).is_err());
        assert!(b.mul_scalar_assign(&[P0, 1]).is_err());
    }

    #[test]
    fn mismatched_operands_are_errors() {
        let c1 = RingContext::new(1024, &[P0, P1]).unwrap();
        let c2 = RingContext::new(2048, &[P0, P1]).unwrap();
        let mut a = Poly::zero(&c1, Representation::Coefficient);
        assert!(a
            .add_assign(&Poly::zero(&c2, Representation::Coefficient))
            .is_err());
        assert!(a.add_assign(&Poly::zero(&c1, Representation::Ntt)).is_err());
        assert!(a
            .mul(&Poly::zero(&c2, Representation::Coefficient))
            .is_err());
        assert!(a.mul_ntt(&a.clone()).is_err());
    }

    #[test]
    fn from_residues_checks_range_and_length() {
        let ctx = RingContext::new(1024, &[P0, P1]).unwrap();
        let mut data = vec![0u64; 2048];
        assert!(Poly::from_residues(&ctx, Representation::Coefficient, data.clone()).is_ok());
        data[1500] = P1;
        assert_eq!(
            Poly::from_residues(&ctx, Representation::Coefficient, data).unwrap_err(),
            RingError::ResidueOutOfRange {
                position: 1500,
                value: P1,
                modulus: P1
            }
        );
        assert!(matches!(
            Poly::from_residues(&ctx, Representation::Coefficient, vec![0; 10]),
            Err(RingError::Length {
                expected: 2048,
                got: 10
            })
        ));
    }

    #[test]
    fn debug_prints_no_residues() {
        let ctx = RingContext::new(1024, &[P0]).unwrap();
        let mut rng = TestPolys::from_u128_seed(1);
        let a = rng.uniform_poly(&ctx);
        let s = format!("{a:?}");
        assert!(!s.contains(&a.limb(0)[0].to_string()), "{s}");
    }
}
