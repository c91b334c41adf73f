//! A toy-parameter n-of-n ceremony for unit tests (insecure parameters,
//! seeded randomness): one setup for the tests that need keys.

use crate::{
    CollectivePublicKey, CommonRandomPoly, InsecurePolicy, MemberId, ParameterSet, Params,
    PublicKeyShare, SecretKeyShare,
};
use fedhe_ring::Csprng;
use std::sync::Arc;

/// The members `names`, their secret and public-key shares on a CRS from
/// `crs_seed`, the collective key, and the generator that drew them.
pub(crate) struct ToyCeremony {
    pub params: Arc<Params>,
    pub ids: Vec<MemberId>,
    pub crs: CommonRandomPoly,
    pub secrets: Vec<SecretKeyShare>,
    pub shares: Vec<PublicKeyShare>,
    pub key: CollectivePublicKey,
    pub rng: Csprng,
}

impl ToyCeremony {
    pub fn new(names: &[&str], crs_seed: [u8; 32], rng_seed: u128) -> Self {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let ids: Vec<MemberId> = names.iter().map(|m| MemberId::new(*m).unwrap()).collect();
        let crs = CommonRandomPoly::from_seed(&params, crs_seed);
        let mut rng = Csprng::from_u128_seed(rng_seed);
        let secrets: Vec<SecretKeyShare> = ids
            .iter()
            .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
            .collect();
        let shares: Vec<PublicKeyShare> = secrets
            .iter()
            .map(|sk| PublicKeyShare::generate(&params, sk, &crs, &mut rng).unwrap())
            .collect();
        let key = CollectivePublicKey::aggregate(&crs, &ids, &shares).unwrap();
        Self {
            params,
            ids,
            crs,
            secrets,
            shares,
            key,
            rng,
        }
    }
}
