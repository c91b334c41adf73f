//! The fuzz targets' committed seeds and corpus (`fuzz/seeds/`, `fuzz/corpus/`)
//! replayed through the same checks the fuzz targets run (`fuzz/src/lib.rs`,
//! included here), without libFuzzer: every input that ever crashed a decoder
//! and was fixed stays a regression test of `cargo test`.
//!
//! `FEDHE_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_corpus` rewrites the seeds
//! from `fedhe_fuzz::seeds`.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fedhe_fuzz;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `dir`, sorted (none if it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

#[test]
fn every_fuzz_target_has_a_check_and_seeds() {
    let on_disk: BTreeSet<String> = files(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    let checked: BTreeSet<String> = fedhe_fuzz::TARGETS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(on_disk, checked, "fuzz_targets/ and TARGETS differ");
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for name in &checked {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{name} is not a [[bin]] of fuzz/Cargo.toml"
        );
        assert!(
            !files(&fuzz_dir().join("seeds").join(name)).is_empty(),
            "no seeds for {name}"
        );
    }
}

#[test]
fn the_committed_seeds_are_what_the_generator_makes() {
    let write = std::env::var_os("FEDHE_WRITE_FUZZ_SEEDS").is_some();
    let seeds = fedhe_fuzz::seeds();
    assert!(seeds.len() > 50);
    for (target, name, bytes) in &seeds {
        let path = fuzz_dir().join("seeds").join(target).join(name);
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (FEDHE_WRITE_FUZZ_SEEDS=1 writes it)",
                path.display()
            )
        });
        if !name.starts_with("random-") {
            assert_eq!(
                &committed,
                bytes,
                "{} differs from the generator",
                path.display()
            );
        }
    }
}

#[test]
fn the_valid_wire_seeds_reach_the_end_of_the_payload_decoders() {
    use fedhe_crypto::wire::{inspect, Kind, WireObject};
    use fedhe_crypto::{
        CollectivePublicKey, DecryptionShare, EncryptedVector, PublicKeyShare, SecretKeyShare,
    };
    let mut valid = 0;
    let mut refused = 0;
    for (target, name, bytes) in fedhe_fuzz::seeds() {
        let kind = match target {
            "wire_public_key_share" => Kind::PublicKeyShare,
            "wire_collective_public_key" => Kind::CollectivePublicKey,
            "wire_encrypted_vector" => Kind::EncryptedVector,
            "wire_decryption_share" => Kind::DecryptionShare,
            "wire_secret_key_share" => Kind::SecretKeyShare,
            _ => continue,
        };
        let Some((params, envelope)) = fedhe_fuzz::payload_envelope(kind, &bytes) else {
            continue;
        };
        let decoded = match kind {
            Kind::PublicKeyShare => PublicKeyShare::from_bytes(params, &envelope).is_ok(),
            Kind::CollectivePublicKey => CollectivePublicKey::from_bytes(params, &envelope).is_ok(),
            Kind::EncryptedVector => EncryptedVector::from_bytes(params, &envelope).is_ok(),
            Kind::DecryptionShare => DecryptionShare::from_bytes(params, &envelope).is_ok(),
            Kind::SecretKeyShare => SecretKeyShare::from_key_bytes(params, &envelope).is_ok(),
            // No fuzz seeds of the t-of-n kinds yet; their round trips and
            // refusals are in fedhe-crypto's threshold tests.
            Kind::ShamirCommitment
            | Kind::SealedShamirShare
            | Kind::ThresholdDecryptionShare
            | Kind::ThresholdSecretShare
            | Kind::ThresholdDealing => continue,
            // Carries' round trips and refusals are in fedhe-crypto's
            // c1_commitment tests.
            Kind::C1Carries => continue,
        };
        assert_eq!(decoded, name.starts_with("valid"), "{target}/{name}");
        assert_eq!(inspect(&envelope).is_ok(), decoded, "{target}/{name}");
        if decoded {
            valid += 1;
        } else {
            refused += 1;
        }
    }
    // Every kind at both parameter sets, and a refused residue.
    assert!(valid >= 12, "{valid}");
    assert!(refused >= 2, "{refused}");
}

/// The inspect target's seeds of the t-of-n kinds: `valid-*` ones decode
/// fully (so the fuzzer starts inside those decoders) and `bad-*` ones are
/// refused, as the names say; every t-of-n kind has a valid seed.
#[test]
fn the_threshold_kinds_have_seeds_that_reach_their_decoders() {
    use fedhe_crypto::wire::{inspect, Kind};
    let mut kinds = BTreeSet::new();
    let mut refused = 0;
    for (target, name, bytes) in fedhe_fuzz::seeds() {
        let (true, true) = (
            target == "wire_inspect",
            name.starts_with("valid-") || name.starts_with("bad-"),
        ) else {
            continue;
        };
        let kind = Kind::from_code(u16::from(bytes[1] % fedhe_fuzz::KIND_CODES)).unwrap();
        let mut data = vec![bytes[0]];
        data.extend_from_slice(&bytes[2..]);
        let (_, envelope) = fedhe_fuzz::payload_envelope(kind, &data).unwrap();
        let decoded = inspect(&envelope);
        assert_eq!(
            decoded.is_ok(),
            name.starts_with("valid-"),
            "{name}: {decoded:?}"
        );
        if decoded.is_ok() {
            kinds.insert(kind.name());
        } else {
            refused += 1;
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "sealed-shamir-share",
            "shamir-commitment",
            "threshold-dealing",
            "threshold-decryption-share",
            "threshold-secret-share"
        ]
    );
    assert_eq!(refused, 2);
}

#[test]
fn the_committed_corpus_replays_through_every_check() {
    let mut total = 0;
    for (target, check) in fedhe_fuzz::TARGETS {
        let mut inputs = files(&fuzz_dir().join("seeds").join(target));
        inputs.extend(files(&fuzz_dir().join("corpus").join(target)));
        assert!(!inputs.is_empty(), "{target}: nothing to replay");
        for path in &inputs {
            let bytes = std::fs::read(path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&bytes));
            assert!(outcome.is_ok(), "{target}: {} fails", path.display());
            total += 1;
        }
    }
    assert!(total >= fedhe_fuzz::TARGETS.len());
}

/// One step of a deterministic mutator (xorshift64*), so a failure names an
/// input that can be made again.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// One to four of libFuzzer's basic mutations: flip a bit, set a byte
    /// to an interesting value, erase, insert or duplicate a run, truncate,
    /// or splice another input in.
    fn mutate(&mut self, input: &[u8], other: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..=self.below(4) {
            let len = out.len();
            match self.below(7) {
                0 if len > 0 => {
                    let i = self.below(len);
                    out[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    out[i] = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe][self.below(6)];
                }
                2 if len > 0 => {
                    let at = self.below(len);
                    let n = 1 + self.below((len - at).min(64));
                    out.drain(at..at + n);
                }
                3 => {
                    let at = self.below(len + 1);
                    let n = 1 + self.below(16);
                    let bytes: Vec<u8> = (0..n).map(|_| self.next() as u8).collect();
                    out.splice(at..at, bytes);
                }
                4 if len > 0 => {
                    let at = self.below(len);
                    let n = 1 + self.below((len - at).min(256));
                    let run = out[at..at + n].to_vec();
                    let to = self.below(len + 1);
                    out.splice(to..to, run);
                }
                5 => out.truncate(self.below(len + 1)),
                _ if !other.is_empty() => {
                    let cut = self.below(len + 1);
                    let from = self.below(other.len());
                    out.truncate(cut);
                    out.extend_from_slice(&other[from..]);
                }
                _ => {}
            }
        }
        out
    }
}

/// The fixed-count fuzz run of CI: every target's check runs on
/// `FEDHE_FUZZ_RUNS` (default 1000) deterministic mutations of its seeds and
/// corpus, without coverage guidance (the libFuzzer runs of `.ci/fuzz` need
/// an instrumented build that does not fit CI's time). A failing input is
/// written to `target/fuzz-failures/` and named in the failure.
#[test]
fn a_fixed_count_of_mutated_inputs_passes_every_check() {
    let runs: usize = std::env::var("FEDHE_FUZZ_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut total = 0;
    for (t, (target, check)) in fedhe_fuzz::TARGETS.iter().enumerate() {
        let mut inputs: Vec<Vec<u8>> = files(&fuzz_dir().join("seeds").join(target))
            .iter()
            .chain(&files(&fuzz_dir().join("corpus").join(target)))
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        inputs.push(Vec::new());
        let mut rng = Mutator(0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1));
        for run in 0..runs {
            let base = &inputs[rng.below(inputs.len())];
            let other = &inputs[rng.below(inputs.len())];
            let input = rng.mutate(base, other);
            let outcome = std::panic::catch_unwind(|| check(&input));
            if outcome.is_err() {
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
                std::fs::create_dir_all(&dir).unwrap();
                let path = dir.join(format!("{target}-{run}"));
                std::fs::write(&path, &input).unwrap();
                panic!(
                    "{target}: mutation {run} fails; the input is {}",
                    path.display()
                );
            }
            total += 1;
        }
    }
    assert_eq!(total, runs * fedhe_fuzz::TARGETS.len());
}
