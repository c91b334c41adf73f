//! Helpers for the tests that run the `fedhe` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `fedhe` with `args`.
pub fn fedhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .output()
        .expect("the fedhe binary runs")
}

/// Runs `fedhe` with `args` and a stdout whose reader closed before it
/// started (`fedhe … | head -0`), and asserts that it ends without a panic
/// and with success: its first write finds no reader (EPIPE, since Rust
/// ignores SIGPIPE), which ends the output quietly as Unix tools do.
#[allow(dead_code)] // not every test binary uses every helper
pub fn assert_quiet_on_closed_stdout(args: &[&str]) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(out.status.success(), "{args:?}: {:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
}

/// Writes `contents` to a file unique to this process and `name`; returns its path.
pub fn temp_file(name: &str, contents: &str) -> String {
    let mut p: PathBuf = std::env::temp_dir();
    p.push(format!("fedhe-cli-test-{}-{name}", std::process::id()));
    std::fs::write(&p, contents).unwrap();
    p.to_string_lossy().into_owned()
}

/// Asserts exit status 2 with one `fedhe: error:` line mentioning `needle`.
pub fn assert_fails_with(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr:?}");
}

/// Asserts success and parses stdout as JSON.
pub fn json_stdout(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// A toy-parameter ceremony `c` of `names` on the server at `url`: the
/// administrator (`admin_token`, signing key `admin`) creates it, then a
/// `fedhe ceremony join` process per member joins with the key folder
/// `keys(name)`; t-of-n when `threshold` is given.
#[allow(dead_code)] // the process tests' helper; the other binaries share this module
pub fn toy_ceremony(
    url: &str,
    admin_token: &str,
    admin: &fedhe_api::Identity,
    names: &[&str],
    threshold: Option<u32>,
    keys: &dyn Fn(&str) -> PathBuf,
) {
    use fedhe_client::{Auth, Client};
    let client = Client::new(url, Auth::Admin(admin_token.to_string().into())).unwrap();
    let members = names
        .iter()
        .map(|n| {
            let dir = keys(n).display().to_string();
            let out = fedhe(&["ceremony", "identity", "--keys", &dir]);
            assert!(out.status.success());
            fedhe_api::MemberSpec {
                id: n.to_string(),
                identity_key: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            }
        })
        .collect();
    client
        .create_ceremony(&fedhe_api::CeremonySpec {
            id: "c".into(),
            parameter_set: "toy-n1024".into(),
            members,
            deadline_secs: 600,
            allow_insecure: true,
            admin_key: admin.public_key_hex(),
            threshold,
        })
        .unwrap();
    let joins: Vec<std::process::Child> = names
        .iter()
        .map(|n| {
            Command::new(env!("CARGO_BIN_EXE_fedhe"))
                .args(["ceremony", "join", "--server", url, "--ceremony", "c"])
                .args(["--member", n, "--allow-insecure", "--keys"])
                .arg(keys(n))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut j in joins {
        assert!(j.wait().unwrap().success());
    }
}

/// Child processes killed (and reaped) on drop, so a failing test leaves no
/// server or agent behind.
#[allow(dead_code)] // the process tests' helper
pub struct Killed(pub Vec<std::process::Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
