//! The security test suite (SECURITY.md): each test is an attack on a real
//! `fedhe serve` process on loopback (an SQLite file), written as the
//! attacker would run it, and asserts that the attack fails.
//!
//! The attacker is a ceremony member with its own valid identity (DESIGN.md
//! §6: members may attack one another's privacy), talking to the server with
//! the ordinary client.

use fedhe_api::{RoundState, SignedStudySpec, StudyStatus};
use fedhe_client::{Client, ClientError};
use fedhe_crypto::{EncryptedVector, WireObject};
use std::collections::BTreeSet;
use std::time::Duration;

mod server_process;
mod toy_federation;
use toy_federation::{admin_identity, open_session, toy_ceremony, toy_federation, Terms};

const ADMIN: &str = "security-admin";

fn serve(root: &std::path::Path) -> server_process::ServerProcess {
    server_process::serve_sqlite(root, ADMIN)
}

/// The HTTP status of a refused request.
fn status(e: ClientError) -> u16 {
    refusal(e).0
}

/// The HTTP status and detail of a refused request.
fn refusal(e: ClientError) -> (u16, String) {
    match e {
        ClientError::Problem { problem, .. } => (problem.status, problem.detail),
        other => panic!("not a refusal by the server: {other}"),
    }
}

/// The wire bytes of a valid public-key share of alpha (the first of
/// `members`) in ceremony `ceremony` on the toy set, from a secret drawn
/// with `seed`.
fn real_public_key_share(ceremony: &str, members: &[&str], seed: u128) -> Vec<u8> {
    use fedhe_crypto::{
        CeremonyId, CommonRandomPoly, InsecurePolicy, MemberId, ParameterSet, PublicKeyShare,
        SecretKeyShare,
    };
    let params = ParameterSet::TOY_N1024
        .validate(InsecurePolicy::Allow)
        .unwrap();
    let ids: Vec<MemberId> = members.iter().map(|m| MemberId::new(*m).unwrap()).collect();
    let crs =
        CommonRandomPoly::for_ceremony(&params, &CeremonyId::new(ceremony).unwrap(), &ids).unwrap();
    let mut rng = fedhe_ring::Csprng::from_u128_seed(seed);
    let secret = SecretKeyShare::generate(&params, ids[0].clone(), &mut rng);
    PublicKeyShare::generate(&params, &secret, &crs, &mut rng)
        .unwrap()
        .to_bytes(&params)
}

/// Waits until round 1 of `s1` leaves `state`.
fn wait_past(client: &Client, state: RoundState) -> RoundState {
    let mut since = None;
    for _ in 0..60 {
        let st = client
            .round("s1", 1, Duration::from_secs(2), since)
            .unwrap();
        if st.state != state {
            return st.state;
        }
        since = Some(st.version);
    }
    panic!("round 1 stayed {state:?}");
}

/// The copy attack of issue 13: gamma, a member, would upload last
/// `c_alpha − c_beta` (or any function of alpha's ciphertext), so that the
/// round's sum reveals alpha's exact vector. Commit-then-reveal stops it:
/// alpha's contribution is revealed only once every contribution of the
/// round is fixed by a signed commitment, and nobody can read it before the
/// aggregate exists.
#[test]
fn copy_attack_a_member_cannot_make_its_contribution_depend_on_anothers() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 2,
            round_secs: 2,
            bound: 10.0,
        },
    );
    let (mut gamma, gamma_client) = seats.pop().unwrap();
    let (mut beta, _) = seats.pop().unwrap();
    let (mut alpha, _) = seats.pop().unwrap();
    // alpha and beta commit; gamma waits to see alpha's ciphertext first.
    let c_alpha = alpha.commit("s1", 1, &[3.0, -1.0], 10.0).unwrap();
    beta.commit("s1", 1, &[0.5, 0.25], 10.0).unwrap();
    // 1. Nothing of alpha's can be read while the round is open.
    let e = gamma_client.contribution("s1", 1, "alpha").unwrap_err();
    assert_eq!(status(e), 409, "alpha's contribution is not readable yet");
    // 2. alpha cannot even be made to reveal before the list is frozen: the
    //    server refuses a reveal against no frozen list.
    let e = gamma_client
        .put_contribution("s1", 1, &c_alpha, &"00".repeat(32))
        .unwrap_err();
    assert_eq!(status(e), 409);
    // At the deadline the list freezes without gamma; alpha and beta reveal.
    assert_eq!(
        wait_past(&gamma_client, RoundState::Committing),
        RoundState::Collecting
    );
    alpha.reveal("s1", 1).unwrap();
    // alpha's ciphertext is on the server now, and still unreadable.
    let e = gamma_client.contribution("s1", 1, "alpha").unwrap_err();
    assert_eq!(
        status(e),
        409,
        "alpha's revealed contribution is not readable yet"
    );
    // 3. Having (say, from a colluding server) alpha's ciphertext now, while
    //    the round still collects, gamma tries to join the round with one
    //    derived from it: too late.
    let mut derived = EncryptedVector::from_bytes(gamma.params(), &c_alpha).unwrap();
    derived
        .add_assign(&EncryptedVector::from_bytes(gamma.params(), &c_alpha).unwrap())
        .unwrap();
    let derived = derived.to_bytes(gamma.params());
    let e = gamma_client
        .put_round_commitment(
            "s1",
            1,
            &derived,
            2,
            &gamma_spec_hash(&gamma_client),
            &c1_hash(gamma.params(), &derived),
        )
        .unwrap_err();
    assert_eq!(status(e), 409, "no commitment once the list is frozen");
    let frozen = gamma_client.round_commitments("s1", 1).unwrap();
    let e = gamma_client
        .put_contribution("s1", 1, &derived, frozen.list_hash.as_deref().unwrap())
        .unwrap_err();
    assert_eq!(status(e), 409, "no reveal without a frozen commitment");
    assert_eq!(
        gamma_client
            .round("s1", 1, Duration::ZERO, None)
            .unwrap()
            .state,
        RoundState::Collecting,
        "refused on its merits, not because the round had moved on"
    );
    beta.reveal("s1", 1).unwrap();
    // The round sums alpha's and beta's vectors only, and every member
    // decrypts it (gamma too, contributing nothing).
    let sums: Vec<Vec<f64>> = std::thread::scope(|s| {
        let hs: Vec<_> = [&mut alpha, &mut beta, &mut gamma]
            .into_iter()
            .map(|m| {
                s.spawn(move || {
                    m.decrypt("s1", 1).unwrap();
                    m.result("s1", 1).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for sum in sums {
        assert!(
            (sum[0] - 3.5).abs() < 1e-6 && (sum[1] + 0.75).abs() < 1e-6,
            "{sum:?}"
        );
    }
}

/// The spec hash a member signs into its commitments (from the served study).
fn gamma_spec_hash(client: &Client) -> String {
    client.study("s1").unwrap().spec_hash
}

/// A server that shows one member another study spec than the one the member
/// recorded (or a spec the administrator never signed) gets no contribution
/// from it; and a commitment made for another spec is refused.
#[test]
fn split_study_spec_a_member_refuses_a_spec_other_than_the_one_it_recorded() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, study) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta"],
        &Terms {
            min_contributors: 2,
            round_secs: 60,
            bound: 10.0,
        },
    );
    let (alpha, alpha_client) = &mut seats[0];
    // The server changes the spec (a lower quorum) but cannot sign it.
    let mut lowered: StudyStatus = study.clone();
    lowered.spec.min_contributors = 1;
    lowered.spec_hash = lowered.spec.hash_hex();
    let e = alpha.accept_study(&lowered).unwrap_err().to_string();
    assert!(
        e.contains("not signed by the ceremony's administrator"),
        "{e}"
    );
    // Even a spec the administrator did sign is refused once another one is
    // recorded for the study (the server shows members different specs).
    let resigned = SignedStudySpec::sign(lowered.spec.clone(), &admin_identity());
    lowered.admin_signature = resigned.signature;
    let e = alpha.accept_study(&lowered).unwrap_err().to_string();
    assert!(e.contains("is not the one I recorded"), "{e}");
    // A commitment signed for another spec's hash is refused by the server,
    // and would be by every member checking the list.
    let bytes = alpha
        .encrypt_contribution(&[1.0], 10.0, fedhe_crypto::Precision::OneLimb)
        .unwrap();
    let e = alpha_client
        .put_round_commitment(
            "s1",
            1,
            &bytes,
            1,
            &lowered.spec_hash,
            &c1_hash(alpha.params(), &bytes),
        )
        .unwrap_err();
    assert_eq!(status(e), 422);
}

/// One member cannot lock the others out of a round by committing first to a
/// contribution of another shape: the round takes the value count most
/// members committed to, and the others still contribute.
#[test]
fn shape_lockout_a_first_commitment_of_another_shape_does_not_lock_others_out() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 2,
            round_secs: 60,
            bound: 10.0,
        },
    );
    let (mut gamma, gamma_client) = seats.pop().unwrap();
    let (mut beta, _) = seats.pop().unwrap();
    let (mut alpha, _) = seats.pop().unwrap();
    // gamma commits first, to five values; alpha and beta to two.
    gamma.commit("s1", 1, &[9.0; 5], 10.0).unwrap();
    alpha.commit("s1", 1, &[1.0, 2.0], 10.0).unwrap();
    beta.commit("s1", 1, &[3.0, 4.0], 10.0).unwrap();
    wait_past(&gamma_client, RoundState::Committing);
    let frozen = gamma_client.round_commitments("s1", 1).unwrap();
    assert_eq!(frozen.values, Some(2));
    let listed: Vec<&str> = frozen
        .commitments
        .iter()
        .map(|c| c.member.as_str())
        .collect();
    assert_eq!(listed, ["alpha", "beta"]);
    // gamma's reveal is refused (its own check sees it is not listed).
    let e = gamma.reveal("s1", 1).unwrap_err().to_string();
    assert!(e.contains("my own commitment (gamma) is not listed"), "{e}");
    // The others reveal, and the round's aggregate is their sum.
    std::thread::scope(|s| {
        for m in [&mut alpha, &mut beta] {
            s.spawn(move || m.reveal("s1", 1).unwrap());
        }
    });
    let listed = gamma_client.contributions("s1", 1).unwrap();
    assert_eq!(listed.contributions.len(), 2);
    assert!(listed.aggregate_hash.is_some());
    // n-of-n decryption needs gamma's share too (any member can stall a
    // round by withholding it: SECURITY.md, "Not defended"). Here gamma,
    // its own contribution refused, takes part as a member that contributed
    // nothing.
    std::fs::remove_file(root.path().join("gamma/state/s1.1.contribution")).unwrap();
    let sums: Vec<Vec<f64>> = std::thread::scope(|s| {
        let hs: Vec<_> = [&mut alpha, &mut beta, &mut gamma]
            .into_iter()
            .map(|m| {
                s.spawn(move || {
                    m.decrypt("s1", 1).unwrap();
                    m.result("s1", 1).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for sum in sums {
        assert!((sum[0] - 4.0).abs() < 1e-6 && (sum[1] - 6.0).abs() < 1e-6);
    }
}

/// A contribution encoded with another bound (so other fractional bits) than
/// the study's signed one is refused, whoever sends it first.
#[test]
fn shape_lockout_an_encoding_other_than_the_studys_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta"],
        &Terms {
            min_contributors: 2,
            round_secs: 60,
            bound: 10.0,
        },
    );
    let (mut beta, _) = seats.pop().unwrap();
    let (alpha, alpha_client) = &mut seats[0];
    // The session refuses to encode with another bound ...
    let e = alpha.commit("s1", 1, &[1.0], 20.0).unwrap_err().to_string();
    assert!(e.contains("is not study s1's bound 10"), "{e}");
    // ... and a hand-made one, committed and frozen, is refused at reveal.
    let other = alpha
        .encrypt_contribution(&[1.0], 20.0, fedhe_crypto::Precision::OneLimb)
        .unwrap();
    let spec_hash = alpha_client.study("s1").unwrap().spec_hash;
    alpha_client.open_round("s1", 1).unwrap();
    alpha_client
        .put_round_commitment(
            "s1",
            1,
            &other,
            1,
            &spec_hash,
            &c1_hash(alpha.params(), &other),
        )
        .unwrap();
    beta.commit("s1", 1, &[2.0], 10.0).unwrap();
    wait_past(alpha_client, RoundState::Committing);
    let list = alpha_client.round_commitments("s1", 1).unwrap();
    let e = alpha_client
        .put_contribution("s1", 1, &other, list.list_hash.as_deref().unwrap())
        .unwrap_err();
    assert_eq!(status(e), 422, "another encoding than the study's");
}

/// A rogue public-key share: a member that committed to one share and then
/// reveals another (chosen after seeing the others', to bias the collective
/// key) is refused. Both shares are well-formed shares of the ceremony, so
/// only the commitment tells them apart.
#[test]
fn rogue_public_key_share_a_share_other_than_the_committed_one_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let admin = Client::new(
        &server.url,
        fedhe_client::Auth::Admin(ADMIN.to_string().into()),
    )
    .unwrap();
    let names = ["alpha", "beta"];
    let clients = toy_ceremony(&server.url, ADMIN, &names);
    let share = |seed: u128| real_public_key_share("c1", &names, seed);
    clients[0].commit("c1", &share(1)).unwrap();
    clients[1].commit("c1", &share(2)).unwrap();
    let e = clients[0].reveal("c1", &share(3)).unwrap_err();
    let (status, detail) = refusal(e);
    assert_eq!(status, 422, "{detail}");
    assert!(detail.contains("is not the committed"), "{detail}");
    let st = admin.ceremony("c1").unwrap();
    assert!(st.revealed.is_empty(), "{st:?}");
}

/// A server that shows a member a second, different aggregate for a round
/// the member already decrypted gets no second decryption share.
#[test]
fn second_decryption_a_member_decrypts_at_most_one_aggregate_per_round() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta"],
        &Terms {
            min_contributors: 2,
            round_secs: 60,
            bound: 10.0,
        },
    );
    std::thread::scope(|s| {
        for (m, _) in seats.iter_mut() {
            s.spawn(move || {
                m.contribute("s1", 1, &[1.0], 10.0).unwrap();
                m.decrypt("s1", 1).unwrap();
            });
        }
    });
    // alpha's record says it decrypted another aggregate of round 1 (what it
    // holds after a server showed it one): the served aggregate now differs.
    let record = root.path().join("alpha/state/s1.1.share");
    let mut bytes = std::fs::read(&record).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&record, bytes).unwrap();
    let e = seats[0].0.decrypt("s1", 1).unwrap_err().to_string();
    assert!(
        e.contains("already produced a decryption share for this round, of another aggregate"),
        "{e}"
    );
}

/// Issue 45, item 5: a failed round is retried under the next number with
/// the same (noised) values. A member that decrypted the failed attempt
/// makes no share of a retry that sums another set of contributors: the two
/// decryptions would give away the difference (here gamma's values, with
/// only gamma's own noise share). n-of-n, alpha, beta and gamma: all three
/// contribute to and decrypt round 1 (taken as the failed attempt); round 2,
/// its retry, sums only alpha and beta. Alpha sits round 2 out (no share, no
/// share record; the round waits); told it is a first attempt, it decrypts.
#[test]
fn retry_differencing_a_member_decrypts_no_retry_over_another_set() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut seats, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 2,
            round_secs: 2,
            bound: 10.0,
        },
    );
    std::thread::scope(|s| {
        for (i, (m, _)) in seats.iter_mut().enumerate() {
            s.spawn(move || m.run_round("s1", 1, Some(&[i as f64]), 10.0).unwrap());
        }
    });
    std::thread::scope(|s| {
        for (i, (m, _)) in seats[..2].iter_mut().enumerate() {
            s.spawn(move || m.contribute("s1", 2, &[i as f64], 10.0).unwrap());
        }
    });
    let share = root.path().join("alpha/state/s1.2.share");
    seats[0].0.set_earlier_attempts(vec![1]);
    seats[0].0.decrypt("s1", 2).unwrap();
    assert!(!share.exists(), "alpha decrypted a retry over another set");
    for (m, _) in &mut seats[1..] {
        m.decrypt("s1", 2).unwrap();
    }
    let st = seats[0].1.round("s1", 2, Duration::ZERO, None).unwrap();
    assert_eq!(st.state, RoundState::Decrypting, "{st:?}");
    assert_eq!(st.shares.len(), 2, "{st:?}");
    seats[0].0.set_earlier_attempts(Vec::new());
    seats[0].0.decrypt("s1", 2).unwrap();
    assert!(share.exists());
    let sum = seats[0].0.result("s1", 2).unwrap();
    assert!((sum[0] - 1.0).abs() < 1e-9, "{sum:?}");
}

/// Issue 16: a member keeps the commitment list it checked before revealing
/// in memory and does not check it again before decrypting; a member that
/// restarts in between reads it back from its record and checks it again.
/// alpha's record is altered while it is down (one entry's value count, the
/// list's hash kept): the restarted alpha refuses to decrypt, and a restarted
/// beta, whose record is intact, decrypts.
#[test]
fn recorded_list_a_restarted_member_checks_its_record_again() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let terms = Terms {
        min_contributors: 2,
        round_secs: 60,
        bound: 10.0,
    };
    let (mut seats, study) =
        toy_federation(&server.url, ADMIN, root.path(), &["alpha", "beta"], &terms);
    std::thread::scope(|s| {
        for (m, _) in seats.iter_mut() {
            s.spawn(move || m.contribute("s1", 1, &[1.0], 10.0).unwrap());
        }
    });
    let record = root.path().join("alpha/state/s1.1.commitments");
    let mut list: fedhe_api::CommitmentList =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    list.commitments[1].values += 1;
    std::fs::write(&record, serde_json::to_vec(&list).unwrap()).unwrap();
    let reopen = |i: usize, name: &str| {
        let dir = fedhe_client::keys::KeyDir::open_or_create(root.path().join(name)).unwrap();
        open_session(&seats[i].1, &dir, &terms, &study)
    };
    let (mut alpha, mut beta) = (reopen(0, "alpha"), reopen(1, "beta"));
    let e = alpha.decrypt("s1", 1).unwrap_err().to_string();
    assert!(e.contains("is not the hash of its entries"), "{e}");
    beta.decrypt("s1", 1).unwrap();
}

/// alpha, beta and gamma in ceremony c1 and study s1 under `root`, every
/// one required to contribute.
fn alpha_beta_gamma_all_contributing(
    root: &std::path::Path,
    url: &str,
) -> Vec<(fedhe_client::MemberSession, Client)> {
    toy_federation(
        url,
        ADMIN,
        root,
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 3,
            round_secs: 60,
            bound: 10.0,
        },
    )
    .0
}

/// Issue 16: members fetch the contribution and decryption-share lists
/// without upload signatures and ask for those of the makers that sent no
/// signed digest. gamma sends neither digest until alpha and beta have
/// checked: they download its contribution and its share, and accept only
/// with its reveal and upload signatures, fetched by name (without them the
/// checks refuse: an empty signature does not verify).
#[test]
fn missing_digests_a_member_checks_the_makers_upload_signatures_fetched_by_name() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let mut seats = alpha_beta_gamma_all_contributing(root.path(), &server.url);
    std::thread::scope(|s| {
        for (i, (m, _)) in seats.iter_mut().enumerate() {
            s.spawn(move || m.contribute("s1", 1, &[i as f64 + 1.0], 10.0).unwrap());
        }
    });
    let (first, gamma) = seats.split_at_mut(2);
    let gamma = &mut gamma[0].0;
    std::thread::scope(|s| {
        for (m, _) in first.iter_mut() {
            m.digest_wait = Duration::from_millis(500);
            s.spawn(move || m.decrypt("s1", 1).unwrap());
        }
    });
    gamma.decrypt("s1", 1).unwrap();
    let results: Vec<Vec<f64>> = std::thread::scope(|s| {
        first
            .iter_mut()
            .map(|(m, _)| s.spawn(move || m.result("s1", 1).unwrap()))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    for values in results.into_iter().chain([gamma.result("s1", 1).unwrap()]) {
        assert_eq!(values.len(), 1);
        assert!((values[0] - 6.0).abs() < 1e-6, "{values:?}");
    }
}

/// A contributor that signs a c1 commitment its revealed bytes do not open
/// (gamma commits to the `c1` of another ciphertext, and signs that
/// commitment with its digest) makes the c1 check fail for every member.
/// Its bytes open the ciphertext hash it committed, so only its `c1`
/// betrays it: an honest member then downloads every contribution and
/// names it (SECURITY.md, the c1 check).
#[test]
fn false_c1_commitment_the_contributor_whose_bytes_do_not_open_it_is_named() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let mut seats = alpha_beta_gamma_all_contributing(root.path(), &server.url);
    // alpha and beta check a sample of one signature of three: the re-check
    // on bytes must check every digest's signature, not only the sample's.
    for (m, _) in &mut seats[..2] {
        m.signature_sampling = 1;
    }
    // gamma's commitment, recorded before it commits, is to another
    // ciphertext's c1: it commits to (and later signs) that one.
    let gamma = &mut seats[2].0;
    let other = gamma
        .encrypt_contribution(&[9.0], 10.0, Default::default())
        .unwrap();
    let other = EncryptedVector::from_bytes(gamma.params(), &other).unwrap();
    std::fs::write(
        root.path().join("gamma/state/s1.1.c1-commitment"),
        fedhe_crypto::C1Commitment::commit(gamma.params(), &other).to_bytes(),
    )
    .unwrap();
    let refusals: Vec<String> = std::thread::scope(|s| {
        seats
            .iter_mut()
            .enumerate()
            .map(|(i, (m, _))| {
                s.spawn(move || {
                    m.contribute("s1", 1, &[i as f64], 10.0).unwrap();
                    m.decrypt("s1", 1).unwrap_err().to_string()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    for honest in &refusals[..2] {
        assert!(
            honest.contains("gamma signed a c1 commitment that is not its contribution's"),
            "{honest}"
        );
    }
    // gamma itself trusts its own record: it finds every other contribution
    // honest and blames the aggregate.
    assert!(
        refusals[2].contains("every contribution's bytes open the c1 commitment"),
        "{}",
        refusals[2]
    );
}

/// A member that asked the server for its sample of a list's signatures
/// checks no other list of that kind for the round (the pin,
/// `MemberSession::pinned_checks`): had the server failed the request to
/// learn the sample, it could otherwise show a list forged outside it. Here
/// the pins name another list, as if the server had shown one before.
#[test]
fn pinned_sample_a_member_refuses_a_digest_list_other_than_the_one_it_sampled() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let mut seats = alpha_beta_gamma_all_contributing(root.path(), &server.url);
    let pin = |member: &str, file: &str| {
        std::fs::write(
            root.path().join(format!("{member}/state/{file}")),
            [7u8; 64],
        )
        .unwrap()
    };
    // beta pinned another digest list.
    std::thread::scope(|s| {
        for (i, (m, _)) in seats.iter_mut().enumerate() {
            s.spawn(move || m.contribute("s1", 1, &[i as f64], 10.0).unwrap());
        }
    });
    pin("beta", "s1.1.sample-digests");
    let errors: Vec<Option<String>> = std::thread::scope(|s| {
        seats
            .iter_mut()
            .map(|(m, _)| s.spawn(move || m.decrypt("s1", 1).err().map(|e| e.to_string())))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!((&errors[0], &errors[2]), (&None, &None));
    let beta = errors[1].as_deref().unwrap();
    assert!(
        beta.contains("another digests list than the one whose signatures I sampled"),
        "{beta}"
    );
}

/// As [`pinned_sample_a_member_refuses_a_digest_list_other_than_the_one_it_sampled`]
/// for the commitment list: alpha pinned another one and refuses to reveal.
#[test]
fn pinned_sample_a_member_refuses_a_commitment_list_other_than_the_one_it_sampled() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let mut seats = alpha_beta_gamma_all_contributing(root.path(), &server.url);
    std::fs::write(
        root.path().join("alpha/state/s1.1.sample-commitments"),
        [7u8; 64],
    )
    .unwrap();
    let alpha: Vec<Result<Vec<u8>, String>> = std::thread::scope(|s| {
        seats
            .iter_mut()
            .enumerate()
            .map(|(i, (m, _))| {
                s.spawn(move || {
                    m.contribute("s1", 1, &[i as f64], 10.0)
                        .map_err(|e| e.to_string())
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    let refused = alpha[0].as_ref().unwrap_err();
    assert!(
        refused.contains("another commitments list than the one whose signatures I sampled"),
        "{refused}"
    );
    assert!(alpha[1].is_ok() && alpha[2].is_ok());
}

/// Every file of `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The forms a logged f64 would take: Rust's `Display` and `Debug`, JSON's
/// (ryu), and four decimals as progress lines print them (only for values
/// whose four-decimal form is too long to occur by chance).
fn printed_forms(v: f64) -> Vec<String> {
    let mut forms = vec![
        v.to_string(),
        format!("{v:?}"),
        serde_json::to_string(&v).unwrap(),
    ];
    if v.abs() >= 10.0 {
        forms.push(format!("{v:.4}"));
    }
    forms
}

/// The demo's institutions.
const MEMBERS: [&str; 3] = ["member-01", "member-02", "member-03"];

/// Every printed form of every value (point coordinates and result) that
/// `member` evaluated, from its journal.
fn evaluations(root: &std::path::Path, member: &str) -> BTreeSet<String> {
    let journal = std::fs::read_to_string(
        root.join("keys")
            .join(member)
            .join("studies/demo-study/evaluations.jsonl"),
    )
    .unwrap();
    let mut forms = BTreeSet::new();
    for line in journal.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        for v in e["x"].as_array().unwrap().iter().chain([&e["y"]]) {
            let v = v.as_f64().unwrap();
            // A small whole number (a coordinate on the box's bound, ±100 on
            // F1, where LogEI often steps) prints as "100", which any log
            // holds as a count or a size: searching for it says nothing.
            if v.fract() == 0.0 && v.abs() <= 1000.0 {
                continue;
            }
            forms.extend(printed_forms(v));
        }
    }
    forms
}

/// Attack: read secrets from what a federation writes down. A whole
/// networked demo (server, ceremony, agents; key files sealed with a
/// passphrase; every process at `RUST_LOG=trace`) is run, and then every
/// log, the demo's own output and the server's database are searched for
/// each institution's secret-key share and identity seed (raw and hex), the
/// passphrase, and (outside the institution's own logs and the demo's own
/// console, which speaks for every institution) each institution's
/// evaluations: the private data its contributions are computed from.
#[test]
fn secrets_absent_from_logs_a_whole_demo_run_writes_no_key_plaintext_or_passphrase() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("demo");
    let passphrase = "security-test-passphrase-5b1d3c0e";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args([
            "demo",
            "--params",
            "toy-n1024",
            "--allow-insecure",
            "--members",
            "3",
            "--rounds",
            "2",
            "--dim",
            "2",
            "--workdir",
        ])
        .arg(&root)
        .env("FEDHE_PASSPHRASE", passphrase)
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    // What was written down: every log, the server's database, and the
    // demo's own output.
    let written: Vec<(String, Vec<u8>)> = files_under(&root)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".log") || name.starts_with("fedhe.db")
        })
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .chain([
            ("demo stdout".to_string(), out.stdout.clone()),
            ("demo stderr".to_string(), out.stderr.clone()),
        ])
        .collect();
    assert!(
        written.iter().any(|(n, _)| n.ends_with("server.log"))
            && written.iter().any(|(n, _)| n.contains("fedhe.db"))
            && written
                .iter()
                .filter(|(n, _)| n.ends_with(".agent.log"))
                .count()
                == 3,
        "{:?}",
        written.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    let holds = |bytes: &[u8], needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    // A number is held only where it stands as a number: not as the middle
    // of a longer one (a timestamp's `03:41:18.532597Z` is not the value
    // 18.5325, which a CI run once mistook it for).
    let holds_number = |bytes: &[u8], needle: &[u8]| {
        let digit = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_digit());
        (0..bytes.len().saturating_sub(needle.len() - 1)).any(|i| {
            &bytes[i..i + needle.len()] == needle
                && !digit(i.checked_sub(1).and_then(|j| bytes.get(j)))
                && !digit(bytes.get(i + needle.len()))
        })
    };
    let passphrase_obj = fedhe_client::keys::Passphrase::new(passphrase).unwrap();
    let mut checked = 0;
    for member in MEMBERS {
        let keys = fedhe_client::keys::KeyDir::open(root.join("keys").join(member))
            .unwrap()
            .with_passphrase(Some(passphrase_obj.clone()));
        // The key files are sealed: the secrets are read through the passphrase.
        assert!(keys
            .is_encrypted(fedhe_client::keys::SECRET_SHARE_FILE)
            .unwrap());
        let seed = keys.read(fedhe_client::keys::IDENTITY_FILE).unwrap();
        let share = keys.read(fedhe_client::keys::SECRET_SHARE_FILE).unwrap();
        // 512 bytes from the middle of the share's coefficients: 64 ternary
        // residues, too many to match by chance.
        let middle = &share[share.len() / 2..share.len() / 2 + 512];
        let secrets: Vec<(&str, Vec<u8>)> = vec![
            ("identity seed", seed.to_vec()),
            ("identity seed (hex)", hex::encode(&*seed).into_bytes()),
            ("secret-key share", middle.to_vec()),
            ("secret-key share (hex)", hex::encode(middle).into_bytes()),
            ("passphrase", passphrase.as_bytes().to_vec()),
        ];
        // A member's private values: what it evaluated that no other member
        // did (at a global step every member evaluates the same point).
        let others: BTreeSet<String> = MEMBERS
            .iter()
            .filter(|m| **m != member)
            .flat_map(|m| evaluations(&root, m))
            .collect();
        let private: Vec<String> = evaluations(&root, member)
            .into_iter()
            .filter(|v| !others.contains(v))
            .collect();
        assert!(private.len() >= 2 * 3, "{member}: {private:?}");
        for (name, bytes) in &written {
            for (what, secret) in &secrets {
                assert!(!holds(bytes, secret), "{name} holds {member}'s {what}");
                checked += 1;
            }
            // An institution's own logs and the demo's console may show its
            // own values; nobody else's may.
            if name.contains(member) || name.starts_with("demo ") {
                continue;
            }
            for form in &private {
                assert!(
                    !holds_number(bytes, form.as_bytes()),
                    "{name} holds {member}'s evaluation {form}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
    // The server's log is not empty at trace level: the search had text to
    // search.
    let server_log = &written
        .iter()
        .find(|(n, _)| n.ends_with("server.log"))
        .unwrap()
        .1;
    assert!(
        server_log.len() > 1000,
        "{}",
        String::from_utf8_lossy(server_log)
    );
}

/// The hash of the c1 commitment to a contribution's bytes, as a member
/// signs it with its round commitment.
fn c1_hash(params: &std::sync::Arc<fedhe_crypto::Params>, bytes: &[u8]) -> [u8; 32] {
    let v = EncryptedVector::from_bytes(params, bytes).unwrap();
    fedhe_crypto::C1Commitment::commit(params, &v).hash()
}

/// The offline phase (issue 16): a contribution's encryption
/// masks and c1 commitment are made before its values. Two ciphertexts of
/// one mask would give away the difference of their messages to anyone
/// (`c0 − c0' = Δ·(m − m')`), so a mask serves one commitment. alpha and
/// beta prepare their first contributions, gamma does not; `run_round`
/// prepares every member's next one while it waits for the result. Both
/// rounds decode the exact sums for every member; the c1 commitment each
/// member signed is that of the bytes it recorded and revealed (recomputed
/// from them), as is any c1 commitment it recorded; and no two
/// contributions of a member share a `c1`.
#[test]
fn prepared_contributions_commit_to_their_values_and_a_mask_serves_once() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let mut seats = alpha_beta_gamma_all_contributing(root.path(), &server.url);
    for (m, _) in &mut seats[..2] {
        assert!(m.prepare_contribution("s1", 1).unwrap() > 0.0);
    }
    let params = seats[0].0.params().clone();
    for round in 1..=2u64 {
        let sums: Vec<Vec<f64>> = std::thread::scope(|s| {
            seats
                .iter_mut()
                .enumerate()
                .map(|(i, (m, _))| {
                    s.spawn(move || {
                        m.run_round("s1", round, Some(&[i as f64 + round as f64]), 10.0)
                            .unwrap()
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect()
        });
        let expected = 3.0 + 3.0 * round as f64;
        for sum in &sums {
            assert!((sum[0] - expected).abs() < 1e-6, "round {round}: {sum:?}");
        }
    }
    let client = &seats[0].1;
    for member in ["alpha", "beta", "gamma"] {
        let state = root.path().join(member).join("state");
        let mut c1s = Vec::new();
        for round in 1..=2 {
            let bytes = std::fs::read(state.join(format!("s1.{round}.contribution"))).unwrap();
            let v = EncryptedVector::from_bytes(&params, &bytes).unwrap();
            let signed = client
                .round_commitments("s1", round)
                .unwrap()
                .commitments
                .into_iter()
                .find(|c| c.member == member)
                .unwrap();
            assert_eq!(signed.hash, blake3::hash(&bytes).to_hex().as_str());
            assert_eq!(
                signed.c1_commitment_hash,
                hex::encode(c1_hash(&params, &bytes)),
                "{member}, round {round}"
            );
            if let Ok(recorded) = std::fs::read(state.join(format!("s1.{round}.c1-commitment"))) {
                assert_eq!(
                    recorded,
                    fedhe_crypto::C1Commitment::commit(&params, &v).to_bytes(),
                    "{member}, round {round}"
                );
            }
            c1s.push(v.ciphertexts()[0].c1().clone());
        }
        assert_ne!(c1s[0], c1s[1], "{member} used one mask twice");
    }
}

/// Issue 45, finding 10: a server that serves study C's signed spec (here
/// `s1`, signed by the ceremony's administrator) when a member asks for
/// study D (`s2`). The member refuses it when it is fetched, naming both,
/// before the spec is used for anything (the agent's first request is this
/// fetch, so nothing is evaluated or journaled).
#[test]
fn swapped_spec_a_member_refuses_the_spec_of_another_study() {
    use std::io::{BufRead, BufReader, Write};
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (seats, study) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta"],
        &Terms {
            min_contributors: 2,
            round_secs: 60,
            bound: 10.0,
        },
    );
    let (_, alpha) = &seats[0];
    // The honest answer for s1 passes the check.
    assert_eq!(alpha.study("s1").unwrap().spec.id, "s1");
    // A server answering every request with s1's status.
    let body = serde_json::to_vec(&study).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    let (me, identity) = alpha.identity().unwrap();
    let swapped = Client::new(
        &url,
        fedhe_client::Auth::Member {
            id: me.to_string(),
            identity: std::sync::Arc::new(fedhe_api::Identity::from_seed(
                &identity.signing_key().to_bytes(),
            )),
        },
    )
    .unwrap();
    let e = swapped.study("s2").unwrap_err().to_string();
    assert!(
        e.contains("served the spec of study \"s1\" for study \"s2\""),
        "{e}"
    );
    // The same spec asked for as itself is accepted (the check is of the id).
    assert_eq!(swapped.study("s1").unwrap().spec.id, "s1");
}

/// A server on loopback that answers every request by `answer` (after
/// reading the request's head): a malicious server for the member's side.
fn malicious_server(answer: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static) -> String {
    use std::io::BufRead;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                answer(&mut stream);
            });
        }
    });
    url
}

/// Issue 45, finding 9: a server answering with a huge body. A member reads
/// no more than the request's limit: an answer declaring 1 GiB is refused
/// from its header, one streamed without a length is cut once past the
/// JSON limit (32 MiB), and a huge error answer gives a one-line error of a
/// few hundred characters.
#[test]
fn huge_answers_a_member_reads_at_most_the_limit_of_its_request() {
    use std::io::Write;
    let anonymous = |url: &str| Client::new(url, fedhe_client::Auth::Anonymous).unwrap();
    // Declared 1 GiB, nothing sent: refused at once.
    let declared = malicious_server(|s| {
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1073741824\r\n\r\n",
        );
        std::thread::sleep(Duration::from_secs(5));
    });
    let asked = std::time::Instant::now();
    let e = anonymous(&declared).study("s1").unwrap_err().to_string();
    assert!(
        e.contains("1073741824 bytes, over the 33554432-byte limit"),
        "{e}"
    );
    assert!(asked.elapsed() < Duration::from_secs(4), "read nothing");
    // Streamed without a length (chunked), 48 MiB of JSON whitespace.
    let streamed = malicious_server(|s| {
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..48 {
            if s.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .is_err()
                || s.write_all(&chunk).is_err()
                || s.write_all(b"\r\n").is_err()
            {
                return;
            }
        }
        let _ = s.write_all(b"0\r\n\r\n");
    });
    let e = anonymous(&streamed).study("s1").unwrap_err().to_string();
    assert!(e.contains("more than 33554432 bytes"), "{e}");
    // An error answer of 16 MiB: read up to 64 KiB, quoted in one short line.
    let error = malicious_server(|s| {
        let body = vec![b'x'; 16 << 20];
        let _ = s.write_all(
            format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        let _ = s.write_all(&body);
    });
    let e = anonymous(&error).study("s1").unwrap_err().to_string();
    assert!(e.len() < 1000 && !e.contains('\n'), "{} bytes", e.len());
}
