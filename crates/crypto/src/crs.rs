//! The common reference polynomial a of a ceremony.

use crate::{CeremonyId, ChannelError, MemberId, Params};
use fedhe_ring::{Csprng, Poly, SEED_BYTES};
use std::sync::Arc;

const CRS_CONTEXT: &str = "fedhe 2026-11 common reference polynomial v1";
const CRS_DOMAIN: [u8; 8] = *b"fedh-crs";

/// BLAKE3 in key-derivation mode under `context` over the fields, each
/// prefixed by its length (u64, little-endian) so that no two field lists
/// hash alike. Every derived seed, digest and key of the crate goes through it.
pub(crate) fn derive_key(context: &str, fields: &[&[u8]]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new_derive_key(context);
    for bytes in fields {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    *hasher.finalize().as_bytes()
}

/// The public uniform polynomial a ∈ R_q shared by all members (DESIGN.md §2
/// step 1). It is expanded from a seed that everybody can recompute:
/// seed = BLAKE3-derive-key(ceremony id ‖ parameter set ‖ sorted member ids),
/// each field length-prefixed, so no party chooses a.
#[derive(Clone, Debug)]
pub struct CommonRandomPoly {
    seed: [u8; SEED_BYTES],
    /// a, in NTT form: it is only ever a multiplicand.
    a_ntt: Poly,
}

impl CommonRandomPoly {
    /// The seed for a ceremony: hash of its id, parameter set and sorted members.
    pub fn derive_seed(
        params: &Params,
        ceremony: &CeremonyId,
        members: &[MemberId],
    ) -> Result<[u8; SEED_BYTES], ChannelError> {
        let mut sorted: Vec<&MemberId> = members.iter().collect();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(ChannelError::DuplicateMember(w[0].clone()));
        }
        let count = (sorted.len() as u64).to_le_bytes();
        let mut fields: Vec<&[u8]> = vec![
            ceremony.as_str().as_bytes(),
            params.set().name.as_bytes(),
            &count,
        ];
        fields.extend(sorted.iter().map(|m| m.as_str().as_bytes()));
        Ok(derive_key(CRS_CONTEXT, &fields))
    }

    /// Expands the polynomial from a seed (uniform mod q, by tfhe's XOF-seeded AES-CTR).
    pub fn from_seed(params: &Params, seed: [u8; SEED_BYTES]) -> Self {
        let a = Csprng::from_seed(&seed, CRS_DOMAIN).uniform_poly(params.ring());
        Self {
            seed,
            a_ntt: a.into_ntt(),
        }
    }

    /// The polynomial of a ceremony.
    pub fn for_ceremony(
        params: &Params,
        ceremony: &CeremonyId,
        members: &[MemberId],
    ) -> Result<Self, ChannelError> {
        Ok(Self::from_seed(
            params,
            Self::derive_seed(params, ceremony, members)?,
        ))
    }

    /// The seed it was expanded from.
    pub fn seed(&self) -> &[u8; SEED_BYTES] {
        &self.seed
    }

    /// a in NTT form.
    pub fn a_ntt(&self) -> &Poly {
        &self.a_ntt
    }

    /// The ring a lives in.
    pub fn ring(&self) -> &Arc<fedhe_ring::RingContext> {
        self.a_ntt.context()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InsecurePolicy, ParameterSet};

    #[test]
    fn seed_depends_on_everything_but_member_order() {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let m = |s: &str| MemberId::new(s).unwrap();
        let c = CeremonyId::new("c1").unwrap();
        let ab = CommonRandomPoly::derive_seed(&params, &c, &[m("a"), m("b")]).unwrap();
        let ba = CommonRandomPoly::derive_seed(&params, &c, &[m("b"), m("a")]).unwrap();
        let ac = CommonRandomPoly::derive_seed(&params, &c, &[m("a"), m("c")]).unwrap();
        let c2 = CommonRandomPoly::derive_seed(
            &params,
            &CeremonyId::new("c2").unwrap(),
            &[m("a"), m("b")],
        )
        .unwrap();
        // Length prefixes: ("ab") and ("a","b") must not collide.
        let joined = CommonRandomPoly::derive_seed(&params, &c, &[m("ab")]).unwrap();
        assert_eq!(ab, ba);
        assert_ne!(ab, ac);
        assert_ne!(ab, c2);
        assert_ne!(ab, joined);
        assert!(matches!(
            CommonRandomPoly::derive_seed(&params, &c, &[m("a"), m("a")]),
            Err(ChannelError::DuplicateMember(_))
        ));
        let p1 = CommonRandomPoly::from_seed(&params, ab);
        let p2 = CommonRandomPoly::from_seed(&params, ba);
        assert_eq!(p1.a_ntt(), p2.a_ntt());
    }
}
