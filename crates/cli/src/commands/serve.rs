//! `fedhe serve`: the coordinating server (DESIGN.md §5).

use super::say;
use crate::error::CliError;
use clap::Args;
use fedhe_server::Config;
use std::path::PathBuf;

/// Arguments of `fedhe serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A TOML configuration (see `configs/server.toml`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Database URL: `sqlite://PATH` (default `sqlite://data/fedhe.db`) or
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (several replicas may
    /// share one PostgreSQL database).
    #[arg(long)]
    database_url: Option<String>,
    /// Address to listen on (plain HTTP: loopback only, unless --allow-plain-http).
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    /// Serve HTTPS with this PEM certificate chain (the server's certificate first).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve plain HTTP on a non-loopback address (only behind a
    /// TLS-terminating proxy: tokens and bodies cross the network in the clear).
    #[arg(long, conflicts_with = "tls_cert")]
    allow_plain_http: bool,
    /// Allow ceremonies on insecure (test-only) parameter sets.
    #[arg(long)]
    allow_insecure: bool,
}

/// The environment variable holding the administrator's token (overrides the file).
pub const ADMIN_TOKEN_ENV: &str = "FEDHE_ADMIN_TOKEN";

/// Loads the configuration: file, then environment, then flags.
pub fn load_config(args: &ServeArgs) -> Result<Config, CliError> {
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
                path: path.display().to_string(),
                source,
            })?;
            toml::from_str(&text).map_err(|e| CliError::Invalid {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?
        }
        None => Config::default(),
    };
    if let Ok(token) = std::env::var(ADMIN_TOKEN_ENV) {
        config.admin_token = token;
    }
    if let Some(url) = &args.database_url {
        config.database_url = url.clone();
    }
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if args.allow_insecure {
        config.allow_insecure_params = true;
    }
    if let Some(cert) = &args.tls_cert {
        config.tls_cert = Some(cert.clone());
    }
    if let Some(key) = &args.tls_key {
        config.tls_key = Some(key.clone());
    }
    if args.allow_plain_http {
        config.allow_plain_http = true;
    }
    Ok(config)
}

/// Runs the server until SIGINT or SIGTERM.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    let config = load_config(&args)?;
    if config.admin_token.is_empty() {
        eprintln!("fedhe serve: no administrator token (set {ADMIN_TOKEN_ENV} or admin_token); admin actions are disabled");
    }
    let plain = config.tls_cert.is_none() && config.tls_key.is_none();
    if plain && config.allow_plain_http && !config.listen.ip().is_loopback() {
        eprintln!(
            "fedhe serve: WARNING: plain HTTP on the non-loopback address {}: the administrator token and every request cross the network unencrypted; use --tls-cert and --tls-key unless a TLS-terminating proxy protects this network",
            config.listen
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        // Printed and logged without its password.
        let database = fedhe_server::store::redact(&config.database_url);
        let running = fedhe_server::start(config)
            .await
            .map_err(|e| CliError::Usage(e.to_string()))?;
        // One line a supervisor (or a test) can parse.
        say!(
            "fedhe serve: listening on {} (store {database})",
            running.url()
        )?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| CliError::Usage(format!("signal handler: {e}")))?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        eprintln!("fedhe serve: shutting down");
        running
            .shutdown()
            .await
            .map_err(|e| CliError::Usage(format!("shutdown: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_configuration_parses_with_and_without_tls() {
        let text = include_str!("../../../../configs/server.toml");
        let plain: Config = toml::from_str(text).unwrap();
        assert!(plain.tls_cert.is_none() && !plain.allow_plain_http);
        let tls: Config = toml::from_str(
            &text
                .replace("# tls_cert", "tls_cert")
                .replace("# tls_key", "tls_key"),
        )
        .unwrap();
        assert_eq!(
            tls.tls_cert.as_deref(),
            Some(std::path::Path::new("/etc/fedhe/cert.pem"))
        );
        assert!(tls.tls_key.is_some());
    }
}
