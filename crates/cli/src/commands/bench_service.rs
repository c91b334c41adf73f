//! `fedhe bench service --members 10,100 --json` (issue 16): one round of a
//! real `fedhe serve` process on loopback (SQLite, or PostgreSQL with
//! `--database-url`), its members simulated in this process with bounded
//! concurrency, each doing its real cryptography and every check
//! (`MemberSession`: commit, verify the frozen list, reveal, verify before
//! decrypting, decryption share, verify the result). The round runs in waves
//! (every member commits, then reveals, then decrypts, then checks the
//! result), so a wave's wall time is that phase's cost for the federation.
//! Before the round each member makes its contribution's offline phase
//! (encryption masks and their c1 commitment, which need no values:
//! `MemberSession::prepare_contribution`, as a member does between rounds);
//! `prepare_seconds` is that wave, outside `round_seconds`.
//! With `--threshold T|majority` the ceremony is t-of-n, and each member joins
//! it as `fedhe ceremony join` does (key folder, commit, reveal, deal, open
//! and verify its shares, confirm), all at once; `ceremony_seconds` is that
//! whole ceremony, creation to completion.

use super::children::{start_server, Children};
use super::say;
use crate::error::CliError;
use crate::report::plot::{draw_lines, Line};
use clap::Args;
use fedhe_api::{CeremonySpec, Identity, MemberSpec, SignedStudySpec, StudySpec};
use fedhe_client::keys::{self, KeyDir};
use fedhe_client::member::{
    ceremony_roster, deal_result_key, fetch_result_key, join_ceremony, verify_ceremony,
    PhaseTimings,
};
use fedhe_client::{Auth, Client, MemberSession};
use fedhe_crypto::{
    CeremonyId, CommonRandomPoly, MemberId, PublicKeyShare, SecretKeyShare, WireObject,
};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `fedhe bench service`.
#[derive(Args, Debug)]
pub struct ServiceBenchArgs {
    /// Member counts to run, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "10,100")]
    members: Vec<usize>,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    params: String,
    /// Allow parameter sets below 128-bit security (tests only).
    #[arg(long)]
    allow_insecure: bool,
    /// Values each member contributes (512: a fraction of one ciphertext).
    #[arg(long, default_value_t = 512)]
    values: usize,
    /// Members working at once (threads).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// The server's store (default: an SQLite file in a temporary folder);
    /// a PostgreSQL URL runs it there (one fresh database is expected).
    #[arg(long)]
    database_url: Option<String>,
    /// t-of-n: any T members decrypt (n/2 < T ≤ n), or `majority` for
    /// ⌊n/2⌋ + 1 at every member count. Without it, n-of-n.
    #[arg(long, value_name = "T|majority")]
    threshold: Option<String>,
    /// Digested contributions each member also downloads in full
    /// (default: the member policy's default, none: the c1 check replaced
    /// them).
    #[arg(long, value_name = "N")]
    spot_checks: Option<usize>,
    /// λ of the signatures each member checks at random before revealing
    /// and before decrypting in n-of-n (default: the member policy's
    /// default, 16; at least the member count checks every one; t-of-n
    /// checks every one).
    #[arg(long, value_name = "λ")]
    signature_sampling: Option<usize>,
    /// Print JSON (the only output format).
    #[arg(long)]
    json: bool,
    /// Also draw the round's time and each phase's against the member count
    /// into this PNG file.
    #[arg(long, value_name = "PNG")]
    plot: Option<std::path::PathBuf>,
}

/// One member of the simulated federation.
struct Seat {
    session: MemberSession,
    client: Client,
}

/// Wall time of `f` over every seat, `concurrency` at a time.
fn wave(
    pool: &rayon::ThreadPool,
    seats: &mut [Seat],
    f: impl Fn(&mut Seat) -> Result<(), fedhe_client::ClientError> + Sync,
) -> Result<f64, CliError> {
    let start = Instant::now();
    pool.install(|| seats.par_iter_mut().try_for_each(&f))?;
    Ok(start.elapsed().as_secs_f64())
}

/// The median of `xs` (0 if empty).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

/// The server's peak resident memory, from `/metrics`.
fn peak_rss(admin: &Client) -> Result<u64, CliError> {
    admin
        .metrics()?
        .lines()
        .find(|l| l.starts_with("fedhe_process_peak_resident_bytes"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map(|v| v as u64)
        .ok_or_else(|| CliError::Usage("the server reports no peak memory".into()))
}

/// The n-of-n ceremony, made the way members make it (every member commits,
/// then every member reveals), `concurrency` members at a time: each
/// member's key share and public-key share bytes.
fn n_of_n_ceremony(
    pool: &rayon::ThreadPool,
    params: &Arc<fedhe_crypto::Params>,
    ids: &[MemberId],
    clients: &[Client],
) -> Result<Vec<(SecretKeyShare, Vec<u8>)>, CliError> {
    let crs = CommonRandomPoly::for_ceremony(params, &CeremonyId::new("bench")?, ids)?;
    let keys: Vec<(SecretKeyShare, Vec<u8>)> = pool.install(|| {
        ids.par_iter()
            .map(|m| {
                let mut rng = fedhe_ring::Csprng::from_entropy();
                let sk = SecretKeyShare::generate(params, m.clone(), &mut rng);
                let pk = PublicKeyShare::generate(params, &sk, &crs, &mut rng)?;
                Ok::<_, CliError>((sk, pk.to_bytes(params)))
            })
            .collect::<Result<_, _>>()
    })?;
    pool.install(|| {
        clients
            .par_iter()
            .zip(&keys)
            .try_for_each(|(c, (_, pk))| c.commit("bench", pk).map(drop))
    })?;
    pool.install(|| {
        clients
            .par_iter()
            .zip(&keys)
            .try_for_each(|(c, (_, pk))| c.reveal("bench", pk).map(drop))
    })?;
    Ok(keys)
}

/// Where [`threshold_ceremony`] keeps `member`'s key folder.
fn key_folder(root: &std::path::Path, member: &str) -> std::path::PathBuf {
    root.join("keys").join(member)
}

/// The t-of-n ceremony: every member joins at once as `fedhe ceremony join`
/// does, with a key folder under `root` (keys, commit, reveal, deal, open
/// and verify its Shamir shares, confirm). Each member's key share (with its
/// threshold key share in its folder) and public-key share bytes.
fn threshold_ceremony(
    params: &Arc<fedhe_crypto::Params>,
    allow_insecure: bool,
    root: &std::path::Path,
    names: &[String],
    clients: &[Client],
) -> Result<Vec<(SecretKeyShare, Vec<u8>)>, CliError> {
    let dirs: Vec<KeyDir> = names
        .iter()
        .map(|m| KeyDir::open_or_create(key_folder(root, m)))
        .collect::<Result<_, _>>()?;
    std::thread::scope(|s| {
        let joins: Vec<_> = clients
            .iter()
            .zip(&dirs)
            .map(|(c, dir)| {
                s.spawn(move || {
                    join_ceremony(
                        c,
                        dir,
                        "bench",
                        allow_insecure,
                        false,
                        std::time::Duration::from_secs(3600),
                    )
                })
            })
            .collect();
        joins.into_iter().try_for_each(|j| {
            j.join()
                .map_err(|_| CliError::Usage("a member's join panicked".into()))?
                .map_err(CliError::from)
        })
    })?;
    dirs.iter()
        .map(|dir| {
            let secret = MemberSession::load_secret(dir, params)?;
            Ok((secret, dir.read(keys::PUBLIC_SHARE_FILE)?.to_vec()))
        })
        .collect()
}

/// One round with `n` members; its JSON record.
fn run_one(a: &ServiceBenchArgs, n: usize) -> Result<serde_json::Value, CliError> {
    let params = super::resolve_params(&a.params, a.allow_insecure)?;
    let work = tempfile::tempdir().map_err(|e| CliError::Usage(e.to_string()))?;
    let token = hex::encode(fedhe_ring::Csprng::from_entropy().seed_bytes());
    let db = a
        .database_url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", work.path().join("fedhe.db").display()));
    let (server, url) = start_server(
        &db,
        &token,
        a.allow_insecure,
        &work.path().join("server.log"),
    )?;
    let _children = Children(vec![("server".into(), server)]);
    let threshold = super::ceremony::parse_threshold(a.threshold.as_deref(), n)?;
    // A t-of-n decrypting member waits for the set to fill: T must be able
    // to wait at once.
    let threads = match threshold {
        Some(t) => a.concurrency.max(t as usize),
        None => a.concurrency,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| CliError::Usage(e.to_string()))?;

    // The ceremony, made the way members make it (commit, then reveal).
    let admin = Client::new(&url, Auth::Admin(token.clone().into()))?;
    let admin_identity = Identity::generate();
    let names: Vec<String> = (0..n).map(|i| format!("m{i:04}")).collect();
    let identities: Vec<Arc<Identity>> = names
        .iter()
        .map(|_| Arc::new(Identity::generate()))
        .collect();
    let ceremony_start = Instant::now();
    admin.create_ceremony(&CeremonySpec {
        id: "bench".into(),
        parameter_set: a.params.clone(),
        members: names
            .iter()
            .zip(&identities)
            .map(|(m, id)| MemberSpec {
                id: m.clone(),
                identity_key: id.public_key_hex(),
            })
            .collect(),
        deadline_secs: 3600,
        allow_insecure: a.allow_insecure,
        admin_key: admin_identity.public_key_hex(),
        threshold,
    })?;
    let ids = names
        .iter()
        .map(|m| MemberId::new(m.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    // One HTTP connection pool and I/O thread for all the simulated members
    // (each a client of its own identity and counters): a thread and a
    // connection per member measured the simulation, not the protocol.
    let http = Client::new(&url, Auth::Anonymous)?;
    let clients: Vec<Client> = names
        .iter()
        .zip(&identities)
        .map(|(m, id)| {
            http.with_auth(Auth::Member {
                id: m.clone(),
                identity: id.clone(),
            })
        })
        .collect::<Result<_, _>>()?;
    let keys: Vec<(SecretKeyShare, Vec<u8>)> = match threshold {
        None => n_of_n_ceremony(&pool, &params, &ids, &clients)?,
        Some(_) => threshold_ceremony(&params, a.allow_insecure, work.path(), &names, &clients)?,
    };
    // The last reveal can be acknowledged before the ceremony completes
    // (another reveal's step was still running and completes it): wait for
    // it, as a member does, before reading the transcript.
    let mut phase = fedhe_api::CeremonyPhase::Revealing;
    loop {
        let s = admin.ceremony_wait(
            "bench",
            std::time::Duration::from_secs(20),
            Some(phase),
            None,
        )?;
        phase = s.phase;
        match s.phase {
            fedhe_api::CeremonyPhase::Complete => break,
            fedhe_api::CeremonyPhase::Failed => {
                return Err(CliError::Usage(format!(
                    "the bench ceremony failed: {}",
                    s.reason.unwrap_or_default()
                )))
            }
            _ if ceremony_start.elapsed().as_secs() > 3600 => {
                return Err(CliError::Usage(
                    "the bench ceremony did not complete within an hour".into(),
                ))
            }
            _ => {}
        }
    }
    // n-of-n members hold their keys in memory here: the result key is
    // dealt and fetched as `fedhe ceremony join` does (t-of-n members have
    // it in their folders already).
    let result_keys: Option<Vec<fedhe_crypto::ResultKey>> = match threshold {
        Some(_) => None,
        None => {
            let roster = ceremony_roster(&admin.ceremony("bench")?)?;
            deal_result_key(&clients[0], "bench", &params, &roster)?;
            let fetched: Vec<_> = pool.install(|| {
                clients
                    .par_iter()
                    .map(|c| {
                        fetch_result_key(
                            c,
                            "bench",
                            &params,
                            &roster,
                            Instant::now(),
                            std::time::Duration::from_secs(600),
                        )
                    })
                    .collect()
            });
            Some(fetched.into_iter().collect::<Result<_, _>>()?)
        }
    };
    let ceremony_seconds = ceremony_start.elapsed().as_secs_f64();
    let verified = verify_ceremony(
        &clients[0],
        "bench",
        Some((&names[0], &keys[0].1)),
        a.allow_insecure,
    )?;
    let study = admin.create_study(&SignedStudySpec::sign(
        StudySpec {
            id: "bench-study".into(),
            ceremony: "bench".into(),
            algorithm: "sum".into(),
            config: serde_json::json!({}),
            min_contributors: n as u32,
            round_timeout_secs: 3600,
            decrypt_timeout_secs: 3600,
            bound: 1.0,
            precision: Default::default(),
            round_cap: None,
        },
        &admin_identity,
    ))?;
    let mut seats: Vec<Seat> = clients
        .into_iter()
        .zip(keys)
        .enumerate()
        .map(|(i, (client, (secret, _)))| {
            let mut session = MemberSession::new(
                client.clone(),
                &verified,
                secret,
                work.path().join("state").join(format!("m{i:04}")),
                n,
            )?;
            session.round_timeout = std::time::Duration::from_secs(3600);
            if let Some(k) = a.spot_checks {
                session.spot_checks = Some(k);
            }
            if let Some(lambda) = a.signature_sampling {
                if lambda == 0 {
                    return Err(CliError::Usage(
                        "--signature-sampling 0 would check no signature; use at least 1".into(),
                    ));
                }
                session.signature_sampling = lambda;
            }
            session = match &result_keys {
                Some(keys) => session.with_result_key(keys[i].clone()),
                None => {
                    let folder = KeyDir::open(key_folder(work.path(), &names[i]))?;
                    session
                        .with_threshold_share_from(&folder)?
                        .with_result_key_from(&folder)?
                }
            };
            session.accept_study(&study)?;
            Ok(Seat { session, client })
        })
        .collect::<Result<_, CliError>>()?;
    let before: Vec<(u64, u64)> = seats
        .iter()
        .map(|s| (s.client.bytes_sent(), s.client.bytes_received()))
        .collect();
    let requests_before: Vec<u64> = seats.iter().map(|s| s.client.requests_sent()).collect();

    // Each member's offline phase, before its values exist (as a member
    // does between rounds, `MemberSession::prepare_contribution`): the
    // encryption masks and their c1 commitment. Timed apart from the round.
    let prepare = wave(&pool, &mut seats, |s| {
        s.session
            .prepare_contribution("bench-study", a.values)
            .map(drop)
    })?;
    // The round, in waves.
    let values: Vec<f64> = (0..a.values).map(|i| i as f64 / a.values as f64).collect();
    let round_start = Instant::now();
    let commit = wave(&pool, &mut seats, |s| {
        s.session.commit("bench-study", 1, &values, 1.0).map(drop)
    })?;
    let reveal = wave(&pool, &mut seats, |s| {
        s.session.reveal("bench-study", 1).map(drop)
    })?;
    // Every contributor's digest first: a member verifying waits for all of
    // them, and here the members take turns. `decrypt` then reuses what
    // `send_digest` fetched and does not digest again.
    let digest = wave(&pool, &mut seats, |s| {
        s.session.send_digest("bench-study", 1)
    })?;
    let decrypt = wave(&pool, &mut seats, |s| s.session.decrypt("bench-study", 1))?;
    // Likewise every share maker's digest of its decryption share before
    // any member checks the result; `result` reuses what it fetched.
    let share_digest = wave(&pool, &mut seats, |s| {
        s.session.send_share_digest("bench-study", 1)
    })?;
    let sums = std::sync::Mutex::new(Vec::new());
    let result = wave(&pool, &mut seats, |s| {
        let sum = s.session.result("bench-study", 1)?;
        sums.lock().map(|mut v| v.push(sum)).ok();
        Ok(())
    })?;
    let round_seconds = round_start.elapsed().as_secs_f64();
    // Every member decoded the sum of the plaintexts.
    let expected: Vec<f64> = values.iter().map(|v| v * n as f64).collect();
    for sum in sums.into_inner().unwrap_or_default() {
        let worst = super::max_abs_difference(&sum, &expected);
        if worst > 1e-6 {
            return Err(CliError::Usage(format!(
                "a member decoded a sum {worst} away from the plaintext sum"
            )));
        }
    }
    let timings: Vec<PhaseTimings> = seats.iter().map(|s| s.session.timings).collect();
    let per = |f: fn(&PhaseTimings) -> f64| median(timings.iter().map(f).collect());
    let (sent, received): (Vec<f64>, Vec<f64>) = seats
        .iter()
        .zip(&before)
        .map(|(s, (b_sent, b_received))| {
            (
                (s.client.bytes_sent() - b_sent) as f64,
                (s.client.bytes_received() - b_received) as f64,
            )
        })
        .unzip();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let requests: Vec<f64> = seats
        .iter()
        .zip(&requests_before)
        .map(|(s, b)| (s.client.requests_sent() - b) as f64)
        .collect();
    let ceremony_sent: Vec<f64> = before.iter().map(|(s, _)| *s as f64).collect();
    let ceremony_received: Vec<f64> = before.iter().map(|(_, r)| *r as f64).collect();
    Ok(serde_json::json!({
        "members": n,
        "threshold": threshold,
        "ceremony_seconds": ceremony_seconds,
        "ceremony_upload_bytes_per_member": mean(&ceremony_sent),
        "ceremony_download_bytes_per_member": mean(&ceremony_received),
        "params": a.params,
        "values": a.values,
        "concurrency": a.concurrency,
        // Contributions downloaded besides a member's own, at most n − 1.
        "spot_checks": seats
            .first()
            .map(|s| s.session.effective_spot_checks().min(n.saturating_sub(1))),
        "signature_sampling": seats.first().map(|s| s.session.signature_sampling),
        // The members' offline phase before the round (not in round_seconds).
        "prepare_seconds": prepare,
        "round_seconds": round_seconds,
        "phases": {
            "commit": commit,
            "reveal": reveal,
            "digest": digest,
            "decrypt": decrypt,
            "share_digest": share_digest,
            "result": result,
            "member_medians": {
                "aggregate_wait": per(|t| t.aggregate_wait),
                "verify": per(|t| t.verify),
                "decryption_share": per(|t| t.share),
                "result_wait": per(|t| t.result_wait),
                "result_verify": per(|t| t.result_verify),
            },
        },
        "upload_bytes_per_member": mean(&sent),
        "download_bytes_per_member": mean(&received),
        // HTTP requests a member sent in the round (retries included).
        "requests_per_member": mean(&requests),
        "server_peak_rss_bytes": peak_rss(&admin)?,
    }))
}

/// Runs `fedhe bench service`.
pub fn run(a: ServiceBenchArgs) -> Result<(), CliError> {
    if !a.json {
        return Err(CliError::Usage(
            "fedhe bench service prints JSON only: give --json".into(),
        ));
    }
    if a.members.iter().any(|&n| n < 2) {
        return Err(CliError::Usage(
            "--members: every count must be at least 2".into(),
        ));
    }
    let mut runs = Vec::with_capacity(a.members.len());
    for &n in &a.members {
        runs.push(run_one(&a, n)?);
    }
    if let Some(path) = &a.plot {
        let line = |name: &str, pick: &dyn Fn(&serde_json::Value) -> f64| -> Line {
            (
                name.to_string(),
                runs.iter()
                    .map(|r| (r["members"].as_f64().unwrap_or(0.0), pick(r)))
                    .collect(),
            )
        };
        let seconds = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
        let mut lines = vec![line("round", &|r| seconds(&r["round_seconds"]))];
        for phase in ["commit", "reveal", "decrypt", "result"] {
            lines.push(line(phase, &|r| seconds(&r["phases"][phase])));
        }
        draw_lines(
            path,
            &format!("fedhe bench service: one round at {}", a.params),
            "members",
            "seconds",
            &lines,
        )
        .map_err(CliError::Usage)?;
    }
    say!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({ "runs": runs }))
            .map_err(|e| CliError::Usage(e.to_string()))?
    )?;
    Ok(())
}
