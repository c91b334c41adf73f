//! TLS for `fedhe serve --tls-cert --tls-key` (rustls with the *ring*
//! provider, which builds with only a C compiler).
//!
//! The certificate chain and the private key are PEM files; each loading
//! failure names the file and what is wrong with it (missing, not PEM, no
//! certificate or key in it, a key that does not belong to the certificate)
//! and never quotes the key's content.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use zeroize::Zeroizing;

fn read(path: &Path, what: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    std::fs::read(path)
        .map(Zeroizing::new)
        .map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Builds the rustls server configuration from PEM files: `cert` holds the
/// certificate chain (the server's certificate first), `key` its private key
/// (PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, String> {
    let cert_pem = read(cert, "TLS certificate")?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("TLS certificate {}: not PEM: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "TLS certificate {}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it",
            cert.display()
        ));
    }
    let key_pem = read(key, "TLS private key")?;
    // The parser's message never holds key material, but it could name the
    // wrong section; say what was expected instead.
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => format!(
            "TLS private key {}: no PEM private key (-----BEGIN PRIVATE KEY-----) in it",
            key.display()
        ),
        e => format!(
            "TLS private key {}: not a PEM private key: {e}",
            key.display()
        ),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => format!(
                "TLS private key {} does not match the certificate in {}",
                key.display(),
                cert.display()
            ),
            e => format!(
                "TLS certificate {} with key {}: {e}",
                cert.display(),
                key.display()
            ),
        })?;
    // The router speaks HTTP/1.1 only (axum's http1 feature).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
