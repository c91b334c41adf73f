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

/// Issue 17: 200 members at bound 1024 on the default parameter set leave
/// fewer than [`TWO_LIMB_SPLIT_BITS`] fractional bits. The two-limb codec
/// then either keeps the precision it states ([`FixedPointCodec::error_bound`],
/// checked against an exact integer sum) or, asked for a split it cannot
/// hold, refuses with [`CodecError::TwoLimbPrecision`]: no silent loss.
#[test]
fn two_hundred_members_at_bound_1024_keep_the_stated_precision_or_refuse() {
    let n = 200;
    let bound = 1024.0;
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    let one = FixedPointCodec::new(&params, n, bound).unwrap();
    let f = one.fractional_bits();
    assert!(
        f < TWO_LIMB_SPLIT_BITS,
        "f = {f}: the case this test is about"
    );

    // The split the default asks for is refused, by name, with the numbers.
    let err = FixedPointCodec::with_split_bits(&params, n, bound, TWO_LIMB_SPLIT_BITS).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::TwoLimbPrecision { members: 200, fractional_bits, split_bits: 24, .. }
                if fractional_bits == f
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains(&format!("leave {f} fractional bits")),
        "{err}"
    );
    // As are a split of 0 bits and a bound below 1 (the rest would not fit).
    assert!(FixedPointCodec::with_split_bits(&params, n, bound, 0).is_err());
    assert!(matches!(
        FixedPointCodec::with_split_bits(&params, n, 0.5, 1),
        Err(CodecError::TwoLimbPrecision { .. })
    ));

    // The channel's two-limb codec splits at f and says so.
    let mut two_limb = HeSum::new(
        params.clone(),
        &CeremonyId::new("two-limb-200").unwrap(),
        members(n),
        bound,
        Csprng::from_u128_seed(17),
    )
    .unwrap()
    .with_precision(Precision::TwoLimb)
    .unwrap();
    assert_eq!(two_limb.codec().limbs(), Limbs::Two { split_bits: f });
    let promised = two_limb.codec().error_bound();
    assert!(promised < one.error_bound() * (-(f as f64)).exp2() * 1.000_001);

    // Values on the grid 2^−40 (exact in f64 below 2^12), so the exact sum is
    // an integer count of 2^−40: an independent reference.
    const GRID: i32 = 40;
    let len = 16;
    let mut rng = Csprng::from_u128_seed(5);
    let units: Vec<Vec<i64>> = (0..n)
        .map(|_| {
            (0..len)
                .map(|k| {
                    let span = [1000.0, 1.0, 1e-6, 0.3][k % 4] * 2f64.powi(GRID);
                    let u = rng.next_u64() as f64 / u64::MAX as f64 * 2.0 - 1.0;
                    (u * span) as i64
                })
                .collect()
        })
        .collect();
    let contributions: Vec<(MemberId, Vec<f64>)> = members(n)
        .into_iter()
        .zip(&units)
        .map(|(m, u)| (m, u.iter().map(|&x| x as f64 * 2f64.powi(-GRID)).collect()))
        .collect();
    let got = two_limb.sum(RoundId(1), contributions.clone()).unwrap();
    for (k, g) in got.iter().enumerate() {
        let exact: i128 = units.iter().map(|u| u[k] as i128).sum();
        let exact = exact as f64 * 2f64.powi(-GRID);
        // The stated fixed-point error, plus one f64 rounding each of the
        // join and of the reference.
        let allowed = promised + 2.0 * exact.abs() * f64::EPSILON;
        assert!(
            (g - exact).abs() <= allowed,
            "value {k}: error {:e} above the stated {promised:e} (f = {f})",
            (g - exact).abs()
        );
    }

    // One limb on the same values loses what two limbs keep: its error is
    // well above the two-limb bound somewhere.
    let mut one_limb = channel(&params, n, bound, 18);
    let coarse = one_limb.sum(RoundId(1), contributions).unwrap();
    let worst = coarse
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let exact: i128 = units.iter().map(|u| u[k] as i128).sum();
            (c - exact as f64 * 2f64.powi(-GRID)).abs()
        })
        .fold(0.0, f64::max);
    assert!(
        worst > 1000.0 * promised,
        "one limb {worst:e}, two limbs {promised:e}"
    );
}

/// The two-limb encoding on the wire: recorded in the encoding word (bits
/// 8-15), kept through a round trip, and any word a codec cannot honour is
/// refused by the decoder, naming the field. A one-limb vector's word is
/// its fractional bits alone, as before two limbs existed.
#[test]
fn two_limbs_are_recorded_in_the_wire_encoding_and_checked() {
    let params = toy();
    let key = channel(&params, 3, 8.0, 3).public_key().clone();
    let two = FixedPointCodec::with_split_bits(&params, 3, 8.0, 7).unwrap();
    let one = FixedPointCodec::new(&params, 3, 8.0).unwrap();
    let mut rng = Csprng::from_u128_seed(4);
    let values = [1.25, -7.999, 1.0 / 3.0];
    let v = EncryptedVector::encrypt(&params, &key, &two, &values, &mut rng).unwrap();
    let bytes = v.to_bytes(&params);
    let back = EncryptedVector::from_bytes(&params, &bytes).unwrap();
    assert_eq!(back.encoding().limbs, Limbs::Two { split_bits: 7 });
    assert_eq!(back, v);
    let word = |b: &[u8]| u32::from_le_bytes(b[32..36].try_into().unwrap());
    assert_eq!(word(&bytes), two.fractional_bits() | 7 << 8);
    let plain = EncryptedVector::encrypt(&params, &key, &one, &values, &mut rng).unwrap();
    assert_eq!(word(&plain.to_bytes(&params)), one.fractional_bits());
    // A two-limb vector never adds to a one-limb one.
    assert!(EncryptedVector::sum([&v, &plain]).is_err());

    let with_word = |w: u32| {
        let mut b = bytes.clone();
        b[32..36].copy_from_slice(&w.to_le_bytes());
        let body = b.len() - 32;
        let checksum = blake3::hash(&b[..body]);
        b[body..].copy_from_slice(checksum.as_bytes());
        EncryptedVector::from_bytes(&params, &b)
    };
    let f = two.fractional_bits();
    assert!(
        with_word(f | 7 << 8).is_ok(),
        "the checksum is recomputed right"
    );
    for bad in [f | (f + 1) << 8, f | 1 << 16, f | 0x8000_0000] {
        let err = with_word(bad).unwrap_err().to_string();
        assert!(err.contains("encoding"), "{bad:#x}: {err}");
    }
}

/// Splitting is exact and joining after a sum equals summing: the parts of
/// every value are a grid value and a rest of at most ½ (at most 1 where a
/// bound off the grid pulls the coarse part back), and they add back to the
/// value bit for bit.
#[test]
fn two_limb_split_is_exact_and_joins_after_a_sum() {
    use fedhe_crypto::codec::{join_two_limbs, split_two_limbs};
    let wide = [1.0 / 3.0, -7.123456789012345e-3, 900.5, 0.0, 2.9999999];
    // A bound off the 2^−3 grid: 2.9999999 rounds to 3, past it.
    let narrow = [2.9999999, -2.9999999, 1.0 / 3.0, 0.0, -1.0625];
    let other = [2.0 / 3.0, 1e-9, -0.5, 2.0, -1.0];
    for (s, bound, values) in [
        (24, 1024.0, wide),
        (12, 1024.0, wide),
        (3, 2.99999995, narrow),
    ] {
        let split = split_two_limbs(&values, s, bound);
        assert_eq!(split.len(), 10);
        if s == 3 {
            assert_eq!(split[0], 2.875, "pulled back inside the bound");
        }
        let scale = (s as f64).exp2();
        for (i, v) in values.iter().enumerate() {
            let (h, r) = (split[i], split[5 + i]);
            assert_eq!((h * scale).fract(), 0.0, "coarse part on the grid");
            assert!(h.abs() <= bound);
            assert!(r.abs() <= 1.0);
            if bound == 1024.0 {
                assert!(r.abs() <= 0.5);
            }
            assert_eq!(h + r / scale, *v, "exact split of {v}");
        }
        let sum: Vec<f64> = split
            .iter()
            .zip(split_two_limbs(&other, s, bound))
            .map(|(a, b)| a + b)
            .collect();
        for (i, j) in join_two_limbs(&sum, s).iter().enumerate() {
            assert!((j - (values[i] + other[i])).abs() < 1e-13);
        }
    }
}
