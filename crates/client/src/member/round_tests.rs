//! The member's round protocol against the real server in this process
//! (`fedhe_server::InProcess` behind [`Client::in_process`]: the server's
//! handlers, checks and a real SQLite file, no socket): a whole round, the
//! member cut off between every pair of its calls and restarted from its
//! state folder, and refusals of what a server may serve.

use super::journal::RoundStep;
use super::transport::transport_methods;
use super::{verify_ceremony, MemberSession, Transport};
use crate::keys::{self, KeyDir};
use crate::{Auth, Client, ClientError, Exchange, ListPart, RefusalKind};
use fedhe_api::{
    AuditHead, AuditLog, CeremonySpec, CommitmentList, ContributionList, DecryptionShareList,
    Identity, MemberSpec, RoundResult, RoundStatus, SignedAuditHead, SignedStudySpec, StudySpec,
    StudyStatus, SumDigestList, UploadReceipt,
};
use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ADMIN: &str = "round-tests-admin";

/// The real server, answering in this process.
struct Server(fedhe_server::InProcess);

impl Exchange for Server {
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<(u16, String, Vec<u8>), String> {
        self.0
            .answer(fedhe_server::in_process::Request {
                method,
                path,
                headers,
                body,
            })
            .map(|a| (a.status, a.content_type, a.body))
    }
}

/// Toy-parameter members of ceremony `c1`, joined, with study `s1` (a sum
/// every member must contribute to) created on an in-process server.
struct Federation {
    admin: Client,
    clients: Vec<Client>,
    keys: Vec<KeyDir>,
    study: StudyStatus,
    _server: Arc<Server>,
    // Dropped last (fields drop in order): the server's database is in it.
    root: tempfile::TempDir,
}

fn admin_identity() -> Identity {
    Identity::from_seed(&[7; 32])
}

fn federation(names: &[&str]) -> Federation {
    federation_of(names, None)
}

/// As [`federation`], on a `threshold`-of-n ceremony when given.
fn federation_of(names: &[&str], threshold: Option<u32>) -> Federation {
    let root = tempfile::tempdir().unwrap();
    let server = Arc::new(Server(
        fedhe_server::InProcess::open(fedhe_server::Config {
            database_url: format!("sqlite://{}", root.path().join("fedhe.db").display()),
            admin_token: ADMIN.into(),
            allow_insecure_params: true,
            sweep_interval_ms: 50,
            ..fedhe_server::Config::default()
        })
        .unwrap(),
    ));
    let admin = Client::in_process(server.clone(), Auth::Admin(ADMIN.to_string().into()));
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
    let clients: Vec<Client> = members
        .into_iter()
        .map(|(id, identity)| Client::in_process(server.clone(), Auth::Member { id, identity }))
        .collect();
    let keys: Vec<KeyDir> = names
        .iter()
        .map(|m| KeyDir::open_or_create(root.path().join(m)).unwrap())
        .collect();
    std::thread::scope(|s| {
        for (client, dir) in clients.iter().zip(&keys) {
            s.spawn(move || {
                super::join_ceremony(client, dir, "c1", true, false, Duration::from_secs(60))
                    .unwrap()
            });
        }
    });
    let study = create_study(&admin, "s1", names.len());
    Federation {
        root,
        admin,
        clients,
        keys,
        study,
        _server: server,
    }
}

const BOUND: f64 = 10.0;

/// Study `id` of ceremony `c1`: a sum of values within [`BOUND`] that all
/// `members` must contribute to.
fn create_study(admin: &Client, id: &str, members: usize) -> StudyStatus {
    admin
        .create_study(&SignedStudySpec::sign(
            StudySpec {
                id: id.into(),
                ceremony: "c1".into(),
                algorithm: "sum".into(),
                config: serde_json::json!({}),
                min_contributors: members as u32,
                round_timeout_secs: 600,
                decrypt_timeout_secs: 600,
                bound: BOUND,
                precision: Default::default(),
                round_cap: None,
            },
            &admin_identity(),
        ))
        .unwrap()
}

impl Federation {
    /// Member `m`'s session as the member (re)starts it, its calls going
    /// through `transport`: ceremony verified, keys loaded, the study's spec
    /// accepted, its state folder as it was left.
    /// Member `m`'s session over its own, unchanged transport.
    fn honest(&self, m: usize) -> MemberSession {
        self.session(m, self.clients[m].clone())
    }

    fn session(&self, m: usize, transport: impl Transport + 'static) -> MemberSession {
        let client = &self.clients[m];
        let dir = &self.keys[m];
        let me = client.member().unwrap().to_string();
        let own = dir.read(keys::PUBLIC_SHARE_FILE).unwrap();
        let verified = verify_ceremony(client, "c1", Some((&me, &own)), true).unwrap();
        let secret = MemberSession::load_secret(dir, &verified.params).unwrap();
        let mut session = MemberSession::new(
            transport,
            &verified,
            secret,
            self.state_dir(m),
            self.clients.len(),
        )
        .unwrap()
        .with_threshold_share_from(dir)
        .unwrap()
        .with_result_key_from(dir)
        .unwrap();
        session.round_timeout = Duration::from_secs(60);
        // Honest members' digests come at once; a wait that ran out would
        // make the member download what it waits for, as timing decides.
        session.digest_wait = Duration::from_secs(30);
        session.accept_study(&self.study).unwrap();
        session
    }

    fn state_dir(&self, m: usize) -> PathBuf {
        self.root.path().join(format!("state-{m}"))
    }
}

/// What member `m` contributes to every round.
fn values(m: usize) -> Vec<f64> {
    vec![0.25 * (m as f64 + 1.0), -1.5, 1.0 / (m as f64 + 3.0)]
}

fn plain_sum(members: usize) -> Vec<f64> {
    (0..members).fold(vec![0.0; 3], |acc, m| {
        acc.iter().zip(values(m)).map(|(a, v)| a + v).collect()
    })
}

/// Where a member is cut off: before the `nth` call (from 0) of `call`
/// reaches the server, or after the server answered it and before the
/// member read the answer; every later call fails too (the process is
/// gone).
#[derive(Clone, Copy, Debug)]
enum Cut {
    Never,
    Before(&'static str, usize),
    After(&'static str, usize),
}

/// How a test's server answers one call: `edit(call, answer)` may change
/// the answer (`answer` is the call's `Result<T, ClientError>`, `T` its
/// value: `Vec<u8>`, `CommitmentList`, …) before the member reads it.
type Edit = Box<dyn Fn(&str, &mut dyn Any) + Send + Sync>;

/// A member's transport that dies at its [`Cut`] and answers as its
/// [`Edit`] says, naming the calls it saw, in order.
struct Between {
    inner: Client,
    cut: Cut,
    edit: Option<Edit>,
    calls: Arc<Mutex<Vec<&'static str>>>,
    /// Opened once this member claimed a decrypting seat (or was cut).
    opens: Option<Arc<Latch>>,
    /// Waited for before this member claims a seat.
    waits: Option<Arc<Latch>>,
}

/// A gate that holds the other members' claims to a t-of-n round's
/// decrypting seats until the cut member claimed its own (or was cut off
/// before): its seat, and so every step after the claim, does not depend on
/// which thread the machine runs first. Reset at each round.
#[derive(Default)]
struct Latch {
    open: Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Latch {
    fn set(&self, open: bool) {
        *self.open.lock().unwrap() = open;
        self.opened.notify_all();
    }

    fn wait(&self) {
        let open = self.open.lock().unwrap();
        let (open, _) = self
            .opened
            .wait_timeout_while(open, Duration::from_secs(30), |open| !*open)
            .unwrap();
        assert!(*open, "the cut member never claimed its seat");
    }
}

impl Between {
    fn new(inner: &Client) -> Self {
        Self {
            inner: inner.clone(),
            cut: Cut::Never,
            edit: None,
            calls: Arc::default(),
            opens: None,
            waits: None,
        }
    }

    fn gate<T: 'static>(
        &self,
        name: &'static str,
        call: impl FnOnce() -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let (nth, dead) = {
            let mut calls = self.calls.lock().unwrap();
            let nth = calls.iter().filter(|c| **c == name).count();
            // Cut already: this process is gone.
            let dead = calls.contains(&"cut");
            calls.push(name);
            (nth, dead)
        };
        let cut = || {
            if let Some(latch) = &self.opens {
                latch.set(true);
            }
            self.calls.lock().unwrap().push("cut");
            Err(ClientError::Transport(format!("cut off at {name} #{nth}")))
        };
        if dead {
            return Err(ClientError::Transport("cut off".into()));
        }
        if name == "claim_decryption" {
            if let Some(latch) = &self.waits {
                latch.wait();
            }
        }
        let mut answer = match self.cut {
            Cut::Before(c, k) if c == name && k == nth => return cut(),
            Cut::After(c, k) if c == name && k == nth => {
                let _ = call();
                return cut();
            }
            _ => call(),
        };
        if name == "claim_decryption" {
            if let Some(latch) = &self.opens {
                latch.set(true);
            }
        }
        if let Some(edit) = &self.edit {
            edit(name, &mut answer);
        }
        answer
    }
}

macro_rules! between {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        impl Transport for Between {
            $(fn $name(&self, $($arg: $ty),*) -> Result<$out, ClientError> {
                self.gate(stringify!($name), || self.inner.$name($($arg),*))
            })*
        }
    };
}
transport_methods!(between);

/// Runs `round` with every member: member 0 through a fresh session cut at
/// `cut`, then (if that did not finish the round) restarted over a whole
/// transport; the others through `others`. Returns member 0's calls before
/// the cut, its first and final outcomes, and the others' results.
#[allow(clippy::type_complexity)]
fn round_with_cut(
    fed: &Federation,
    others: &mut [MemberSession],
    claims: &Arc<Latch>,
    round: u64,
    cut: Cut,
) -> (
    Vec<&'static str>,
    Result<Vec<f64>, ClientError>,
    Vec<f64>,
    Vec<Vec<f64>>,
) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    claims.set(false);
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            let mut cutting = fed.session(
                0,
                Between {
                    cut,
                    calls: calls.clone(),
                    opens: Some(claims.clone()),
                    ..Between::new(&fed.clients[0])
                },
            );
            let first = cutting.run_round("s1", round, Some(&values(0)), BOUND);
            drop(cutting);
            claims.set(true);
            // Restarted: the same state folder, a transport that works.
            let mut again = fed.honest(0);
            let last = again.run_round("s1", round, Some(&values(0)), BOUND);
            (first, last.unwrap())
        });
        let rest: Vec<_> = others
            .iter_mut()
            .enumerate()
            .map(|(i, session)| {
                s.spawn(move || {
                    session
                        .run_round("s1", round, Some(&values(i + 1)), BOUND)
                        .unwrap()
                })
            })
            .collect();
        let rest = rest.into_iter().map(|h| h.join().unwrap()).collect();
        let (first, last) = first.join().unwrap();
        (calls.lock().unwrap().clone(), first, last, rest)
    })
}

/// A member cut off between any two of its calls in a round, and
/// restarted from what it recorded, ends the round with the same result as
/// an uninterrupted run and as every other member, equal to the sum of the
/// contributions, having sent the server the contribution it recorded
/// (never a second, different one: the server would refuse it).
#[test]
fn a_member_cut_off_between_any_two_calls_resumes_to_the_uninterrupted_result() {
    cut_between_every_pair_of_calls(&federation(&["a", "b", "c"]));
}

/// As [`a_member_cut_off_between_any_two_calls_resumes_to_the_uninterrupted_result`]
/// on a 2-of-3 ceremony, where a round has one more step (claiming a seat
/// among the decrypting members) and the cut member may end up observing.
#[test]
fn a_threshold_member_cut_off_between_any_two_calls_resumes_to_the_uninterrupted_result() {
    cut_between_every_pair_of_calls(&federation_of(&["a", "b", "c"], Some(2)));
}

fn cut_between_every_pair_of_calls(fed: &Federation) {
    let claims = Arc::new(Latch::default());
    let mut others: Vec<MemberSession> = (1..3)
        .map(|m| {
            let waiting = Between {
                waits: Some(claims.clone()),
                ..Between::new(&fed.clients[m])
            };
            fed.session(m, waiting)
        })
        .collect();
    let expected = plain_sum(3);
    let (calls, first, uninterrupted, rest) =
        round_with_cut(fed, &mut others, &claims, 1, Cut::Never);
    let uninterrupted_first = first.unwrap();
    assert_eq!(uninterrupted_first, uninterrupted);
    for (got, want) in uninterrupted.iter().zip(&expected) {
        assert!(
            (got - want).abs() < 1e-6,
            "{uninterrupted:?} against {expected:?}"
        );
    }
    assert!(rest.iter().all(|r| *r == uninterrupted));
    // Every step of the uninterrupted round: each call with its occurrence.
    let steps: Vec<(&'static str, usize)> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, calls[..i].iter().filter(|d| *d == c).count()))
        .collect();
    assert!(steps.len() >= 8, "a round takes more calls than {calls:?}");

    let mut round = 1;
    let mut cut_at = std::collections::BTreeSet::new();
    for (call, nth) in steps {
        for cut in [Cut::Before(call, nth), Cut::After(call, nth)] {
            round += 1;
            let (seen, first, last, rest) = round_with_cut(fed, &mut others, &claims, round, cut);
            // A poll repeated in the uninterrupted round may come fewer
            // times in this one: then it was not cut, and finished.
            let was_cut = seen.contains(&"cut");
            assert_eq!(first.is_err(), was_cut, "{cut:?}: {first:?} after {seen:?}");
            if was_cut {
                cut_at.insert((call, matches!(cut, Cut::Before(..))));
            }
            assert_eq!(last, uninterrupted, "{cut:?}: calls {seen:?}");
            assert!(rest.iter().all(|r| *r == uninterrupted), "{cut:?}");
            // What the server holds of member a is what a recorded.
            let recorded =
                std::fs::read(fed.state_dir(0).join(format!("s1.{round}.contribution"))).unwrap();
            let served = fed.clients[1].contribution("s1", round, "a").unwrap();
            assert_eq!(recorded, served, "{cut:?}");
        }
    }
    // Every kind of call was cut before and after it (but the round's
    // status, asked only by a member early to reveal, as timing decides).
    for call in calls.iter().filter(|c| **c != "round") {
        for before in [true, false] {
            assert!(
                cut_at.contains(&(*call, before)),
                "{call} never cut ({before})"
            );
        }
    }
}

/// Round 1 of a new study `id`: members 1.. contribute (and do nothing
/// more), member 0 runs the round through a transport whose answers `edit`
/// changes. Returns member 0's outcome and the members whose decryption
/// shares the server holds afterwards.
fn served(
    fed: &Federation,
    others: &mut [MemberSession],
    id: &str,
    edit: Edit,
) -> (Result<Vec<f64>, ClientError>, Vec<String>) {
    let study = create_study(&fed.admin, id, fed.clients.len());
    let mut first = fed.session(
        0,
        Between {
            edit: Some(edit),
            ..Between::new(&fed.clients[0])
        },
    );
    first.accept_study(&study).unwrap();
    // Nobody else decrypts: the unchanged round ends waiting for shares.
    first.round_timeout = Duration::from_secs(3);
    // The others send no digests: the member downloads their contributions.
    first.digest_wait = Duration::from_secs(1);
    let outcome = std::thread::scope(|s| {
        for (i, session) in others.iter_mut().enumerate() {
            session.accept_study(&study).unwrap();
            s.spawn(move || session.contribute(id, 1, &values(i + 1), BOUND).unwrap());
        }
        first.run_round(id, 1, Some(&values(0)), BOUND)
    });
    let shares = fed.clients[1]
        .decryption_shares_part(id, 1, ListPart::WithoutSignatures)
        .unwrap()
        .shares
        .into_iter()
        .map(|u| u.member)
        .collect();
    (outcome, shares)
}

/// Flips one bit in the middle of a byte answer to `call`.
fn flip(call: &'static str) -> Edit {
    bytes_of(call, |bytes| {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
    })
}

/// Changes a successful byte answer to `call` with `change`.
fn bytes_of(call: &'static str, change: impl Fn(&mut Vec<u8>) + Send + Sync + 'static) -> Edit {
    Box::new(move |name, value| {
        if name == call {
            if let Ok(bytes) = value
                .downcast_mut::<Result<Vec<u8>, ClientError>>()
                .unwrap()
            {
                change(bytes);
            }
        }
    })
}

/// What a server may serve a member that it must refuse, through the
/// in-process transport: each answer changed in one place is refused with
/// the kind of check it fails, and a member that refuses before decrypting
/// sends the server no decryption share. The same rounds served unchanged
/// give the sum (the first case), so the refusals are the edits' doing.
#[test]
fn a_member_refuses_what_a_server_changed_by_the_check_it_fails() {
    let fed = federation(&["a", "b", "c"]);
    let mut others: Vec<MemberSession> = (1..3).map(|m| fed.honest(m)).collect();
    let kind = |outcome: Result<Vec<f64>, ClientError>| match outcome {
        Err(ClientError::Refused(r)) => r.kind,
        other => panic!("expected a refusal, got {other:?}"),
    };

    // Unchanged: member 0 checks the others' contributions itself (they
    // sent no digests), decrypts, and waits for shares nobody else sends.
    let (outcome, shares) = served(&fed, &mut others, "unchanged", Box::new(|_, _| {}));
    assert!(
        matches!(outcome, Err(ClientError::Timeout(_))),
        "{outcome:?}"
    );
    assert_eq!(shares, ["a"]);

    // The aggregate, one bit changed: its hash is not the listed one.
    // (The server that changed it takes the member's digest signed over it.)
    let take_digest = |name: &str, value: &mut dyn Any| {
        if name == "put_sum_digest" {
            *value
                .downcast_mut::<Result<UploadReceipt, ClientError>>()
                .unwrap() = Ok(UploadReceipt {
                hash: String::new(),
                created: true,
            });
        }
    };
    let flipped = flip("aggregate");
    let edit: Edit = Box::new(move |name, value| {
        flipped(name, value);
        take_digest(name, value);
    });
    let (outcome, shares) = served(&fed, &mut others, "aggregate-bit", edit);
    assert_eq!(kind(outcome), RefusalKind::Substituted);
    assert!(shares.is_empty(), "{shares:?}");

    // A well-formed aggregate that is not the sum (member b's contribution
    // served in its place), listed under its own hash: the contributors'
    // digests do not add up to it.
    let b = fed.clients[1].clone();
    let edit: Edit = Box::new(move |name, value| {
        take_digest(name, value);
        let other = || b.contribution("aggregate-not-sum", 1, "b").unwrap();
        match name {
            "aggregate" => {
                if let Ok(bytes) = value
                    .downcast_mut::<Result<Vec<u8>, ClientError>>()
                    .unwrap()
                {
                    *bytes = other();
                }
            }
            "contributions_part" => {
                if let Ok(list) = value
                    .downcast_mut::<Result<ContributionList, ClientError>>()
                    .unwrap()
                {
                    list.aggregate_hash = Some(blake3::hash(&other()).to_hex().to_string());
                }
            }
            _ => {}
        }
    });
    let (outcome, shares) = served(&fed, &mut others, "aggregate-not-sum", edit);
    assert_eq!(kind(outcome), RefusalKind::NotTheSum);
    assert!(shares.is_empty(), "{shares:?}");

    // A contribution, one bit changed, when the member downloads it: its
    // checksum fails.
    let (outcome, shares) = served(&fed, &mut others, "contribution-bit", flip("contribution"));
    assert_eq!(kind(outcome), RefusalKind::Malformed);
    assert!(shares.is_empty(), "{shares:?}");

    // Member c's contribution served as b's: not what b committed to.
    let c = fed.clients[2].clone();
    let edit = bytes_of("contribution", move |bytes| {
        *bytes = c.contribution("contribution-swapped", 1, "c").unwrap();
    });
    let (outcome, shares) = served(&fed, &mut others, "contribution-swapped", edit);
    assert_eq!(kind(outcome), RefusalKind::Substituted);
    assert!(shares.is_empty(), "{shares:?}");

    // The frozen commitment list without another member's commitment:
    // under its old hash, it is not that list; rehashed, it has fewer
    // contributors than the member's floor.
    for (id, rehash, refused) in [
        ("commitments-dropped", false, RefusalKind::Substituted),
        ("commitments-rehashed", true, RefusalKind::TooFew),
    ] {
        let edit: Edit = Box::new(move |name, value| {
            if name == "round_commitments_part" {
                if let Ok(list) = value
                    .downcast_mut::<Result<CommitmentList, ClientError>>()
                    .unwrap()
                {
                    list.commitments.retain(|c| c.member != "b");
                    if rehash && list.list_hash.is_some() {
                        list.list_hash =
                            Some(CommitmentList::canonical_hash(id, 1, &list.commitments));
                    }
                }
            }
        });
        let (outcome, shares) = served(&fed, &mut others, id, edit);
        assert_eq!(kind(outcome), refused, "{id}");
        assert!(shares.is_empty(), "{shares:?}");
    }
}

/// An edit of the frozen commitment list served to the member: `change`
/// applied to its entries, the list rehashed as a server that wants it
/// believed would.
fn commitments_changed(
    study: &'static str,
    change: impl Fn(&mut CommitmentList) + Send + Sync + 'static,
) -> Edit {
    Box::new(move |name, value| {
        if name != "round_commitments_part" {
            return;
        }
        let answer = value
            .downcast_mut::<Result<CommitmentList, ClientError>>()
            .unwrap();
        if let Ok(list) = answer {
            if list.list_hash.is_some() {
                change(list);
                list.list_hash = Some(CommitmentList::canonical_hash(study, 1, &list.commitments));
            }
        }
    })
}

/// More of what a server may serve changed, each refused by its own kind
/// of check before any decryption share is sent: a commitment listed twice,
/// one under a name that is not the ceremony's, a list whose value count
/// is not its entries', carries with a bit changed, and well-formed carries
/// of another aggregate (the c1 check, after which every contribution is
/// downloaded and found to open its commitment).
#[test]
fn a_member_refuses_lists_and_carries_a_server_changed() {
    let fed = federation(&["a", "b", "c"]);
    let mut others: Vec<MemberSession> = (1..3).map(|m| fed.honest(m)).collect();
    let cases: Vec<(&'static str, Edit, RefusalKind)> = vec![
        (
            "listed-twice",
            commitments_changed("listed-twice", |list| {
                let b = list.commitments[1].clone();
                list.commitments.insert(1, b);
            }),
            RefusalKind::Duplicate,
        ),
        (
            "stranger",
            commitments_changed("stranger", |list| {
                list.commitments[1].member = "bx".into();
            }),
            RefusalKind::Unaccounted,
        ),
        (
            "value-count",
            commitments_changed("value-count", |list| list.values = Some(5)),
            RefusalKind::Shape,
        ),
        (
            "carries-bit",
            flip("aggregate_carries"),
            RefusalKind::Malformed,
        ),
    ];
    for (id, edit, refused) in cases {
        let (outcome, shares) = served(&fed, &mut others, id, edit);
        match outcome {
            Err(ClientError::Refused(r)) => assert_eq!(r.kind, refused, "{id}: {}", r.reason),
            other => panic!("{id}: expected a refusal, got {other:?}"),
        }
        assert!(shares.is_empty(), "{id}: {shares:?}");
    }
    // Well-formed carries of another round's aggregate: the c1 check fails,
    // and with every contribution downloaded, each opens its contributor's
    // commitment, so the aggregate or its carries are the server's doing.
    let (_, shares) = served(&fed, &mut others, "base", Box::new(|_, _| {}));
    assert_eq!(shares, ["a"]);
    let b = fed.clients[1].clone();
    let other_carries = bytes_of("aggregate_carries", move |bytes| {
        *bytes = b.aggregate_carries("base", 1).unwrap();
    });
    let (outcome, shares) = served(&fed, &mut others, "carries-other", other_carries);
    match outcome {
        Err(ClientError::Refused(r)) => {
            assert_eq!(r.kind, RefusalKind::C1Check, "{}", r.reason);
            assert!(
                r.reason
                    .contains("the server's aggregate or carries are false"),
                "{}",
                r.reason
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(shares.is_empty(), "{shares:?}");
}

/// After decrypting, a member checks the result against the shares it
/// combines: a combined share with a bit changed, or another round's
/// well-formed combined share, is refused (verify after decrypt: the share
/// makers' signed digests are not of it) while the other members, served
/// honestly, get the sum.
#[test]
fn a_member_refuses_a_combined_share_a_server_changed() {
    let fed = federation(&["a", "b", "c"]);
    let mut others: Vec<MemberSession> = (1..3)
        .map(|m| {
            let mut session = fed.honest(m);
            // The changed rounds' server drops a's share digest: the others
            // download a's share instead of waiting for it.
            session.digest_wait = Duration::from_secs(1);
            session
        })
        .collect();
    let expected = plain_sum(3);
    let b = fed.clients[1].clone();
    let earlier = bytes_of("combined_share", move |bytes| {
        *bytes = b.combined_share("s1", 1).unwrap();
    });
    // The server that changed the combined share takes the member's share
    // digest signed over it.
    let taking_digest = |edit: Edit| -> Edit {
        Box::new(move |name, value| {
            edit(name, value);
            if name == "put_share_digest" {
                *value
                    .downcast_mut::<Result<UploadReceipt, ClientError>>()
                    .unwrap() = Ok(UploadReceipt {
                    hash: String::new(),
                    created: true,
                });
            }
        })
    };
    let cases: Vec<(u64, Option<Edit>, Option<RefusalKind>)> = vec![
        (1, None, None),
        (
            2,
            Some(taking_digest(flip("combined_share"))),
            Some(RefusalKind::Signature),
        ),
        (
            3,
            Some(taking_digest(earlier)),
            Some(RefusalKind::Signature),
        ),
    ];
    for (round, edit, refused) in cases {
        let mut a = fed.session(
            0,
            Between {
                edit,
                ..Between::new(&fed.clients[0])
            },
        );
        // Its own share digest never reached the server.
        a.digest_wait = Duration::from_secs(1);
        let outcome = std::thread::scope(|s| {
            for (i, session) in others.iter_mut().enumerate() {
                s.spawn(move || {
                    let sum = session
                        .run_round("s1", round, Some(&values(i + 1)), BOUND)
                        .unwrap();
                    for (got, want) in sum.iter().zip(plain_sum(3)) {
                        assert!((got - want).abs() < 1e-6, "round {round}: {sum:?}");
                    }
                });
            }
            a.run_round("s1", round, Some(&values(0)), BOUND)
        });
        match (outcome, refused) {
            (Ok(sum), None) => {
                for (got, want) in sum.iter().zip(&expected) {
                    assert!((got - want).abs() < 1e-6, "{sum:?}");
                }
            }
            (Err(ClientError::Refused(r)), Some(kind)) => {
                assert_eq!(r.kind, kind, "round {round}: {}", r.reason)
            }
            (other, _) => panic!("round {round}: {other:?}"),
        }
    }
}

/// A step asked for out of its order is refused by name, from the journal,
/// before any request waits: reveal before commit, decrypt before reveal
/// (for a member that committed), the result before decrypt; and the
/// journal's step follows the round through its records.
#[test]
fn a_step_out_of_order_is_refused_by_name() {
    let fed = federation(&["a", "b"]);
    let mut a = fed.honest(0);
    let mut b = fed.honest(1);
    let step = |s: &MemberSession| s.journal.step("s1", 1);
    assert_eq!(step(&a), RoundStep::NotBegun);
    let e = a.reveal("s1", 1).unwrap_err();
    assert!(
        matches!(&e, ClientError::Usage(m) if m.starts_with("reveal before commit")),
        "{e:?}"
    );
    let started = std::time::Instant::now();
    match a.result("s1", 1) {
        Err(ClientError::Refused(r)) => {
            assert_eq!(r.kind, RefusalKind::Own);
            assert!(
                r.reason.starts_with("result before decrypt"),
                "{}",
                r.reason
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    // In order, step by step.
    std::thread::scope(|s| {
        s.spawn(|| b.run_round("s1", 1, Some(&values(1)), BOUND).unwrap());
        a.commit("s1", 1, &values(0), BOUND).unwrap();
        assert_eq!(step(&a), RoundStep::Committed);
        let e = a.decrypt("s1", 1).unwrap_err();
        assert!(
            matches!(&e, ClientError::Usage(m) if m.starts_with("decrypt before reveal")),
            "{e:?}"
        );
        a.reveal("s1", 1).unwrap();
        assert_eq!(step(&a), RoundStep::Revealed);
        a.decrypt("s1", 1).unwrap();
        assert_eq!(step(&a), RoundStep::Decrypted);
        a.run_round("s1", 1, Some(&values(0)), BOUND).unwrap();
        assert_eq!(step(&a), RoundStep::Done);
    });
}
