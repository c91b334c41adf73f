//! t-of-n ceremonies over a real `fedhe serve` process (issue 15): members
//! deal Shamir shares of their key shares through the server, sealed to
//! their recipients; any T of the stored threshold shares decrypt under the
//! unchanged collective key, a dealer whose share does not open is named and
//! the ceremony fails, and bad settings are refused naming what is wrong.

#[path = "server_process/mod.rs"]
mod server_process;
#[path = "toy_federation/mod.rs"]
#[allow(dead_code)]
mod toy_federation;

use fedhe_api::CeremonyPhase;
use fedhe_api::Identity;
use fedhe_client::keys::{self, KeyDir};
use fedhe_client::member::{join_ceremony, verify_ceremony};
use fedhe_client::{Client, ClientError};
use fedhe_crypto::threshold::combine_threshold;
use fedhe_crypto::{
    AccessStructure, CeremonyId, CommonRandomPoly, EncryptedVector, FixedPointCodec, MemberId,
    PublicKeyShare, SecretKeyShare, ThresholdDealing, ThresholdDecryptionShare,
    ThresholdSecretShare, WireObject,
};
use fedhe_ring::Csprng;
use std::sync::Arc;
use std::time::Duration;
use toy_federation::{toy_ceremony_with_threshold, toy_federation_with_threshold, Terms};

const TOKEN: &str = "threshold-admin-token";
const NAMES: [&str; 5] = ["m1", "m2", "m3", "m4", "m5"];

fn problem_status(e: &ClientError) -> Option<u16> {
    match e {
        ClientError::Problem { problem, .. } => Some(problem.status),
        _ => None,
    }
}

/// Five members, T = 3: every member joins (commit, reveal, deal, open,
/// confirm) through the server; the ceremony completes with T in its
/// transcript; any three stored threshold shares decrypt an encryption under
/// the collective key to its plaintext (the reference), for two different
/// sets; a second join resumes without dealing again.
#[test]
fn five_members_deal_through_the_server_and_any_three_decrypt() {
    let work = tempfile::tempdir().unwrap();
    let server = server_process::serve_sqlite(work.path(), TOKEN);
    let clients = toy_ceremony_with_threshold(&server.url, TOKEN, &NAMES, Some(3));
    let dirs: Vec<KeyDir> = NAMES
        .iter()
        .map(|m| KeyDir::open_or_create(work.path().join(m)).unwrap())
        .collect();
    std::thread::scope(|s| {
        for (client, dir) in clients.iter().zip(&dirs) {
            s.spawn(move || {
                join_ceremony(client, dir, "c1", true, false, Duration::from_secs(120)).unwrap()
            });
        }
    });
    let status = clients[0].ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Complete, "{status:?}");
    assert_eq!(status.threshold, Some(3));
    assert_eq!(status.dealt, NAMES);
    assert_eq!(status.confirmed, NAMES);
    let own = dirs[0].read(keys::PUBLIC_SHARE_FILE).unwrap();
    let verified = verify_ceremony(&clients[0], "c1", Some(("m1", &own)), true).unwrap();
    assert_eq!(verified.transcript.threshold, Some(3));
    let params = verified.params.clone();
    let shares: Vec<ThresholdSecretShare> = dirs
        .iter()
        .map(|d| {
            ThresholdSecretShare::from_key_bytes(
                &params,
                &d.read(keys::THRESHOLD_SHARE_FILE).unwrap(),
            )
            .unwrap()
        })
        .collect();
    let access = shares[0].access().clone();
    assert_eq!(access.threshold(), 3);
    let values: Vec<f64> = (0..30).map(|i| (i as f64 - 15.0) / 7.0).collect();
    let codec = FixedPointCodec::new(&params, 5, 10.0).unwrap();
    let mut rng = Csprng::from_u128_seed(5);
    let ct = EncryptedVector::encrypt(&params, &verified.key, &codec, &values, &mut rng).unwrap();
    for set in [[0usize, 1, 2], [1, 3, 4]] {
        let active: Vec<MemberId> = set
            .iter()
            .map(|&j| MemberId::new(NAMES[j]).unwrap())
            .collect();
        let tshares: Vec<ThresholdDecryptionShare> = set
            .iter()
            .map(|&j| {
                ThresholdDecryptionShare::generate(&params, &shares[j], &active, &ct, &mut rng)
                    .unwrap()
            })
            .collect();
        let got = codec
            .decode(
                &combine_threshold(&access, &ct, &tshares).unwrap(),
                values.len(),
            )
            .unwrap();
        for (g, v) in got.iter().zip(&values) {
            assert!((g - v).abs() < 1e-9, "set {set:?}: {g} vs {v}");
        }
    }
    // Joining again resumes: the stored share is kept, nothing is re-dealt.
    let before = dirs[2].read(keys::THRESHOLD_SHARE_FILE).unwrap();
    join_ceremony(
        &clients[2],
        &dirs[2],
        "c1",
        true,
        false,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(*dirs[2].read(keys::THRESHOLD_SHARE_FILE).unwrap(), *before);
}

/// A dealer (m5) whose share to m2 was changed after sealing: m2 refuses it
/// naming m5, the ceremony fails with that reason, no member that met the
/// bad share stores a threshold share. Thresholds outside (n/2, n] and a
/// dealing of the wrong length are refused naming what is wrong, and change
/// nothing.
#[test]
fn a_tampered_dealing_names_its_dealer_and_bad_settings_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let server = server_process::serve_sqlite(work.path(), TOKEN);
    let admin = Client::new(
        &server.url,
        fedhe_client::Auth::Admin(TOKEN.to_string().into()),
    )
    .unwrap();
    let identities: Vec<Arc<Identity>> = NAMES
        .iter()
        .map(|_| Arc::new(Identity::generate()))
        .collect();
    let mut spec = fedhe_api::CeremonySpec {
        id: "c1".into(),
        parameter_set: "toy-n1024".into(),
        members: NAMES
            .iter()
            .zip(&identities)
            .map(|(m, id)| fedhe_api::MemberSpec {
                id: m.to_string(),
                identity_key: id.public_key_hex(),
            })
            .collect(),
        deadline_secs: 600,
        allow_insecure: true,
        admin_key: toy_federation::admin_identity().public_key_hex(),
        threshold: Some(2),
    };
    // T ≤ n/2 and T > n: refused, naming the threshold; nothing is created.
    let e = admin.create_ceremony(&spec).unwrap_err();
    assert_eq!(problem_status(&e), Some(400), "{e}");
    assert!(e.to_string().contains("threshold 2 is out of range"), "{e}");
    spec.threshold = Some(6);
    let e = admin.create_ceremony(&spec).unwrap_err();
    assert!(e.to_string().contains("threshold 6 is out of range"), "{e}");
    assert!(
        admin.ceremony("c1").is_err(),
        "a refused spec created a ceremony"
    );
    spec.threshold = Some(3);
    admin.create_ceremony(&spec).unwrap();
    let clients: Vec<Client> = NAMES
        .iter()
        .zip(&identities)
        .map(|(m, identity)| {
            Client::new(
                &server.url,
                fedhe_client::Auth::Member {
                    id: m.to_string(),
                    identity: identity.clone(),
                },
            )
            .unwrap()
        })
        .collect();
    let dirs: Vec<KeyDir> = NAMES
        .iter()
        .map(|m| KeyDir::open_or_create(work.path().join(m)).unwrap())
        .collect();
    // The cheater m5 does its part by hand: commit, reveal, then a dealing
    // whose share to m2 is changed after sealing.
    let cheater = &clients[4];
    let params = fedhe_client::member::params_by_name("toy-n1024", true).unwrap();
    let ids: Vec<MemberId> = NAMES.iter().map(|m| MemberId::new(*m).unwrap()).collect();
    let cid = CeremonyId::new("c1").unwrap();
    let crs = CommonRandomPoly::for_ceremony(&params, &cid, &ids).unwrap();
    let mut rng = Csprng::from_u128_seed(77);
    let sk = SecretKeyShare::generate(&params, ids[4].clone(), &mut rng);
    let pk = PublicKeyShare::generate(&params, &sk, &crs, &mut rng)
        .unwrap()
        .to_bytes(&params);
    std::thread::scope(|s| {
        let honest: Vec<_> = clients[..4]
            .iter()
            .zip(&dirs[..4])
            .map(|(client, dir)| {
                s.spawn(move || {
                    join_ceremony(client, dir, "c1", true, false, Duration::from_secs(60))
                })
            })
            .collect();
        cheater.commit("c1", &pk).unwrap();
        // Reveal once everyone committed.
        while cheater.ceremony("c1").unwrap().phase == CeremonyPhase::Committing {
            std::thread::sleep(Duration::from_millis(50));
        }
        cheater.reveal("c1", &pk).unwrap();
        while cheater.ceremony("c1").unwrap().phase != CeremonyPhase::Dealing {
            std::thread::sleep(Duration::from_millis(50));
        }
        // An upload of the wrong length: refused from its headers.
        let e = cheater.put_dealing("c1", b"not a dealing").unwrap_err();
        assert_eq!(problem_status(&e), Some(422), "{e}");
        let keys: Vec<_> = ids
            .iter()
            .cloned()
            .zip(identities.iter().map(|i| i.public_key()))
            .collect();
        let access = AccessStructure::new(&ids, 3).unwrap();
        let mut dealing = ThresholdDealing::deal(
            &params,
            &cid,
            &access,
            &sk,
            identities[4].signing_key(),
            &keys,
            &mut rng,
        )
        .unwrap();
        dealing.sealed[1].ciphertext[9] ^= 0x40;
        cheater
            .put_dealing("c1", &dealing.to_bytes(&params))
            .unwrap();
        let outcomes: Vec<Result<(), ClientError>> =
            honest.into_iter().map(|h| h.join().unwrap()).collect();
        for (m, o) in NAMES.iter().zip(&outcomes) {
            let e = o.as_ref().expect_err(m).to_string();
            assert!(e.contains("m5"), "{m}: {e}");
        }
        assert!(
            outcomes[1]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("the Shamir share dealt by m5 was refused"),
            "{:?}",
            outcomes[1]
        );
    });
    let status = admin.ceremony("c1").unwrap();
    assert_eq!(status.phase, CeremonyPhase::Failed);
    let reason = status.reason.unwrap();
    assert!(
        reason.contains("m2 refused the Shamir share dealt by m5"),
        "{reason}"
    );
    assert!(!dirs[1].exists(keys::THRESHOLD_SHARE_FILE));
}

/// Rounds of a 3-of-5 study (quorum 3): in round 1 all five contribute, in
/// round 2 two members are gone (they neither contribute nor decrypt). Both
/// rounds finish; each result is the plaintext sum of that round's present
/// contributions (the reference) to 1e-9, decrypted by the first three
/// claimants alone and checked by every present member against the signed
/// threshold shares; a share made for another decrypting set is refused.
#[test]
fn rounds_finish_with_two_of_five_members_gone() {
    let work = tempfile::tempdir().unwrap();
    let server = server_process::serve_sqlite(work.path(), TOKEN);
    let (mut seats, _) = toy_federation_with_threshold(
        &server.url,
        TOKEN,
        work.path(),
        &NAMES,
        &Terms {
            min_contributors: 3,
            round_secs: 2,
            bound: 10.0,
        },
        Some(3),
    );
    let vector = |i: usize, round: u64| -> Vec<f64> {
        (0..12)
            .map(|k| ((i * 7 + k * 3) as f64 * 0.37 + round as f64).sin() * 3.0)
            .collect()
    };
    for (round, present) in [(1u64, 5usize), (2, 3)] {
        let results: Vec<Vec<f64>> = std::thread::scope(|s| {
            let handles: Vec<_> = seats[..present]
                .iter_mut()
                .enumerate()
                .map(|(i, (m, _))| {
                    let v = vector(i, round);
                    s.spawn(move || m.run_round("s1", round, Some(&v), 10.0).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let expected: Vec<f64> = (0..12)
            .map(|k| (0..present).map(|i| vector(i, round)[k]).sum())
            .collect();
        for got in &results {
            for (g, e) in got.iter().zip(&expected) {
                assert!((g - e).abs() < 1e-9, "round {round}: {g} vs {e}");
            }
        }
        let st = seats[0].1.round("s1", round, Duration::ZERO, None).unwrap();
        assert_eq!(st.received as usize, present, "{st:?}");
        assert_eq!(st.decrypting_set.len(), 3, "{st:?}");
        assert_eq!(
            st.shares.len(),
            3,
            "only the decrypting set decrypts: {st:?}"
        );
        assert!(st
            .decrypting_set
            .iter()
            .all(|m| NAMES[..present].contains(&m.as_str())));
    }
    // A member of round 2's decrypting set uploads a share made for another
    // set (itself and two absent members): refused, naming both sets.
    let st = seats[0].1.round("s1", 2, Duration::ZERO, None).unwrap();
    let who = NAMES
        .iter()
        .position(|m| *m == st.decrypting_set[0])
        .unwrap();
    let client = &seats[who].1;
    let params = fedhe_client::member::params_by_name("toy-n1024", true).unwrap();
    let share = ThresholdSecretShare::from_key_bytes(
        &params,
        &KeyDir::open(work.path().join(NAMES[who]))
            .unwrap()
            .read(keys::THRESHOLD_SHARE_FILE)
            .unwrap(),
    )
    .unwrap();
    let aggregate =
        EncryptedVector::from_bytes(&params, &client.aggregate("s1", 2, Duration::ZERO).unwrap())
            .unwrap();
    let mut other: Vec<MemberId> = vec![
        MemberId::new(NAMES[who]).unwrap(),
        MemberId::new("m4").unwrap(),
        MemberId::new("m5").unwrap(),
    ];
    other.sort();
    let bytes = ThresholdDecryptionShare::generate(
        &params,
        &share,
        &other,
        &aggregate,
        &mut Csprng::from_u128_seed(3),
    )
    .unwrap()
    .to_bytes(&params);
    let e = client.put_decryption_share("s1", 2, &bytes).unwrap_err();
    assert_eq!(problem_status(&e), Some(422), "{e}");
    assert!(
        e.to_string().contains("was made for the decrypting set"),
        "{e}"
    );
}
