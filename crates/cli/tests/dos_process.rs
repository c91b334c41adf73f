//! Issue 13 against a real `fedhe serve` process on loopback: what a client
//! without credentials can do to the server (slow headers, an idle-connection
//! flood, unsigned uploads of 200 MiB), the member commands' refusal of plain
//! HTTP off loopback, and the logger and audit trail seen from outside.
//!
//! The 200 MiB test is slow and ignored by default; run it (and report the
//! server's memory) with the release binary:
//!
//! ```text
//! cargo test --release -p fedhe-cli --test dos_process -- --ignored --nocapture
//! ```

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod server_process;
use server_process::ServerProcess;

const ADMIN: &str = "dos-admin-token";

/// `fedhe serve` with `extra` lines of configuration, an SQLite file in
/// `dir`, listening on `listen`.
fn serve(dir: &std::path::Path, listen: &str, extra: &str, args: &[&str]) -> ServerProcess {
    let config = dir.join("server.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"{listen}\"\ndatabase_url = \"sqlite://{}\"\n{extra}\n",
            dir.join("fedhe.db").display()
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_fedhe"));
    command
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .args(args)
        .env("FEDHE_ADMIN_TOKEN", ADMIN)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::null());
    server_process::spawn(command)
}

fn addr(server: &ServerProcess) -> String {
    server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// `GET /healthz` on a new connection: the status line, within `limit`.
fn healthz(addr: &str, limit: Duration) -> Result<String, String> {
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr.parse().unwrap(), limit)
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(limit)).unwrap();
    stream
        .write_all(
            format!("GET /healthz HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        )
        .map_err(|e| format!("write: {e}"))?;
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let line = text.lines().next().unwrap_or("").to_string();
    if started.elapsed() > limit {
        return Err(format!("answered after {:?}: {line:?}", started.elapsed()));
    }
    Ok(line)
}

/// This process's (soft, hard) open-file limits, from `/proc/self/limits`.
fn open_files() -> (u64, u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut fields = line.split_whitespace().skip(3);
    let mut next = || fields.next().unwrap().parse::<u64>().unwrap_or(u64::MAX);
    (next(), next())
}

/// The soft open-file limit raised to `want` (at most the hard limit) with
/// `prlimit` on this process (the workspace forbids `unsafe`, so not
/// `setrlimit`); the limit now in force. The server inherits it.
fn raise_open_files(want: u64) -> u64 {
    let (soft, hard) = open_files();
    if soft < want {
        let to = want.min(hard);
        let status = Command::new("prlimit")
            .arg(format!("--pid={}", std::process::id()))
            .arg(format!("--nofile={to}:{hard}"))
            .status()
            .expect("prlimit (util-linux) runs");
        assert!(status.success(), "prlimit failed");
    }
    open_files().0
}

/// Attack (slowloris): open a connection and send a request head one byte
/// at a time, never finishing it. The server cuts it within its
/// `header_read_timeout_ms` (1 s here), however steadily bytes arrive.
#[test]
fn slow_headers_are_cut_within_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        dir.path(),
        "127.0.0.1:0",
        "header_read_timeout_ms = 1000",
        &[],
    );
    let mut stream = TcpStream::connect(addr(&server)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let started = Instant::now();
    let head = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: ";
    let mut cut = None;
    for i in 0..200 {
        if stream.write_all(&head[i % head.len()..][..1]).is_err() {
            cut = Some(started.elapsed());
            break;
        }
        let mut buf = [0u8; 512];
        match stream.read(&mut buf) {
            // Closed (0), or the 408 hyper may send before closing.
            Ok(_) => {
                cut = Some(started.elapsed());
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => {
                cut = Some(started.elapsed());
                break;
            }
        }
    }
    let cut = cut.expect("the slow head was still open after 20 s");
    println!("slow head cut after {cut:?} (header_read_timeout_ms = 1000)");
    assert!(
        cut >= Duration::from_millis(900) && cut < Duration::from_millis(2500),
        "cut after {cut:?}"
    );
    // The server still serves.
    assert!(healthz(&addr(&server), Duration::from_secs(1))
        .unwrap()
        .contains("200"));
}

/// Attack: open 2,000 connections and send nothing on them (more than the
/// server's connection cap, here 500, and than a default descriptor
/// limit). `/healthz` on a new connection still answers within 1 s: at the
/// cap a new connection closes the oldest idle one; and the server holds
/// no more than its cap.
#[test]
fn idle_connections_do_not_keep_healthz_out() {
    let limit = raise_open_files(8192);
    assert!(
        limit >= 2300,
        "need 2,300 descriptors, the hard limit allows {limit}"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        dir.path(),
        "127.0.0.1:0",
        "max_connections = 500\nheader_read_timeout_ms = 60000\nidle_timeout_ms = 60000",
        &[],
    );
    let addr = addr(&server);
    let mut idle = Vec::with_capacity(2000);
    for _ in 0..2000 {
        match TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(2)) {
            Ok(s) => idle.push(s),
            Err(e) => panic!("connection {} failed: {e}", idle.len()),
        }
    }
    // Let the server accept them all.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let line = healthz(&addr, Duration::from_secs(1)).expect("healthz within 1 s");
    let took = started.elapsed();
    println!("2,000 idle connections: /healthz answered {line:?} in {took:?}");
    assert!(line.contains("200"), "{line}");
    let fds = std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
        .unwrap()
        .count();
    println!("server descriptors with 2,000 idle connections open: {fds}");
    // The cap, the listener, the store's files and the runtime's own.
    assert!(fds < 500 + 100, "the server holds {fds} descriptors");
    drop(idle);
}

/// Attack: four unsigned 200 MiB uploads at once (the server's default
/// limit is 256 MiB). Refused from the headers: the server's resident
/// memory grows by less than 64 MiB while they are sent.
#[test]
#[ignore = "sends 800 MiB; run with --ignored (release) and --nocapture for the numbers"]
fn unsigned_200_mib_uploads_do_not_raise_the_server_memory() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), "127.0.0.1:0", "", &[]);
    let addr = addr(&server);
    let pid = server.child.id();
    // Warm up (the first requests allocate pools and buffers).
    for _ in 0..20 {
        healthz(&addr, Duration::from_secs(2)).unwrap();
    }
    let before = server_process::rss_kib(pid);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let peak = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(server_process::rss_kib(pid));
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let size: usize = 200 << 20;
    let started = Instant::now();
    let senders: Vec<_> = (0..4)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let path = format!("/v1/studies/s{i}/rounds/1/contributions/m{i}");
                let mut stream = TcpStream::connect(&addr).unwrap();
                stream
                    .set_write_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
                let head = format!(
                    "PUT {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/octet-stream\r\ncontent-length: {size}\r\n\r\n"
                );
                stream.write_all(head.as_bytes()).unwrap();
                let chunk = vec![0x5au8; 1 << 20];
                let mut sent = 0usize;
                while sent < size {
                    if stream.write_all(&chunk).is_err() {
                        break;
                    }
                    sent += chunk.len();
                }
                sent
            })
        })
        .collect();
    let sent: Vec<usize> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = peak.join().unwrap();
    let grew_mib = peak.saturating_sub(before) as f64 / 1024.0;
    println!(
        "RSS before {:.1} MiB, peak {:.1} MiB, growth {grew_mib:.1} MiB; bytes the server let each client send: {sent:?}; {:?}",
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        started.elapsed()
    );
    assert!(grew_mib < 64.0, "the server grew by {grew_mib:.1} MiB");
    assert!(healthz(&addr, Duration::from_secs(1))
        .unwrap()
        .contains("200"));
}

fn fedhe(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .env("FEDHE_ADMIN_TOKEN", ADMIN)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

/// Attack (on the network path): a member command pointed at a plain
/// `http://` server off loopback would send its study metadata and read
/// results in clear text. Refused unless `--allow-plain-http`; the
/// administrator's token is refused that way even with it.
#[test]
fn member_commands_refuse_plain_http_off_loopback() {
    let dir = tempfile::tempdir().unwrap();
    // 0.0.0.0 is not loopback, yet reachable from this host.
    let server = serve(
        dir.path(),
        "0.0.0.0:0",
        "",
        &["--allow-plain-http", "--allow-insecure"],
    );
    let port = server.url.rsplit(':').next().unwrap().to_string();
    let open = format!("http://0.0.0.0:{port}");
    let local = format!("http://127.0.0.1:{port}");
    let keys = dir.path().join("alpha");
    let keys = keys.to_str().unwrap();
    let out = fedhe(&["ceremony", "identity", "--keys", keys]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .expect("the identity's public key")
        .to_string();
    let member = format!("alpha={key}");
    let create = |url: &str, extra: &[&str]| {
        let mut args = vec![
            "ceremony",
            "create",
            "--server",
            url,
            "--admin-keys",
            keys,
            "--id",
            "c1",
            "--params",
            "toy-n1024",
            "--allow-insecure",
            "--member",
            &member,
        ];
        args.extend_from_slice(extra);
        fedhe(&args)
    };
    let refused = create(&open, &["--allow-plain-http"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("administrator token"));
    let created = create(&local, &[]);
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let status = |extra: &[&str]| {
        let mut args = vec![
            "ceremony",
            "status",
            "--server",
            &open,
            "--ceremony",
            "c1",
            "--member",
            "alpha",
            "--keys",
            keys,
        ];
        args.extend_from_slice(extra);
        fedhe(&args)
    };
    let refused = status(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--allow-plain-http") && stderr.contains("clear text"),
        "{stderr}"
    );
    let allowed = status(&["--allow-plain-http"]);
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert!(String::from_utf8_lossy(&allowed.stdout).contains("committing"));
}

/// The logger and the audit trail from outside: with `--log-format json` the
/// server writes one JSON object a line on stderr, every state change among
/// them with its action and ids, and never the administrator's token;
/// `fedhe audit` lists the study's trail.
#[test]
fn the_server_logs_json_and_fedhe_audit_lists_the_trail() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("server.log");
    let config = dir.path().join("server.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\ndatabase_url = \"sqlite://{}\"\n",
            dir.path().join("fedhe.db").display()
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_fedhe"));
    command
        .args([
            "--log-format",
            "json",
            "serve",
            "--allow-insecure",
            "--config",
        ])
        .arg(&config)
        .env("FEDHE_ADMIN_TOKEN", ADMIN)
        .env_remove("RUST_LOG")
        .stderr(std::fs::File::create(&log_path).unwrap());
    let server = server_process::spawn(command);
    let url = server.url.clone();
    let member = format!("alpha={}", fedhe_api::Identity::generate().public_key_hex());
    let other = format!("beta={}", fedhe_api::Identity::generate().public_key_hex());
    let admin_keys = dir.path().join("admin");
    let admin_keys = admin_keys.to_str().unwrap();
    assert!(fedhe(&["ceremony", "identity", "--keys", admin_keys])
        .status
        .success());
    let out = fedhe(&[
        "ceremony",
        "create",
        "--server",
        &url,
        "--admin-keys",
        admin_keys,
        "--id",
        "c1",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--member",
        &member,
        "--member",
        &other,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let create = |id: &str, min: &str, config: &str| {
        fedhe(&[
            "study",
            "create",
            "--server",
            &url,
            "--admin-keys",
            admin_keys,
            "--id",
            id,
            "--ceremony",
            "c1",
            "--min-contributors",
            min,
            "--config",
            config,
        ])
    };
    let out = create(
        "s1",
        "1",
        r#"{"objective": "x", "lower": [0], "upper": [1], "sense": "minimise", "seed": 1,
            "fbo_fedgp": {"members": 2, "rounds": 1, "initial_points": 1, "support_size": 2,
                          "privacy": {"mode": "noise-free"}}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A study needs only its space, sense and members (issue 46, item 4):
    // the rest comes from the private recipe, at ε = 4 per member (issue
    // 44), and `study show` prints every setting resolved.
    let out = create(
        "s2",
        "2",
        r#"{"lower": [0, 0], "upper": [1, 1], "sense": "minimise"}"#,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // It says what the study will spend, and what its summaries can carry.
    assert!(
        err.contains("private: ε = 4 at δ = 1e-6 per member by the study's end; its "),
        "{err}"
    );
    assert!(err.contains("global summaries of 152 values"), "{err}");
    assert!(err.contains("below 1 the noise outweighs"), "{err}");
    let out = fedhe(&["study", "show", "--server", &url, "--id", "s2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let settings = &shown["config"]["settings"];
    assert_eq!(settings["privacy"]["mode"], "dp", "{shown}");
    assert_eq!(settings["privacy"]["epsilon"], 4.0, "{shown}");
    assert_eq!(settings["members"], 2, "{shown}");
    assert_eq!(settings["rounds"], 15, "{shown}");
    assert_eq!(settings["support_size"], 16, "{shown}");
    assert_eq!(shown["config"]["objective"], "s2", "{shown}");
    assert!(shown["config"]["seed"].as_u64().is_some(), "{shown}");
    // A setting given replaces the recipe's; one the private recipe cannot
    // release is refused, naming it.
    let out = create(
        "s3",
        "2",
        r#"{"lower": [0], "upper": [1], "sense": "maximise", "settings": {"rounds": 3}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = fedhe(&["study", "show", "--server", &url, "--id", "s3"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["config"]["settings"]["rounds"], 3, "{shown}");
    let out = create(
        "s4",
        "2",
        r#"{"lower": [0], "upper": [1], "sense": "minimise",
            "settings": {"hyperparameters": "federated-mle"}}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hyperparameters"), "{err}");
    // Issue 46: `--space FILE` reads a TOML space into the signed config,
    // and `study show` prints it; a bad space is refused naming the field,
    // and no study is created.
    let space = dir.path().join("space.toml");
    std::fs::write(
        &space,
        r#"
[[params]]
name = "lr"
type = "float"
low = 1e-5
high = 0.1
log = true

[[params]]
name = "depth"
type = "int"
low = 2
high = 12

[[params]]
name = "kernel"
type = "categorical"
choices = ["rbf", "poly", "linear"]
"#,
    )
    .unwrap();
    let with_space = |id: &str, file: &std::path::Path, config: &str| {
        fedhe(&[
            "study",
            "create",
            "--server",
            &url,
            "--admin-keys",
            admin_keys,
            "--id",
            id,
            "--ceremony",
            "c1",
            "--min-contributors",
            "2",
            "--config",
            config,
            "--space",
            file.to_str().unwrap(),
        ])
    };
    let out = with_space("s5", &space, r#"{"sense": "minimise"}"#);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = fedhe(&["study", "show", "--server", &url, "--id", "s5"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let params = &shown["config"]["space"]["params"];
    assert_eq!(params[0]["name"], "lr", "{shown}");
    assert_eq!(params[0]["log"], true, "{shown}");
    assert_eq!(params[1]["type"], "int", "{shown}");
    assert_eq!(params[2]["choices"][1], "poly", "{shown}");
    assert!(shown["config"].get("lower").is_none(), "{shown}");
    // The categoricals' held length-scale is printed resolved, as the
    // recipe's settings are.
    assert_eq!(
        shown["config"]["settings"]["categorical_lengthscale"],
        fedhe_algorithms::fbo_fedgp::DEFAULT_CATEGORICAL_LENGTHSCALE,
        "{shown}"
    );
    let bad = dir.path().join("bad.json");
    for (id, text, expect) in [
        (
            "s6",
            r#"{"params": [{"name": "k", "type": "categorical", "choices": []}]}"#,
            "params[0] (k).choices",
        ),
        (
            "s7",
            r#"{"params": [{"name": "x", "type": "float", "low": 1, "high": 1}]}"#,
            "params[0] (x)",
        ),
        (
            "s8",
            r#"{"params": [{"name": "x", "type": "float", "low": 0, "high": 1, "log": true}]}"#,
            "params[0] (x)",
        ),
        (
            "s9",
            r#"{"params": [{"name": "n", "type": "int", "low": 3, "high": 3}]}"#,
            "params[0] (n)",
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        let out = with_space(id, &bad, r#"{"sense": "minimise"}"#);
        assert_eq!(out.status.code(), Some(2), "{id}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(expect) && err.contains("bad.json"),
            "{id}: {err}"
        );
        let out = fedhe(&["study", "show", "--server", &url, "--id", id]);
        assert!(!out.status.success(), "{id} was created");
    }
    let out = with_space(
        "s6",
        &space,
        r#"{"sense": "minimise", "lower": [0], "upper": [1]}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lower/upper"), "{err}");
    // An unsigned probe: refused, and the refusal logged.
    let probe = reqwest::blocking::get(format!("{url}/v1/studies/s1")).unwrap();
    assert_eq!(probe.status().as_u16(), 401);
    let out = fedhe(&["audit", "--server", &url, "--study", "s1", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log: fedhe_api::AuditLog = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(log.entries.len(), 1, "{log:?}");
    assert_eq!(log.entries[0].action, "study.created");
    let human = fedhe(&["audit", "--server", &url, "--study", "s1"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("study.created"));
    drop(server);
    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    let has = |action: &str| {
        lines
            .iter()
            .any(|l| l["fields"]["action"] == action && l["level"] == "INFO")
    };
    assert!(has("ceremony.created") && has("study.created"), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["status"] == 401 && l["span"]["path"] == "/v1/studies/s1"),
        "the refusal is logged with its path: {text}"
    );
    assert!(!text.contains(ADMIN), "the token is in the log");
}

/// Attack: a file name (or any input an error quotes) with terminal escape
/// sequences, given to `fedhe inspect`: the error line shows them escaped.
#[test]
fn cli_errors_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("obj\u{1b}[2J\u{1b}]0;pwned\u{7}.bin");
    std::fs::write(&evil, b"not a wire object \x1b[31m").unwrap();
    for path in [evil.clone(), dir.path().join("missing\u{1b}[31m")] {
        let out = Command::new(env!("CARGO_BIN_EXE_fedhe"))
            .arg("inspect")
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with("fedhe: error:"), "{stderr}");
        assert!(
            !stderr.trim_end().chars().any(char::is_control),
            "raw control characters in {stderr:?}"
        );
        assert!(stderr.contains("\\u{1b}["), "{stderr}");
    }
}

/// Ceremony `c1` (toy parameters) of alpha (with `alpha`'s identity key)
/// and beta, created by `fedhe ceremony create` with administrator keys
/// made under `dir`.
fn toy_ceremony_c1(url: &str, dir: &std::path::Path, alpha: &fedhe_api::Identity) {
    let admin_keys = dir.join("admin");
    let admin_keys = admin_keys.to_str().unwrap();
    assert!(fedhe(&["ceremony", "identity", "--keys", admin_keys])
        .status
        .success());
    let alpha = format!("alpha={}", alpha.public_key_hex());
    let beta = format!("beta={}", fedhe_api::Identity::generate().public_key_hex());
    let out = fedhe(&[
        "ceremony",
        "create",
        "--server",
        url,
        "--admin-keys",
        admin_keys,
        "--id",
        "c1",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--member",
        &alpha,
        "--member",
        &beta,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 45, finding 1 (its acceptance, measured): 1,030 connections send a
/// commitment to an existing ceremony and member under a forged signature,
/// declaring a 200,000-byte body and sending one byte every 3 s; every
/// connection the server closes is opened again at once. For 80 s
/// (`FEDHE_SLOW_BODY_SECS`) `/healthz` is probed every second and must
/// answer each time within 1 s, alpha's own commitment, sent half-way, is
/// taken, and the server's memory grows by less than 64 MiB. (Before the
/// signature was checked from the headers, `/healthz` was refused for the
/// whole attack.)
#[test]
#[ignore = "80 s with 1,030 connections; run with --ignored --nocapture for the numbers"]
fn forged_slow_bodies_on_1030_connections_do_not_hold_the_server() {
    let limit = raise_open_files(8192);
    assert!(
        limit >= 2300,
        "need 2,300 descriptors, the hard limit allows {limit}"
    );
    let secs: u64 = std::env::var("FEDHE_SLOW_BODY_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(80);
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), "127.0.0.1:0", "", &["--allow-insecure"]);
    let addr = addr(&server);
    let alpha = std::sync::Arc::new(fedhe_api::Identity::generate());
    toy_ceremony_c1(&server.url, dir.path(), &alpha);
    let pid = server.child.id();
    for _ in 0..20 {
        healthz(&addr, Duration::from_secs(2)).unwrap();
    }
    let before = server_process::rss_kib(pid);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let forged = {
        let forger = fedhe_api::Identity::generate();
        let ts = fedhe_api::signing::now_ms();
        let path = "/v1/ceremonies/c1/commitments/alpha";
        let sig = forger.sign_hex(b"not the request");
        format!(
            "PUT {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 200000\r\n\
             fedhe-member: alpha\r\nfedhe-timestamp: {ts}\r\nfedhe-nonce: {}\r\nfedhe-signature: {sig}\r\n\
             {}: {}\r\n\r\n",
            fedhe_api::signing::fresh_nonce(),
            fedhe_api::signing::HEADER_CONTENT_DIGEST,
            "00".repeat(32)
        )
    };
    let attackers: Vec<_> = (0..1030)
        .map(|_| {
            let (addr, stop, opened, head) =
                (addr.clone(), stop.clone(), opened.clone(), forged.clone());
            std::thread::Builder::new()
                .stack_size(64 << 10)
                .spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let Ok(mut s) = TcpStream::connect_timeout(
                            &addr.parse().unwrap(),
                            Duration::from_secs(2),
                        ) else {
                            std::thread::sleep(Duration::from_millis(100));
                            continue;
                        };
                        opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if s.write_all(head.as_bytes()).is_err() {
                            continue;
                        }
                        // One body byte every 3 s until the server hangs up.
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            if s.write_all(b"{").is_err() {
                                break;
                            }
                            std::thread::sleep(Duration::from_secs(3));
                        }
                    }
                })
                .unwrap()
        })
        .collect();
    let peak = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(server_process::rss_kib(pid));
                std::thread::sleep(Duration::from_millis(100));
            }
            peak
        })
    };
    let started = Instant::now();
    let mut probes = Vec::new();
    let mut honest = None;
    while started.elapsed() < Duration::from_secs(secs) {
        let t = Instant::now();
        probes.push((healthz(&addr, Duration::from_secs(1)), t.elapsed()));
        if honest.is_none() && started.elapsed() >= Duration::from_secs(secs / 2) {
            // Mid-attack, alpha itself commits to c1 (the member the forged
            // requests name): its signed upload is taken.
            let client = fedhe_client::Client::new(
                &server.url,
                fedhe_client::Auth::Member {
                    id: "alpha".into(),
                    identity: alpha.clone(),
                },
            )
            .unwrap();
            let t = Instant::now();
            let receipt = client.commit("c1", b"alpha's public-key share");
            honest = Some((receipt.map(|_| ()).map_err(|e| e.to_string()), t.elapsed()));
        }
        std::thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = peak.join().unwrap();
    drop(attackers);
    let grew_mib = peak.saturating_sub(before) as f64 / 1024.0;
    let answered = probes
        .iter()
        .filter(|(r, _)| r.as_ref().is_ok_and(|l| l.contains("200")))
        .count();
    let slowest = probes.iter().map(|(_, t)| *t).max().unwrap_or_default();
    let (honest, honest_took) = honest.expect("the attack ran past half its time");
    println!(
        "{secs} s, 1,030 attacker threads, {} connections opened: /healthz answered {answered} of {} probes within 1 s (slowest {slowest:?}); alpha's commitment mid-attack: {honest:?} in {honest_took:?}; RSS before {:.1} MiB, peak {:.1} MiB, growth {grew_mib:.1} MiB",
        opened.load(std::sync::atomic::Ordering::Relaxed),
        probes.len(),
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
    );
    assert_eq!(answered, probes.len(), "{probes:?}");
    assert_eq!(honest, Ok(()), "alpha's upload during the attack");
    assert!(grew_mib < 64.0, "the server grew by {grew_mib:.1} MiB");
}

/// The server's CPU time so far (user + system), seconds.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces), in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    let hz = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    ticks
        / String::from_utf8_lossy(&hz.stdout)
            .trim()
            .parse::<f64>()
            .unwrap()
}

/// Issue 45, item 2 (its acceptance, measured): 1,000 long polls open on a
/// ceremony that does not change (`max_polls_per_caller` raised to 1,100 for
/// the measurement, so that one member holds them all). The polls wake on
/// state changes only (and a 5 s safety net), not every 250 ms: the server's
/// CPU over 20 s of waiting must stay under 5 % of a core (the audit
/// measured 26-48 % when every poll woke four times a second).
#[test]
#[ignore = "1,000 connections for 30 s; run with --ignored --nocapture for the numbers"]
fn a_thousand_idle_long_polls_cost_the_server_little_cpu() {
    let limit = raise_open_files(8192);
    assert!(
        limit >= 1200,
        "need 1,200 descriptors, the hard limit allows {limit}"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        dir.path(),
        "127.0.0.1:0",
        "max_polls_per_caller = 1100\nmax_wait_secs = 120",
        &["--allow-insecure"],
    );
    let addr = addr(&server);
    let alpha = fedhe_api::Identity::generate();
    toy_ceremony_c1(&server.url, dir.path(), &alpha);
    let admin = fedhe_client::Client::new(
        &server.url,
        fedhe_client::Auth::Admin(ADMIN.to_string().into()),
    )
    .unwrap();
    let phase = admin.ceremony("c1").unwrap().phase.as_str().to_string();
    let path = format!("/v1/ceremonies/c1?wait=60&phase={phase}");
    let mut polls = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let ts = fedhe_api::signing::now_ms();
        let nonce = fedhe_api::signing::fresh_nonce();
        let sig = alpha.sign_hex(&fedhe_api::signing::request_message(
            "GET", &path, b"", ts, &nonce,
        ));
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(
            format!(
                "GET {path} HTTP/1.1\r\nhost: {addr}\r\nfedhe-member: alpha\r\nfedhe-timestamp: {ts}\r\n\
                 fedhe-nonce: {nonce}\r\nfedhe-signature: {sig}\r\n{}: {}\r\n\r\n",
                fedhe_api::signing::HEADER_CONTENT_DIGEST,
                fedhe_api::signing::digest_hex(b"")
            )
            .as_bytes(),
        )
        .unwrap();
        polls.push(s);
    }
    // Every poll admitted and waiting: none has answered.
    std::thread::sleep(Duration::from_secs(5));
    for s in &polls {
        s.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let read = (&*s).read(&mut byte);
        assert!(
            matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a poll answered early: {read:?}"
        );
    }
    let pid = server.child.id();
    let before = cpu_secs(pid);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(20));
    let used = cpu_secs(pid) - before;
    let share = used / started.elapsed().as_secs_f64();
    println!(
        "1,000 open long polls: the server used {used:.2} s of CPU in {:.1} s, {:.1} % of a core",
        started.elapsed().as_secs_f64(),
        100.0 * share
    );
    assert!(healthz(&addr, Duration::from_secs(1))
        .unwrap()
        .contains("200"));
    assert!(share < 0.05, "{:.1} % of a core", 100.0 * share);
    drop(polls);
}
