//! The key ceremony through the `fedhe` command against `fedhe serve` over
//! HTTPS on loopback (a self-signed certificate made here, trusted with
//! `--ca-cert`), with the members' key files encrypted by a passphrase: one
//! member gives it with `--passphrase-file`, the other through
//! `FEDHE_PASSPHRASE`. Also: the refusals a user meets (no passphrase, a wrong
//! one, an untrusted certificate, plain HTTP off loopback).

use fedhe_client::keys::{self, KeyDir, Passphrase};
use fedhe_client::member::params_by_name;
use fedhe_client::MemberSession;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod server_process;
use server_process::ServerProcess;

const ADMIN: &str = "ceremony-cli-admin";
const PASSPHRASE: &str = "a long passphrase for alpha";

/// A `fedhe` command with no passphrase or admin token from this process's
/// environment (each test says what it gives).
fn fedhe() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fedhe"));
    c.env_remove(keys::PASSPHRASE_ENV)
        .env_remove("FEDHE_ADMIN_TOKEN");
    c
}

fn run(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().unwrap()
}

fn ok(c: &mut Command) -> String {
    let out = run(c);
    assert!(
        out.status.success(),
        "{c:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(c: &mut Command) -> String {
    let out = run(c);
    assert!(!out.status.success(), "{c:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

fn serve_tls(root: &Path, cert: &Path, key: &Path) -> ServerProcess {
    let mut command = fedhe();
    command
        .args(["serve", "--allow-insecure", "--listen", "127.0.0.1:0"])
        .arg("--database-url")
        .arg(format!("sqlite://{}", root.join("fedhe.db").display()))
        .arg("--tls-cert")
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .env("FEDHE_ADMIN_TOKEN", ADMIN);
    let server = server_process::spawn(command);
    assert!(server.url.starts_with("https://"), "{}", server.url);
    server
}

#[test]
fn a_ceremony_over_https_with_passphrase_encrypted_key_files() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = root.join("server.crt");
    let key = root.join("server.key");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let server = serve_tls(root, &cert, &key);
    let url = server.url.as_str();

    let pass_file = root.join("alpha.pass");
    std::fs::write(&pass_file, format!("{PASSPHRASE}\n")).unwrap();
    std::fs::set_permissions(&pass_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let wrong_file = root.join("wrong.pass");
    std::fs::write(&wrong_file, "not the passphrase\n").unwrap();
    std::fs::set_permissions(&wrong_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let alpha = root.join("keys/alpha");
    let beta = root.join("keys/beta");
    let beta_pass = "beta's passphrase, from the environment";

    let alpha_key = ok(fedhe()
        .args(["ceremony", "identity", "--keys"])
        .arg(&alpha)
        .arg("--passphrase-file")
        .arg(&pass_file));
    let beta_key = ok(fedhe()
        .args(["ceremony", "identity", "--keys"])
        .arg(&beta)
        .env(keys::PASSPHRASE_ENV, beta_pass));
    let admin_keys = root.join("keys/admin");
    ok(fedhe()
        .args(["ceremony", "identity", "--keys"])
        .arg(&admin_keys));
    ok(fedhe()
        .args(["ceremony", "create", "--server", url, "--ca-cert"])
        .arg(&cert)
        .arg("--admin-keys")
        .arg(&admin_keys)
        .args(["--id", "c1", "--params", "toy-n1024", "--allow-insecure"])
        .args(["--member", &format!("alpha={}", alpha_key.trim())])
        .args(["--member", &format!("beta={}", beta_key.trim())])
        .env("FEDHE_ADMIN_TOKEN", ADMIN));

    let seat = |dir: &Path, member: &str, verb: &str| {
        let mut c = fedhe();
        c.args(["ceremony", verb, "--server", url, "--ca-cert"])
            .arg(&cert)
            .args(["--ceremony", "c1", "--member", member, "--allow-insecure"])
            .arg("--keys")
            .arg(dir);
        c
    };

    // The refusals, before anything is written.
    let err = fails(&mut seat(&alpha, "alpha", "join"));
    assert!(
        err.contains("this key file is encrypted; give --passphrase-file or FEDHE_PASSPHRASE"),
        "{err}"
    );
    let err = fails(
        seat(&alpha, "alpha", "join")
            .arg("--passphrase-file")
            .arg(&wrong_file),
    );
    assert!(err.contains("wrong passphrase"), "{err}");
    assert!(!err.contains("not the passphrase"), "{err}");
    let err = fails(
        fedhe()
            .args(["ceremony", "status", "--server", url, "--ceremony", "c1"])
            .args(["--member", "alpha", "--keys"])
            .arg(&alpha)
            .arg("--passphrase-file")
            .arg(&pass_file),
    );
    assert!(
        err.contains("not trusted") && err.contains("--ca-cert"),
        "{err}"
    );
    assert!(!alpha.join(keys::SECRET_SHARE_FILE).exists());

    // Both join at once (each waits for the other's commitment).
    let mut alpha_join = seat(&alpha, "alpha", "join");
    alpha_join.arg("--passphrase-file").arg(&pass_file);
    let mut beta_join = seat(&beta, "beta", "join");
    beta_join.env(keys::PASSPHRASE_ENV, beta_pass);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| ok(&mut alpha_join));
        let b = s.spawn(|| ok(&mut beta_join));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(
        a.contains("alpha joined ceremony c1") && a.contains("(encrypted)"),
        "{a}"
    );
    assert!(b.contains("beta joined ceremony c1"), "{b}");
    let verified = ok(seat(&alpha, "alpha", "verify")
        .arg("--passphrase-file")
        .arg(&pass_file));
    assert!(
        verified.contains("ceremony c1 verified: 2 members"),
        "{verified}"
    );

    // The public key shown again, from the sealed identity; --show never
    // makes one.
    let shown = ok(fedhe()
        .args(["ceremony", "identity", "--show", "--keys"])
        .arg(&alpha)
        .arg("--passphrase-file")
        .arg(&pass_file));
    assert_eq!(shown.trim(), alpha_key.trim());
    let nobody = root.join("keys/nobody");
    let err = fails(
        fedhe()
            .args(["ceremony", "identity", "--show", "--keys"])
            .arg(&nobody),
    );
    assert!(err.contains("holds no identity"), "{err}");
    assert!(!nobody.exists(), "--show made a folder");
    // The administrator's view of the ceremony: the token alone.
    let admin_view = ok(fedhe()
        .args([
            "ceremony",
            "status",
            "--server",
            url,
            "--ceremony",
            "c1",
            "--ca-cert",
        ])
        .arg(&cert)
        .env("FEDHE_ADMIN_TOKEN", ADMIN));
    let status: serde_json::Value = serde_json::from_str(&admin_view).unwrap();
    assert_eq!(status["phase"], "complete", "{admin_view}");
    assert_eq!(status["revealed"], serde_json::json!(["alpha", "beta"]));
    let err = fails(
        fedhe()
            .args([
                "ceremony",
                "status",
                "--server",
                url,
                "--ceremony",
                "c1",
                "--ca-cert",
            ])
            .arg(&cert)
            .env("FEDHE_ADMIN_TOKEN", "not-the-token"),
    );
    assert!(err.contains("401") || err.contains("unauthorized"), "{err}");

    // On disk: the secret files are sealed, private, and hold no plaintext.
    let params = params_by_name("toy-n1024", true).unwrap();
    for (dir, passphrase) in [
        (&alpha, Passphrase::from_file(&pass_file).unwrap()),
        (&beta, Passphrase::new(beta_pass).unwrap()),
    ] {
        for name in [keys::IDENTITY_FILE, keys::SECRET_SHARE_FILE] {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                bytes.starts_with(b"FEDHESEC"),
                "{} is not sealed",
                path.display()
            );
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", path.display());
        }
        let keys = KeyDir::open(dir).unwrap();
        let err = MemberSession::load_secret(&keys, &params).unwrap_err();
        assert!(
            err.to_string().contains("this key file is encrypted"),
            "{err}"
        );
        let keys = keys.with_passphrase(Some(passphrase));
        let share = MemberSession::load_secret(&keys, &params).unwrap();
        let plain = share.to_key_bytes(&params);
        let sealed = std::fs::read(dir.join(keys::SECRET_SHARE_FILE)).unwrap();
        assert!(
            !sealed
                .windows(32)
                .any(|w| plain.windows(32).any(|p| p == w)),
            "the sealed share holds a run of its plaintext"
        );
    }
}

#[test]
fn serve_refuses_plain_http_off_loopback_without_the_flag() {
    let root = tempfile::tempdir().unwrap();
    let err = fails(
        fedhe()
            .args(["serve", "--listen", "0.0.0.0:0", "--database-url"])
            .arg(format!(
                "sqlite://{}",
                root.path().join("fedhe.db").display()
            )),
    );
    assert!(
        err.contains("refusing plain HTTP") && err.contains("--allow-plain-http"),
        "{err}"
    );
    let err = fails(
        fedhe()
            .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
            .arg(root.path().join("missing.pem")),
    );
    assert!(err.contains("--tls-key"), "{err}");
}
