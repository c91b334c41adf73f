//! A toy-parameter federation on a running server, for the tests that run
//! the server as a real process: members with key folders, a complete
//! ceremony with an administrator key, a signed study, and one verified
//! [`MemberSession`] per member that accepted the study's spec.

use fedhe_api::{CeremonySpec, Identity, MemberSpec, SignedStudySpec, StudySpec, StudyStatus};
use fedhe_client::keys::{self, KeyDir};
use fedhe_client::member::{join_ceremony, verify_ceremony};
use fedhe_client::{Auth, Client, MemberSession};
use std::sync::Arc;
use std::time::Duration;

/// The administrator's signing identity (a fixed key for the toy set's tests).
pub fn admin_identity() -> Identity {
    Identity::from_seed(&[42; 32])
}

/// What a study of the toy federation looks like.
pub struct Terms {
    /// Members a round needs at its deadline.
    pub min_contributors: u32,
    /// Seconds each of a round's committing and collecting phases lasts.
    pub round_secs: u64,
    /// The bound on every value.
    pub bound: f64,
}

/// Ceremony `c1` (toy parameters, the administrator key of
/// [`admin_identity`]) created for `names`, each with a fresh identity;
/// returns each member's client, signing as that member. Nobody has joined.
/// (Not every test file that includes this module uses it.)
#[allow(dead_code)]
pub fn toy_ceremony(url: &str, admin_token: &str, names: &[&str]) -> Vec<Client> {
    toy_ceremony_with_threshold(url, admin_token, names, None)
}

/// As [`toy_ceremony`], t-of-n when `threshold` is given.
pub fn toy_ceremony_with_threshold(
    url: &str,
    admin_token: &str,
    names: &[&str],
    threshold: Option<u32>,
) -> Vec<Client> {
    let admin = Client::new(url, Auth::Admin(admin_token.to_string().into())).unwrap();
    let members: Vec<(String, Arc<Identity>)> = names
        .iter()
        .map(|m| (m.to_string(), Arc::new(Identity::generate())))
        .collect();
    admin
        .create_ceremony(&CeremonySpec {
            id: "c1".into(),
            parameter_set: "toy-n1024".into(),
            members: members
                .iter()
                .map(|(m, id)| MemberSpec {
                    id: m.clone(),
                    identity_key: id.public_key_hex(),
                })
                .collect(),
            deadline_secs: 600,
            allow_insecure: true,
            admin_key: admin_identity().public_key_hex(),
            threshold,
        })
        .unwrap();
    members
        .into_iter()
        .map(|(id, identity)| Client::new(url, Auth::Member { id, identity }).unwrap())
        .collect()
}

/// `names` with key folders under `root`, ceremony `c1` complete, study `s1`
/// created with `terms`; returns each member's session (spec accepted), its
/// client (for requests outside the session's protocol) and the study.
pub fn toy_federation(
    url: &str,
    admin_token: &str,
    root: &std::path::Path,
    names: &[&str],
    terms: &Terms,
) -> (Vec<(MemberSession, Client)>, StudyStatus) {
    toy_federation_with_threshold(url, admin_token, root, names, terms, None)
}

/// As [`toy_federation`] on a t-of-n ceremony when `threshold` is given
/// (each session holds its threshold key share).
pub fn toy_federation_with_threshold(
    url: &str,
    admin_token: &str,
    root: &std::path::Path,
    names: &[&str],
    terms: &Terms,
    threshold: Option<u32>,
) -> (Vec<(MemberSession, Client)>, StudyStatus) {
    let admin = Client::new(url, Auth::Admin(admin_token.to_string().into())).unwrap();
    let seats: Vec<(Client, KeyDir)> =
        toy_ceremony_with_threshold(url, admin_token, names, threshold)
            .into_iter()
            .zip(names)
            .map(|(client, m)| (client, KeyDir::open_or_create(root.join(m)).unwrap()))
            .collect();
    std::thread::scope(|s| {
        for (client, dir) in &seats {
            s.spawn(move || {
                join_ceremony(client, dir, "c1", true, false, Duration::from_secs(60)).unwrap()
            });
        }
    });
    let study = admin
        .create_study(&SignedStudySpec::sign(
            StudySpec {
                id: "s1".into(),
                ceremony: "c1".into(),
                algorithm: "sum".into(),
                config: serde_json::json!({}),
                min_contributors: terms.min_contributors,
                round_timeout_secs: terms.round_secs,
                decrypt_timeout_secs: 600,
                bound: terms.bound,
                precision: Default::default(),
                round_cap: None,
            },
            &admin_identity(),
        ))
        .unwrap();
    let sessions = seats
        .into_iter()
        .map(|(client, dir)| (open_session(&client, &dir, terms, &study), client))
        .collect();
    (sessions, study)
}

/// A session of the member `client` signs for, with its key folder `dir`,
/// as the member (re)starts it: ceremony verified, keys loaded, `study`'s
/// spec accepted; the state folder's records are those it left. (Not every
/// test file that includes this module restarts a member.)
#[allow(dead_code)]
pub fn open_session(
    client: &Client,
    dir: &KeyDir,
    terms: &Terms,
    study: &StudyStatus,
) -> MemberSession {
    let me = client.member().unwrap().to_string();
    let own = dir.read(keys::PUBLIC_SHARE_FILE).unwrap();
    let verified = verify_ceremony(client, "c1", Some((&me, &own)), true).unwrap();
    let secret = MemberSession::load_secret(dir, &verified.params).unwrap();
    let mut session = MemberSession::new(
        client.clone(),
        &verified,
        secret,
        dir.path().join("state"),
        terms.min_contributors as usize,
    )
    .unwrap()
    .with_threshold_share_from(dir)
    .unwrap()
    .with_result_key_from(dir)
    .unwrap();
    session.round_timeout = Duration::from_secs(60);
    session.accept_study(study).unwrap();
    session
}
