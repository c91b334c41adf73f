//! The networked `fedhe demo`: a server and one process per institution on
//! loopback, driven the way institutions would run them by hand (README,
//! "Running a federation"). Every child is killed when the demo ends, however
//! it ends.

use super::recipe::{centre_value, settings, DemoArgs};
use crate::commands::children::{exe, finish, spawn, start_server, Children};
use crate::commands::say;
use crate::error::CliError;
use fedhe_api::{CeremonySpec, MemberSpec, StudySpec};
use fedhe_client::agent::StudyConfig;
use fedhe_client::{Auth, Client};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the demo keeps its files: a temporary folder removed at the end, or
/// the user's `--workdir`, kept.
enum Workdir {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl Workdir {
    fn new(kept: Option<&Path>) -> Result<Self, CliError> {
        let Some(dir) = kept else {
            return tempfile::Builder::new()
                .prefix("fedhe-demo-")
                .tempdir()
                .map(Self::Temporary)
                .map_err(|e| CliError::Usage(format!("cannot create a temporary folder: {e}")));
        };
        let io = |source| CliError::Io {
            path: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        if std::fs::read_dir(dir).map_err(io)?.next().is_some() {
            return Err(CliError::Usage(format!(
                "--workdir {}: the folder is not empty (the demo writes key folders and a database there)",
                dir.display()
            )));
        }
        // Key folders go inside: only the user may enter.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        Ok(Self::Kept(dir.to_path_buf()))
    }

    fn path(&self) -> &Path {
        match self {
            Self::Temporary(t) => t.path(),
            Self::Kept(p) => p,
        }
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs the networked demo.
pub fn run(args: DemoArgs) -> Result<(), CliError> {
    let a = &args;
    let start = Instant::now();
    // Refuse bad arguments before anything starts.
    crate::commands::resolve_params(&a.params, a.allow_insecure)?;
    let task = fedhe_tasks::by_name(&a.function, a.dim, 0)?;
    // The institutions evaluate with `fedhe objective value`: a benchmark function.
    fedhe_tasks::registry::benchmark(&a.function, a.dim)?;
    let fbo = settings(a)?;
    let work = Workdir::new(a.workdir.as_deref())?;
    let root = work.path();
    let token = hex::encode(fedhe_ring::Csprng::from_entropy().seed_bytes());
    let insecure: &[&str] = if a.allow_insecure {
        &["--allow-insecure"]
    } else {
        &[]
    };
    let say = |line: &str| say!("{line}");

    // 1. The server.
    let db = format!("sqlite://{}", root.join("fedhe.db").display());
    let (server, url) = start_server(&db, &token, a.allow_insecure, &root.join("server.log"))?;
    let mut children = Children(vec![("server".into(), server)]);
    say(&format!(
        "fedhe demo: {} institutions optimise {} (D = {}) with FBO-FedGP through a server on {url}.",
        a.members,
        task.name(),
        task.dim()
    ))?;
    say("Each institution is its own process with its own key folder; every summary it")?;
    say("shares is encrypted under a key no single institution holds, and only sums over")?;
    say("all institutions are ever decrypted.")?;
    for line in super::recipe::privacy_lines(&fbo) {
        say(&line)?;
    }
    say("")?;

    // 2. Identities (each institution's own key folder) and the ceremony.
    let names: Vec<String> = (1..=a.members).map(|i| format!("member-{i:02}")).collect();
    let keys: Vec<PathBuf> = names.iter().map(|n| root.join("keys").join(n)).collect();
    let mut members = Vec::with_capacity(names.len());
    for (name, dir) in names.iter().zip(&keys) {
        let dir = dir.display().to_string();
        let log = root.join(format!("{name}.identity.log"));
        let mut child = spawn(
            "fedhe ceremony identity",
            &["ceremony", "identity", "--keys", &dir],
            &[],
            &log,
        )?;
        let key = finish(&format!("{name}: ceremony identity"), &mut child, &log)?;
        members.push(MemberSpec {
            id: name.clone(),
            identity_key: key.trim().to_string(),
        });
    }
    let admin = Client::new(&url, Auth::Admin(token.clone().into()))?;
    // The administrator's signing key lives only in this process: it signs
    // the one study spec of the demo.
    let admin_identity = fedhe_api::Identity::generate();
    admin.create_ceremony(&CeremonySpec {
        id: "demo".into(),
        parameter_set: a.params.clone(),
        members,
        deadline_secs: 600,
        allow_insecure: a.allow_insecure,
        admin_key: admin_identity.public_key_hex(),
        threshold: None,
    })?;
    say(&format!(
        "Key ceremony 'demo' on {} : each institution commits to its public-key share,",
        a.params
    ))?;
    say("then reveals it; each checks the transcript and the collective key.")?;
    // Every child goes into the guard at once, so an error kills the rest.
    let mut joins = Vec::with_capacity(names.len());
    for (name, dir) in names.iter().zip(&keys) {
        let log = root.join(format!("{name}.join.log"));
        let dir = dir.display().to_string();
        let mut args = vec![
            "ceremony",
            "join",
            "--server",
            &url,
            "--ceremony",
            "demo",
            "--member",
            name,
            "--keys",
            &dir,
        ];
        args.extend_from_slice(insecure);
        children.0.push((
            name.clone(),
            spawn("fedhe ceremony join", &args, &[], &log)?,
        ));
        joins.push((name.clone(), children.0.len() - 1, log));
    }
    for (name, at, log) in joins {
        finish(
            &format!("{name}: ceremony join"),
            &mut children.0[at].1,
            &log,
        )?;
    }
    say(&format!("  all {} institutions joined.\n", a.members))?;

    // 3. The study: the public problem description and the FBO-FedGP settings.
    let lower = task.to_domain(&vec![0.0; task.dim()]);
    let upper = task.to_domain(&vec![1.0; task.dim()]);
    let config = StudyConfig {
        objective: task.name().to_string(),
        lower,
        upper,
        space: None,
        sense: task.sense().as_str().to_string(),
        optimum: Some(task.optimum()),
        seed: a.seed,
        settings: serde_json::to_value(&fbo).map_err(|e| CliError::Usage(e.to_string()))?,
    };
    let spec = StudySpec {
        id: "demo-study".into(),
        ceremony: "demo".into(),
        algorithm: fedhe_client::agent::ALGORITHM.into(),
        config: serde_json::to_value(&config).map_err(|e| CliError::Usage(e.to_string()))?,
        min_contributors: a.members as u32,
        round_timeout_secs: 600,
        decrypt_timeout_secs: 600,
        bound: fbo.channel_bound,
        // As the simulator's channel, so the members' results equal it.
        precision: fedhe_api::ValuePrecision::TwoLimb,
        round_cap: None,
    };
    admin.create_study(&fedhe_api::SignedStudySpec::sign(spec, &admin_identity))?;
    say(&format!(
        "Study 'demo-study': {} rounds; initialisation ({} random points each, secure sums of",
        a.rounds, fbo.initial_points
    ))?;
    say(&format!(
        "output {}; |S| = {} support points from public\n\
         information, which grow from the global posterior each round).",
        super::recipe::initial_sums(&fbo),
        fbo.support.size
    ))?;
    say("Each institution evaluates with its own command: `fedhe objective value`.\n")?;

    // 4. The agents.
    let objective = format!(
        "{} objective value --function {} --dim {}",
        shell_quote(&exe()?.display().to_string()),
        task.name(),
        task.dim()
    );
    let mut agents = Vec::with_capacity(names.len());
    for (name, dir) in names.iter().zip(&keys) {
        let log = root.join(format!("{name}.agent.log"));
        let dir = dir.display().to_string();
        let mut args = vec![
            "agent",
            "run",
            "--server",
            &url,
            "--keys",
            &dir,
            "--study",
            "demo-study",
            "--objective",
            &objective,
            "--json",
        ];
        args.extend_from_slice(insecure);
        children
            .0
            .push((name.clone(), spawn("fedhe agent run", &args, &[], &log)?));
        agents.push((name.clone(), children.0.len() - 1, log));
    }
    // Progress: the first institution's per-round lines, as they come.
    let progress_log = agents[0].2.clone();
    let mut shown = 0;
    let mut results = Vec::with_capacity(agents.len());
    let mut pending: Vec<_> = agents.into_iter().map(Some).collect();
    while results.len() < pending.len() {
        let text = std::fs::read_to_string(&progress_log).unwrap_or_default();
        for line in text.lines().skip(shown) {
            say(&format!("  {line}"))?;
            shown += 1;
        }
        for slot in pending.iter_mut() {
            let done = match slot {
                Some((_, at, _)) => children.0[*at]
                    .1
                    .try_wait()
                    .map_err(|e| CliError::Usage(e.to_string()))?
                    .is_some(),
                None => false,
            };
            if done {
                if let Some((name, at, log)) = slot.take() {
                    let out = finish(&format!("{name}: agent run"), &mut children.0[at].1, &log)?;
                    let line = out.lines().last().unwrap_or_default().to_string();
                    let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| {
                        CliError::Usage(format!("{name}: agent printed {line:?}: {e}"))
                    })?;
                    results.push(v);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let text = std::fs::read_to_string(&progress_log).unwrap_or_default();
    for line in text.lines().skip(shown) {
        say(&format!("  {line}"))?;
    }
    let field = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let best = results
        .iter()
        .map(|v| field(v, "best"))
        .fold(None, |b: Option<f64>, v| match b {
            Some(b) if !task.better(v, b) => Some(b),
            _ => Some(v),
        })
        .unwrap_or(f64::NAN);
    let bytes: u64 = results
        .iter()
        .map(|v| v["bytes_sent"].as_u64().unwrap_or(0))
        .sum();
    let rounds = results
        .iter()
        .map(|v| v["rounds"].as_u64().unwrap_or(0))
        .min()
        .unwrap_or(0);
    let aggregations = results
        .first()
        .map_or(0, |v| v["aggregations"].as_u64().unwrap_or(0));
    // Every institution's ledger composes the same releases; the largest is
    // what any of them spent.
    let spent = results
        .iter()
        .filter_map(|v| v["epsilon"].as_f64())
        .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e))));
    let seconds = start.elapsed().as_secs_f64();
    let centre = centre_value(&task)?;
    // Stops the server (the others have ended).
    drop(children);
    say(&format!(
        "\nBest value found by the federation: {best:.4}; optimum {:.4}; value at the domain centre {centre:.4}.",
        task.optimum()
    ))?;
    say(&format!(
        "{aggregations} secure sums; the institutions sent {:.1} KiB in all; {seconds:.1} s.",
        bytes as f64 / 1024.0
    ))?;
    say(&super::recipe::spent_line(spent))?;
    if let Workdir::Kept(dir) = &work {
        say(&format!(
            "The server's database and log, and each institution's key folder, journal and logs are in {}.",
            dir.display()
        ))?;
    }
    if a.json {
        say!(
            "{}",
            serde_json::json!({
                "rounds": rounds,
                "best": best,
                "optimum": task.optimum(),
                "centre_value": centre,
                "bytes_sent": bytes,
                "seconds": seconds,
                "privacy": fbo.privacy.label(),
                "epsilon": spent,
            })
        )?;
    }
    Ok(())
}
