//! Criterion benchmarks of the channel at the default parameter set: the ring
//! product, encryption, a decryption share, and combine for 10 members.
//! Peers (the `fhe` crate) are compared in the same process by
//! `fedhe bench channel --json` (cargo feature `peers` of fedhe-cli).

// criterion_group! expands to an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use fedhe::crypto::decryption::combine;
use fedhe::crypto::*;
use fedhe::ring::Csprng;

fn channel(c: &mut Criterion) {
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    let members: Vec<MemberId> = (0..10)
        .map(|i| MemberId::new(format!("m{i}")).unwrap())
        .collect();
    let mut rng = Csprng::from_u128_seed(1);
    let crs = CommonRandomPoly::for_ceremony(&params, &CeremonyId::new("bench").unwrap(), &members)
        .unwrap();
    let secrets: Vec<_> = members
        .iter()
        .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
        .collect();
    let shares: Vec<_> = secrets
        .iter()
        .map(|s| PublicKeyShare::generate(&params, s, &crs, &mut rng).unwrap())
        .collect();
    let pk = CollectivePublicKey::aggregate(&crs, &members, &shares).unwrap();
    let codec = FixedPointCodec::new(&params, members.len(), 1000.0).unwrap();
    let values: Vec<f64> = (0..2144).map(|i| (i as f64).sin() * 999.0).collect();

    let a = rng.uniform_poly(params.ring());
    let b = rng.uniform_poly(params.ring());
    c.bench_function("ring/mul n8192 two primes", |bench| {
        bench.iter(|| a.mul(&b).unwrap())
    });
    c.bench_function("encrypt 2144 values", |bench| {
        bench.iter(|| EncryptedVector::encrypt(&params, &pk, &codec, &values, &mut rng).unwrap())
    });
    let ct = EncryptedVector::encrypt(&params, &pk, &codec, &values, &mut rng).unwrap();
    // The c1 check (issue 16, fedhe_crypto::c1_commitment): a contributor's
    // commitment, and a member's check of an aggregate of ten.
    C1Generators::of(&params);
    c.bench_function("c1 commitment of a contribution", |bench| {
        bench.iter(|| C1Commitment::commit(&params, &ct))
    });
    let ten: Vec<EncryptedVector> = (0..10)
        .map(|_| EncryptedVector::encrypt(&params, &pk, &codec, &values, &mut rng).unwrap())
        .collect();
    let mut carrying = CarryingSum::new(&params, ten[0].clone());
    for v in &ten[1..] {
        carrying.add(&params, v).unwrap();
    }
    let (sum, carries) = carrying.into_parts();
    let commitments: Vec<C1Commitment> = ten
        .iter()
        .map(|v| C1Commitment::commit(&params, v))
        .collect();
    c.bench_function("c1 check of an aggregate of 10", |bench| {
        bench.iter(|| check_c1_aggregate(&params, &sum, &carries, &commitments).unwrap())
    });
    c.bench_function("decryption share (flooded)", |bench| {
        bench.iter(|| DecryptionShare::generate(&params, &secrets[0], &ct, &mut rng).unwrap())
    });
    let dshares: Vec<_> = secrets
        .iter()
        .map(|s| DecryptionShare::generate(&params, s, &ct, &mut rng).unwrap())
        .collect();
    c.bench_function("combine + decode, 10 members", |bench| {
        bench.iter(|| {
            codec
                .decode(&combine(&members, &ct, &dshares).unwrap(), values.len())
                .unwrap()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = channel
}
criterion_main!(benches);
