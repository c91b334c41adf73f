//! The server over HTTPS on loopback with a self-signed certificate made in
//! the test: signed requests through `fedhe-client` trusting that
//! certificate, refusal of clients that do not trust it, the operational
//! routes, body limits and the slow-body deadline under TLS; the loading
//! errors of certificate and key files; and the plain-HTTP policy (loopback
//! only unless explicitly allowed).

use fedhe_api::{CeremonySpec, Identity, MemberSpec};
use fedhe_client::{Auth, Client, ClientError, RetryPolicy, Tls};
use fedhe_server::{start, tls_config, Config, StartError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ADMIN: &str = "tls-test-admin";

/// A self-signed certificate for 127.0.0.1, written as PEM files.
struct Cert {
    cert_pem: String,
    cert: PathBuf,
    key: PathBuf,
}

fn self_signed(dir: &Path, name: &str) -> Cert {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = dir.join(format!("{name}.crt"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    Cert {
        cert_pem: made.cert.pem(),
        cert,
        key,
    }
}

fn config(db: &Path, cert: &Cert) -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: format!("sqlite://{}", db.join("fedhe.db").display()),
        admin_token: ADMIN.into(),
        allow_insecure_params: true,
        max_json_bytes: 1 << 10,
        body_timeout_ms: 500,
        tls_cert: Some(cert.cert.clone()),
        tls_key: Some(cert.key.clone()),
        ..Config::default()
    }
}

/// A raw HTTP/1.1 exchange over TLS trusting `cert`: sends `head`, then
/// `body` (possibly shorter than its Content-Length), and reads the answer
/// until the server closes. Returns the status and how long it took.
fn raw_tls(addr: std::net::SocketAddr, cert: &Cert, head: &str, body: &[u8]) -> (u16, Duration) {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(cert.cert_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let started = Instant::now();
    tls.write_all(head.as_bytes()).unwrap();
    let _ = tls.write_all(body);
    let _ = tls.flush();
    let mut response = Vec::new();
    // The server may close without a TLS close_notify after its answer.
    let _ = tls.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP response: {text:?}"));
    (status, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_requests_over_tls_and_untrusting_clients_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cert = self_signed(dir.path(), "server");
    let other = self_signed(dir.path(), "other");
    let server = start(config(dir.path(), &cert)).await.unwrap();
    assert!(server.tls);
    let url = server.url();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let addr = server.addr;

    // Operational routes through an async reqwest client trusting the certificate.
    let trusting = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert.cert_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let health = trusting.get(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    // Plain HTTP to the TLS port gets no HTTP answer.
    assert!(reqwest::get(format!("http://{addr}/healthz"))
        .await
        .is_err());

    let cert_pem = cert.cert_pem.clone();
    let other_pem = other.cert_pem.clone();
    let url2 = url.clone();
    tokio::task::spawn_blocking(move || {
        let url = url2;
        let tls = Tls::ca_cert_pem(cert_pem.as_bytes()).unwrap();
        let admin = Client::with_tls(&url, Auth::Admin(ADMIN.to_string().into()), &tls).unwrap();
        let identity = Arc::new(Identity::generate());
        admin
            .create_ceremony(&CeremonySpec {
                id: "c1".into(),
                parameter_set: "toy-n1024".into(),
                members: vec![MemberSpec {
                    id: "alpha".into(),
                    identity_key: identity.public_key_hex(),
                }],
                deadline_secs: 600,
                allow_insecure: true,
                admin_key: Identity::generate().public_key_hex(),
                threshold: None,
            })
            .unwrap();
        let member = |tls: &Tls| {
            Client::with_tls(
                &url,
                Auth::Member {
                    id: "alpha".into(),
                    identity: identity.clone(),
                },
                tls,
            )
            .unwrap()
        };
        // A signed member request over TLS.
        let status = member(&tls).ceremony("c1").unwrap();
        assert_eq!(status.members.len(), 1);

        // Without the CA (built-in web roots) and with another CA: refused at
        // once (a certificate failure is not retried), saying what to do.
        for (what, client) in [
            ("no CA", member(&Tls::default())),
            (
                "another CA",
                member(&Tls::ca_cert_pem(other_pem.as_bytes()).unwrap()),
            ),
        ] {
            let started = Instant::now();
            let err = client
                .with_retry(RetryPolicy {
                    attempts: 8,
                    initial_backoff: Duration::from_secs(1),
                    max_backoff: Duration::from_secs(1),
                })
                .ceremony("c1")
                .unwrap_err();
            assert!(matches!(err, ClientError::Transport(_)), "{what}: {err}");
            let text = err.to_string();
            assert!(
                text.contains("not trusted") && text.contains("--ca-cert"),
                "{what}: {text}"
            );
            // The hint fits the case: no CA given, or a CA that did not issue it.
            assert_eq!(
                text.contains("issued by the --ca-cert"),
                what == "another CA",
                "{text}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{what}: retried"
            );
        }
        // A CA for a plain-HTTP URL, or a file that is not PEM: usage errors.
        let http_url = url.replacen("https://", "http://", 1);
        assert!(Client::with_tls(&http_url, Auth::Anonymous, &tls)
            .unwrap_err()
            .to_string()
            .contains("not https://"));
        assert!(Tls::ca_cert_pem(b"not a certificate").is_err());
    })
    .await
    .unwrap();

    // Body limits and the slow-body deadline hold under TLS.
    let oversized = vec![b'x'; 4 << 10];
    let head = format!(
        "POST /v1/ceremonies HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {ADMIN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        oversized.len()
    );
    let (status, _) = tokio::task::spawn_blocking({
        let cert = Cert {
            cert_pem: cert.cert_pem.clone(),
            cert: cert.cert.clone(),
            key: cert.key.clone(),
        };
        move || raw_tls(addr, &cert, &head, &oversized)
    })
    .await
    .unwrap();
    assert_eq!(status, 413);
    let head = format!(
        "POST /v1/ceremonies HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {ADMIN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\nconnection: close\r\n\r\n"
    );
    let (status, took) = tokio::task::spawn_blocking({
        let cert = Cert {
            cert_pem: cert.cert_pem.clone(),
            cert: cert.cert.clone(),
            key: cert.key.clone(),
        };
        move || raw_tls(addr, &cert, &head, b"{\"id\":")
    })
    .await
    .unwrap();
    assert_eq!(status, 408, "a stalled body ends with 408");
    assert!(took < Duration::from_secs(10), "{took:?}");

    server.shutdown().await.unwrap();
}

fn refusal(config: &Config) -> String {
    match tls_config(config) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn certificate_and_key_files_are_checked_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cert = self_signed(dir.path(), "server");
    let other = self_signed(dir.path(), "other");
    let base = config(dir.path(), &cert);
    assert!(tls_config(&base).unwrap().is_some());

    let missing = dir.path().join("missing.pem");
    let err = refusal(&Config {
        tls_cert: Some(missing.clone()),
        ..base.clone()
    });
    assert!(
        err.contains("TLS certificate") && err.contains("missing.pem"),
        "{err}"
    );
    let err = refusal(&Config {
        tls_key: Some(missing),
        ..base.clone()
    });
    assert!(
        err.contains("TLS private key") && err.contains("missing.pem"),
        "{err}"
    );

    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "hello, not a PEM file\n").unwrap();
    let err = refusal(&Config {
        tls_cert: Some(garbage.clone()),
        ..base.clone()
    });
    assert!(err.contains("no PEM certificate"), "{err}");
    let err = refusal(&Config {
        tls_key: Some(garbage),
        ..base.clone()
    });
    assert!(err.contains("no PEM private key"), "{err}");
    // The certificate where the key should be, and the other way round.
    let err = refusal(&Config {
        tls_key: Some(cert.cert.clone()),
        ..base.clone()
    });
    assert!(err.contains("no PEM private key"), "{err}");
    let err = refusal(&Config {
        tls_key: Some(other.key.clone()),
        ..base.clone()
    });
    assert!(err.contains("does not match the certificate"), "{err}");
    let key_pem = std::fs::read_to_string(&other.key).unwrap();
    assert!(!err.contains(key_pem.lines().nth(1).unwrap()), "{err}");
    let err = refusal(&Config {
        tls_key: None,
        ..base.clone()
    });
    assert!(err.contains("both --tls-cert and --tls-key"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_off_loopback_needs_the_explicit_flag() {
    let dir = tempfile::tempdir().unwrap();
    let plain = Config {
        listen: "0.0.0.0:0".parse().unwrap(),
        database_url: format!("sqlite://{}", dir.path().join("fedhe.db").display()),
        ..Config::default()
    };
    let err = match start(plain.clone()).await {
        Ok(_) => panic!("plain HTTP on 0.0.0.0 was accepted"),
        Err(e) => e,
    };
    assert!(matches!(err, StartError::Config(_)), "{err}");
    assert!(err.to_string().contains("--allow-plain-http"), "{err}");
    // Nothing was created before the refusal.
    assert!(!dir.path().join("fedhe.db").exists());

    let allowed = start(Config {
        allow_plain_http: true,
        ..plain
    })
    .await
    .unwrap();
    assert!(!allowed.tls);
    let port = allowed.addr.port();
    let health = reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    allowed.shutdown().await.unwrap();
}
