//! The cost of the c1 check (issue 16; designed on 2026-11-27, built on
//! 2026-11-28 as `fedhe_crypto::c1_commitment`): a
//! Pedersen vector commitment over ristretto255 to one ciphertext's second
//! polynomial `c1` (N = 8,192 coefficients of the default set, as integers
//! below q ≈ 2^124), and to an aggregate's `C1 + q·κ` with the carries of
//! 1,000 summands (below 2^134): the CRT form of the 2026-11-27 design. The
//! product commits per prime (16,384 points, 62-bit scalars; 23.4 ms in the
//! design's probe), so one member checks an aggregate against every
//! contribution at about this cost, whatever n
//! (`docs/results/scale-2026-11-25b/README.md`).
//!
//! `cargo bench --bench commitment`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

const N: usize = 8192;

/// `count` generators with no known discrete-log relation: each hashed to
/// the group from a public seed (BLAKE3's XOF, 64 bytes a point).
fn generators(count: usize) -> Vec<RistrettoPoint> {
    let mut xof = blake3::Hasher::new_derive_key("fedhe bench pedersen generators").finalize_xof();
    (0..count)
        .map(|_| {
            let mut wide = [0u8; 64];
            xof.fill(&mut wide);
            RistrettoPoint::from_uniform_bytes(&wide)
        })
        .collect()
}

/// `count` uniform integers below `2^bits` (bits ≤ 136) as scalars.
fn scalars(rng: &mut ChaCha8Rng, count: usize, bits: u32) -> Vec<Scalar> {
    (0..count)
        .map(|_| {
            let mut bytes = [0u8; 32];
            rng.fill(&mut bytes[..17]);
            let full = (bits / 8) as usize;
            let rest = bits % 8;
            if full < 17 {
                bytes[full] &= (1u8 << rest) - 1;
                bytes[full + 1..].fill(0);
            }
            Scalar::from_bytes_mod_order(bytes)
        })
        .collect()
}

fn pedersen_c1(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let gens = generators(N);
    let mut group = c.benchmark_group("pedersen_c1_n8192");
    group.sample_size(10);
    // 124 bits: one contribution's c1; 134 bits: C1 + q·κ at 1,000 members.
    for bits in [124u32, 134] {
        let s = scalars(&mut rng, N, bits);
        group.bench_with_input(BenchmarkId::from_parameter(bits), &bits, |b, _| {
            b.iter(|| {
                black_box(RistrettoPoint::vartime_multiscalar_mul(
                    s.iter(),
                    gens.iter(),
                ))
            })
        });
    }
    group.finish();
    // The product's shape (`C1Commitment`: one point per prime and
    // coefficient, 16,384 points, scalars below 2^62), on curve25519-dalek
    // 5.0 (AVX-512 IFMA where the CPU has it, `.cargo/config.toml`) beside
    // 4.1.3 (AVX2), which members ran before, in the same run.
    let ifma =
        std::is_x86_feature_detected!("avx512ifma") && std::is_x86_feature_detected!("avx512vl");
    eprintln!("pedersen_c1_16384x62: this CPU has AVX-512 IFMA: {ifma}");
    let gens = generators(2 * N);
    let s = scalars(&mut rng, 2 * N, 62);
    let gens4: Vec<curve25519_dalek_4::RistrettoPoint> = gens
        .iter()
        .map(|p| {
            curve25519_dalek_4::ristretto::CompressedRistretto(p.compress().to_bytes())
                .decompress()
                .expect("a point of one version decodes in the other")
        })
        .collect();
    let s4: Vec<curve25519_dalek_4::Scalar> = s
        .iter()
        .map(|x| curve25519_dalek_4::Scalar::from_bytes_mod_order(x.to_bytes()))
        .collect();
    // Both versions compute the same point (the benchmark is of one thing).
    assert_eq!(
        RistrettoPoint::vartime_multiscalar_mul(s.iter(), gens.iter())
            .compress()
            .to_bytes(),
        <curve25519_dalek_4::RistrettoPoint as curve25519_dalek_4::traits::VartimeMultiscalarMul>::vartime_multiscalar_mul(s4.iter(), gens4.iter())
            .compress()
            .to_bytes()
    );
    let mut group = c.benchmark_group("pedersen_c1_16384x62");
    group.sample_size(20);
    group.bench_function("dalek_5", |b| {
        b.iter(|| {
            black_box(RistrettoPoint::vartime_multiscalar_mul(
                s.iter(),
                gens.iter(),
            ))
        })
    });
    group.bench_function("dalek_4", |b| {
        b.iter(|| {
            black_box(<curve25519_dalek_4::RistrettoPoint as curve25519_dalek_4::traits::VartimeMultiscalarMul>::vartime_multiscalar_mul(
                s4.iter(),
                gens4.iter(),
            ))
        })
    });
    group.finish();
    let mut group = c.benchmark_group("pedersen_generators");
    group.sample_size(10);
    group.bench_function("1024", |b| b.iter(|| black_box(generators(1024))));
    group.finish();
}

/// A member's check after decrypting at 1,000 members (issue 16):
/// every share maker's signature, 1,000 ed25519 signatures of
/// distinct keys and ~200-byte statements, in one batch
/// (`fedhe_api::signing::SignatureBatch`, ed25519-dalek 3.0 on
/// curve25519-dalek 5) beside ed25519-dalek 2.2 (curve25519-dalek 4, what
/// members ran before) in the same run, on the same keys and messages.
fn signature_batch(c: &mut Criterion) {
    use fedhe_api::signing::{Identity, SignatureBatch};
    const COUNT: usize = 1000;
    let ids: Vec<Identity> = (0..COUNT)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            Identity::from_seed(&seed)
        })
        .collect();
    let messages: Vec<Vec<u8>> = (0..COUNT)
        .map(|i| format!("fedhe share digest statement {i:04} {}", "x".repeat(160)).into_bytes())
        .collect();
    let signatures: Vec<String> = ids
        .iter()
        .zip(&messages)
        .map(|(id, m)| id.sign_hex(m))
        .collect();
    let batch = || {
        let mut b = SignatureBatch::new();
        for ((id, m), sig) in ids.iter().zip(&messages).zip(&signatures) {
            b.push(id.public_key(), m.clone(), sig, "bench", ())
                .unwrap();
        }
        b
    };
    let keys2: Vec<ed25519_dalek_2::VerifyingKey> = ids
        .iter()
        .map(|id| ed25519_dalek_2::VerifyingKey::from_bytes(id.public_key().as_bytes()).unwrap())
        .collect();
    let unhex = |s: &str| -> [u8; 64] {
        std::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
    };
    let sigs2: Vec<ed25519_dalek_2::Signature> = signatures
        .iter()
        .map(|s| ed25519_dalek_2::Signature::from_bytes(&unhex(s)))
        .collect();
    let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    // Both accept the batch, and both refuse it with one message changed.
    assert_eq!(batch().verify(), Ok(()));
    assert!(ed25519_dalek_2::verify_batch(&refs, &sigs2, &keys2).is_ok());
    let mut bad = refs.clone();
    bad[500] = b"another statement";
    assert!(ed25519_dalek_2::verify_batch(&bad, &sigs2, &keys2).is_err());
    let mut group = c.benchmark_group("signature_batch_1000");
    group.sample_size(20);
    group.bench_function("ed25519_dalek_3", |b| {
        b.iter_batched(
            batch,
            |b| black_box(b.verify()),
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("ed25519_dalek_2", |b| {
        b.iter(|| black_box(ed25519_dalek_2::verify_batch(&refs, &sigs2, &keys2)))
    });
    group.finish();
}

/// criterion's generated group function carries no docs of its own.
#[allow(missing_docs)]
mod harness {
    use super::*;
    criterion_group!(benches, pedersen_c1, signature_batch);
}
criterion_main!(harness::benches);
