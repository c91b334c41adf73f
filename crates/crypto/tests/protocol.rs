//! The channel end to end, checked against independent references: a
//! big-integer CRT decoder (not the RNS scale-and-round the codec uses) and
//! the plaintext f64 sum.

use fedhe_crypto::decryption::{add_shares_to_aggregate, combine};
use fedhe_crypto::wire::WireObject;
use fedhe_crypto::*;
use fedhe_ring::Csprng;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use proptest::prelude::*;
use std::sync::Arc;

fn toy() -> Arc<Params> {
    ParameterSet::TOY_N1024
        .validate(InsecurePolicy::Allow)
        .unwrap()
}

fn members(n: usize) -> Vec<MemberId> {
    (0..n)
        .map(|i| MemberId::new(format!("member-{i:02}")).unwrap())
        .collect()
}

fn random_vectors(n: usize, len: usize, bound: f64, seed: u128) -> Vec<Vec<f64>> {
    let mut rng = Csprng::from_u128_seed(seed);
    (0..n)
        .map(|_| {
            (0..len)
                .map(|_| (rng.next_u64() as f64 / u64::MAX as f64 * 2.0 - 1.0) * bound)
                .collect()
        })
        .collect()
}

fn plain_sum(vectors: &[Vec<f64>]) -> Vec<f64> {
    let mut out = vec![0.0; vectors[0].len()];
    for v in vectors {
        for (o, x) in out.iter_mut().zip(v) {
            *o += x;
        }
    }
    out
}

fn channel(params: &Arc<Params>, n: usize, bound: f64, seed: u128) -> HeSum {
    HeSum::new(
        params.clone(),
        &CeremonyId::new("test").unwrap(),
        members(n),
        bound,
        Csprng::from_u128_seed(seed),
    )
    .unwrap()
}

/// Independent decoder: reconstruct x ∈ (−q/2, q/2] by CRT in big integers,
/// then round(x/Δ) with Δ = ⌊q/t⌋, and report the noise x − Δ·m.
fn reference_decode(
    params: &Params,
    codec: &FixedPointCodec,
    plaintexts: &[fedhe_ring::Poly],
    len: usize,
) -> (Vec<f64>, BigInt) {
    let q = BigInt::from(params.crt().modulus().clone());
    let delta = &q / BigInt::from(codec.plaintext_modulus_value());
    let n = params.degree();
    let mut max_noise = BigInt::from(0);
    let values = (0..len)
        .map(|i| {
            let p = &plaintexts[i / n];
            let residues: Vec<u64> = (0..params.set().moduli.len())
                .map(|l| p.limb(l)[i % n])
                .collect();
            let x = params.crt().reconstruct_centered(&residues);
            // round(x/Δ), half away from zero, with truncating big-integer division.
            let offset: BigInt = if x.is_negative() {
                -delta.clone()
            } else {
                delta.clone()
            };
            let twice: BigInt = &x * BigInt::from(2) + offset;
            let m: BigInt = twice / (&delta * BigInt::from(2));
            let prod: BigInt = &m * &delta;
            let diff: BigInt = &x - prod;
            let noise = diff.abs();
            if noise > max_noise {
                max_noise = noise;
            }
            m.to_f64().unwrap() / (codec.fractional_bits() as f64).exp2()
        })
        .collect();
    (values, max_noise)
}

#[test]
fn default_set_sum_matches_plaintext_and_reference_decoder() {
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    let (n, len, bound) = (10, 2144, 1000.0);
    let mut ch = channel(&params, n, bound, 42);
    let vectors = random_vectors(n, len, bound, 7);
    let t = ch
        .run_round(
            RoundId(1),
            members(n).into_iter().zip(vectors.clone()).collect(),
        )
        .unwrap();
    let expect = plain_sum(&vectors);
    let max_err = t
        .sum
        .iter()
        .zip(&expect)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        max_err <= t.codec.error_bound() + 1e-12,
        "error {max_err} > bound {}",
        t.codec.error_bound()
    );
    assert!(max_err <= 1e-9, "error {max_err}");
    // The big-integer decoder agrees exactly and the noise respects the codec's bound.
    let plaintexts = combine(ch.members(), &t.aggregate, &t.shares).unwrap();
    let (reference, noise) = reference_decode(&params, &t.codec, &plaintexts, len);
    assert_eq!(reference, t.sum);
    assert!(noise < BigInt::from(fedhe_crypto::codec::noise_bound(&params, n)));
    assert!(
        noise > BigInt::from(1u128 << 60),
        "flooding must dominate the noise"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn sum_of_members_is_within_error_bound(n in 1usize..8, len in 1usize..2500, bound_exp in -3i32..6, seed in any::<u64>()) {
        let params = toy();
        let bound = 10f64.powi(bound_exp);
        let mut ch = channel(&params, n, bound, seed as u128);
        let vectors = random_vectors(n, len, bound, seed as u128 + 1);
        let sum = ch.sum(RoundId(0), members(n).into_iter().zip(vectors.clone()).collect()).unwrap();
        let codec = ch.codec();
        let expect = plain_sum(&vectors);
        prop_assert_eq!(sum.len(), len);
        for (a, b) in sum.iter().zip(&expect) {
            // n·2^−(f+1) plus the f64 rounding of the reference sum itself.
            prop_assert!((a - b).abs() <= codec.error_bound() + 1e-12 * bound * n as f64);
        }
    }
}

#[test]
fn missing_share_output_is_far_from_the_sum() {
    let params = toy();
    let n = 10;
    let mut ch = channel(&params, n, 1000.0, 3);
    let vectors = random_vectors(n, 1000, 1000.0, 4);
    let t = ch
        .run_round(
            RoundId(1),
            members(n).into_iter().zip(vectors.clone()).collect(),
        )
        .unwrap();
    let partial: Vec<&DecryptionShare> = t.shares.iter().skip(1).collect();
    let plaintexts = add_shares_to_aggregate(&t.aggregate, &partial).unwrap();
    // The checked decoder refuses the result…
    assert!(matches!(
        t.codec.decode(&plaintexts, 1000),
        Err(CodecError::DecodedOutOfRange { .. })
    ));
    // …and the values it would have produced are noise, far from the sum.
    let median = t.median_deviation_without(t.shares[0].member()).unwrap();
    assert!(median > 1e5, "median deviation {median}");
    // And combine refuses outright.
    assert!(matches!(
        combine(ch.members(), &t.aggregate, &t.shares[1..]),
        Err(ChannelError::MissingShare(_))
    ));
}

#[test]
fn protocol_checks_members_rounds_and_encodings() {
    let params = toy();
    let mut ch = channel(&params, 3, 1.0, 5);
    let contributions = |ms: Vec<MemberId>| {
        ms.into_iter()
            .map(|m| (m, vec![0.25; 4]))
            .collect::<Vec<_>>()
    };
    assert!(ch.sum(RoundId(1), contributions(members(3))).is_ok());
    assert!(matches!(
        ch.sum(RoundId(1), contributions(members(3))),
        Err(ChannelError::AlreadyDecrypted { round: 1, .. })
    ));
    assert!(matches!(
        ch.sum(RoundId(2), contributions(members(2))),
        Err(ChannelError::TooFewContributors {
            got: 2,
            required: 3,
            ..
        })
    ));
    let mut stranger = members(2);
    stranger.push(MemberId::new("stranger").unwrap());
    assert!(matches!(
        ch.sum(RoundId(3), contributions(stranger)),
        Err(ChannelError::UnknownMember(_))
    ));
    let mut twice = members(3);
    twice[2] = twice[0].clone();
    assert!(matches!(
        ch.sum(RoundId(4), contributions(twice)),
        Err(ChannelError::DuplicateMember(_))
    ));
    let err = ch
        .sum(
            RoundId(5),
            vec![
                (members(3)[0].clone(), vec![2.0]),
                (members(3)[1].clone(), vec![0.0]),
                (members(3)[2].clone(), vec![0.0]),
            ],
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("exceeds the declared bound"),
        "{err}"
    );
    // With a lower quorum, a subset may contribute.
    let mut ch = channel(&params, 3, 1.0, 6).with_min_contributors(2);
    let sum = ch.sum(RoundId(1), contributions(members(2))).unwrap();
    assert!(sum.iter().all(|&s| (s - 0.5).abs() < 1e-9));
}

#[test]
fn codec_refuses_overflow_nan_and_out_of_bound_values() {
    let params = toy();
    let codec = FixedPointCodec::new(&params, 10, 1000.0).unwrap();
    assert!(matches!(
        codec.encode(&[1.0, f64::NAN]),
        Err(CodecError::NotFinite { index: 1, .. })
    ));
    assert!(matches!(
        codec.encode(&[f64::INFINITY]),
        Err(CodecError::NotFinite { index: 0, .. })
    ));
    let err = codec.encode(&[0.0, 0.0, -1000.5]).unwrap_err();
    assert!(matches!(err, CodecError::OutOfBound { index: 2, .. }));
    assert!(err.to_string().contains("-1000.5"), "{err}");
    assert!(codec.encode(&[1000.0, -1000.0]).is_ok());
    // Explicit fractional bits that could reach the plaintext range are refused.
    let f = codec.fractional_bits();
    let err = FixedPointCodec::with_fractional_bits(&params, 10, 1000.0, f + 1).unwrap_err();
    assert!(matches!(err, CodecError::Overflow { .. }), "{err}");
    assert!(err.to_string().contains("toy-n1024"));
    assert!(FixedPointCodec::with_fractional_bits(&params, 10, 1000.0, f).is_ok());
    // A bound so large that no fractional bit fits.
    assert!(matches!(
        FixedPointCodec::new(&params, 10, 1e30),
        Err(CodecError::Overflow { .. })
    ));
    assert!(matches!(
        FixedPointCodec::new(&params, 10, f64::NAN),
        Err(CodecError::InvalidBound(_))
    ));
    assert!(matches!(
        FixedPointCodec::new(&params, 0, 1.0),
        Err(CodecError::NoMembers)
    ));
    // The guard is real: the largest valid sum is far below t/2.
    let t = codec.plaintext_modulus_value() as f64;
    let max_sum = 10.0 * (1000.0 * (f as f64).exp2() + 0.5);
    assert!(max_sum * 2f64.powi(codec::GUARD_BITS as i32 + 1) < t);
    assert!(
        max_sum * 2f64.powi(codec::GUARD_BITS as i32 + 3) > t,
        "f is the largest that fits"
    );
}

#[test]
fn long_vectors_span_several_ciphertexts() {
    let params = toy();
    let mut ch = channel(&params, 2, 5.0, 8);
    let vectors = random_vectors(2, 2 * 1024 + 17, 5.0, 9);
    let t = ch
        .run_round(
            RoundId(1),
            members(2).into_iter().zip(vectors.clone()).collect(),
        )
        .unwrap();
    assert_eq!(t.aggregate.ciphertexts().len(), 3);
    let expect = plain_sum(&vectors);
    assert!(t
        .sum
        .iter()
        .zip(&expect)
        .all(|(a, b)| (a - b).abs() <= t.codec.error_bound()));
}

/// The lengths the server checks a `Content-Length` against, before it
/// reads a body, are the lengths of real encodings.
#[test]
fn wire_lengths_are_known_before_encoding() {
    let params = toy();
    for (n, len) in [(2usize, 3usize), (3, 1024), (2, 2 * 1024 + 17)] {
        let mut ch = channel(&params, n, 4.0, 20 + len as u128);
        let ms = members(n);
        let vectors = random_vectors(n, len, 4.0, 30);
        let t = ch
            .run_round(RoundId(1), ms.iter().cloned().zip(vectors).collect())
            .unwrap();
        assert_eq!(
            t.aggregate.to_bytes(&params).len(),
            wire::encrypted_vector_len(&params, &t.codec, len),
            "vector of {len} values"
        );
        for share in &t.shares {
            assert_eq!(
                share.to_bytes(&params).len(),
                wire::decryption_share_len(&params, &t.codec, share.member(), len),
                "share of {} for {len} values",
                share.member()
            );
        }
        for pk in ch.public_key_shares() {
            assert_eq!(
                pk.to_bytes(&params).len(),
                wire::public_key_share_len(&params, pk.member())
            );
        }
    }
}

fn sample_objects(params: &Arc<Params>) -> Vec<Vec<u8>> {
    let mut ch = channel(params, 2, 1.0, 10);
    let t = ch
        .run_round(
            RoundId(1),
            members(2).into_iter().map(|m| (m, vec![0.5; 3])).collect(),
        )
        .unwrap();
    let sk = SecretKeyShare::generate(
        params,
        MemberId::new("k").unwrap(),
        &mut Csprng::from_u128_seed(1),
    );
    vec![
        ch.public_key_shares()[0].to_bytes(params),
        ch.public_key().to_bytes(params),
        t.aggregate.to_bytes(params),
        t.shares[0].to_bytes(params),
        sk.to_key_bytes(params).to_vec(),
    ]
}

#[test]
fn wire_objects_round_trip_and_inspect() {
    let params = toy();
    let mut ch = channel(&params, 2, 1.0, 11);
    let t = ch
        .run_round(
            RoundId(1),
            members(2).into_iter().map(|m| (m, vec![0.5; 3])).collect(),
        )
        .unwrap();
    let pks = &ch.public_key_shares()[0];
    assert_eq!(
        &PublicKeyShare::from_bytes(&params, &pks.to_bytes(&params)).unwrap(),
        pks
    );
    let pk = CollectivePublicKey::from_bytes(&params, &ch.public_key().to_bytes(&params)).unwrap();
    assert_eq!(pk.b_ntt(), ch.public_key().b_ntt());
    assert_eq!(pk.crs().a_ntt(), ch.public_key().crs().a_ntt());
    assert_eq!(
        EncryptedVector::from_bytes(&params, &t.aggregate.to_bytes(&params)).unwrap(),
        t.aggregate
    );
    assert_eq!(
        DecryptionShare::from_bytes(&params, &t.shares[0].to_bytes(&params)).unwrap(),
        t.shares[0]
    );
    // A decoded aggregate and shares still decrypt to the sum.
    let agg = EncryptedVector::from_bytes(&params, &t.aggregate.to_bytes(&params)).unwrap();
    let shares: Vec<_> = t
        .shares
        .iter()
        .map(|s| DecryptionShare::from_bytes(&params, &s.to_bytes(&params)).unwrap())
        .collect();
    let pts = combine(ch.members(), &agg, &shares).unwrap();
    assert_eq!(t.codec.decode(&pts, 3).unwrap(), t.sum);
    // The channel's byte accounting is the length of the real wire objects.
    let m0 = t.shares[0].member();
    let own = &t.contributions.iter().find(|(m, _)| m == m0).unwrap().1;
    assert_eq!(
        ch.bytes_per_round(m0, 3),
        (own.to_bytes(&params).len() + t.shares[0].to_bytes(&params).len()) as u64
    );
    // Kind and parameter-set confusion is refused.
    assert!(matches!(
        DecryptionShare::from_bytes(&params, &t.aggregate.to_bytes(&params)),
        Err(ChannelError::Wire(WireError::UnexpectedKind { .. }))
    ));
    let default = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    assert!(matches!(
        EncryptedVector::from_bytes(&default, &t.aggregate.to_bytes(&params)),
        Err(ChannelError::Wire(WireError::ParameterSetMismatch { .. }))
    ));
    for bytes in sample_objects(&params) {
        let d = wire::inspect(&bytes).unwrap();
        assert_eq!(d.params, "toy-n1024");
        assert_eq!(d.bytes, bytes.len());
    }
}

#[test]
fn decoders_fail_cleanly_on_truncated_and_flipped_objects() {
    let params = toy();
    for bytes in sample_objects(&params) {
        for cut in [
            0,
            1,
            4,
            19,
            20,
            21,
            bytes.len() / 2,
            bytes.len() - 33,
            bytes.len() - 1,
        ] {
            assert!(wire::inspect(&bytes[..cut]).is_err(), "truncated at {cut}");
        }
        let mut rng = Csprng::from_u128_seed(bytes.len() as u128);
        for _ in 0..64 {
            let mut corrupt = bytes.clone();
            let i = rng.uniform_below(corrupt.len() as u64) as usize;
            corrupt[i] ^= 1 << (rng.next_u64() % 8);
            assert!(wire::inspect(&corrupt).is_err(), "flip at {i}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(wire::inspect(&longer).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn decoders_never_panic_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512), header in any::<bool>()) {
        let mut input = bytes;
        if header && input.len() >= 20 {
            // Valid magic and version so that decoding gets past the first checks.
            input[..4].copy_from_slice(b"FDHE");
            input[4..6].copy_from_slice(&1u16.to_le_bytes());
        }
        prop_assert!(wire::inspect(&input).is_err());
        let params = toy();
        prop_assert!(EncryptedVector::from_bytes(&params, &input).is_err());
        prop_assert!(SecretKeyShare::from_key_bytes(&params, &input).is_err());
    }
}

#[test]
fn secret_key_types_print_nothing_secret() {
    let params = toy();
    let sk = SecretKeyShare::generate(
        &params,
        MemberId::new("alice").unwrap(),
        &mut Csprng::from_u128_seed(1),
    );
    let debug = format!("{sk:?}");
    assert!(debug.contains("alice"));
    let key_bytes = sk.to_key_bytes(&params);
    // No residue of the secret (as decimal or hex) appears in the Debug output.
    let first = u64::from_le_bytes(key_bytes[20 + 2 + 5..20 + 2 + 5 + 8].try_into().unwrap());
    assert!(
        !debug.contains(&first.to_string()) && !debug.contains(&format!("{first:x}")),
        "{debug}"
    );
    assert!(debug.len() < 80, "{debug}");
    let ch = channel(&params, 2, 1.0, 1);
    assert!(!format!("{ch:?}").contains(&first.to_string()));
    // The key file round-trips.
    let back = SecretKeyShare::from_key_bytes(&params, &key_bytes).unwrap();
    assert_eq!(back.to_key_bytes(&params).as_slice(), key_bytes.as_slice());
}

#[test]
fn toy_parameters_are_refused_by_default() {
    let err = ParameterSet::by_name("toy-n1024")
        .unwrap()
        .validate(InsecurePolicy::default())
        .unwrap_err();
    assert!(matches!(err, ChannelError::InsecureParameters { .. }));
}
