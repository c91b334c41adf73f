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
            Kind::ShamirCommitment | Kind::SealedShamirShare | Kind::ThresholdDecryptionShare => {
                continue
            }
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
