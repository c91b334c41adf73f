//! Child processes of this binary on loopback (`fedhe demo`, `fedhe bench
//! service`): spawned with their stderr in a log, the server's URL read from
//! its first line, every child killed on drop.

use crate::error::CliError;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Children killed on drop.
pub(crate) struct Children(pub(crate) Vec<(String, Child)>);

impl Drop for Children {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub(crate) fn exe() -> Result<PathBuf, CliError> {
    std::env::current_exe()
        .map_err(|e| CliError::Usage(format!("cannot find the fedhe binary: {e}")))
}

pub(crate) fn spawn(
    what: &str,
    args: &[&str],
    env: &[(&str, &str)],
    log: &Path,
) -> Result<Child, CliError> {
    let stderr = std::fs::File::create(log).map_err(|source| CliError::Io {
        path: log.display().to_string(),
        source,
    })?;
    let mut cmd = Command::new(exe()?);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn()
        .map_err(|e| CliError::Usage(format!("cannot start {what}: {e}")))
}

/// Starts `fedhe serve` on a free loopback port with its store at
/// `database_url`, its log in `log`; returns the child (kill it when done) and
/// the URL it listens on.
pub(crate) fn start_server(
    database_url: &str,
    admin_token: &str,
    allow_insecure: bool,
    log: &Path,
) -> Result<(Child, String), CliError> {
    let mut args = vec![
        "serve",
        "--database-url",
        database_url,
        "--listen",
        "127.0.0.1:0",
    ];
    if allow_insecure {
        args.push("--allow-insecure");
    }
    let mut server = spawn(
        "the server",
        &args,
        &[("FEDHE_ADMIN_TOKEN", admin_token)],
        log,
    )?;
    let mut first = String::new();
    if let Some(out) = server.stdout.as_mut() {
        let _ = BufReader::new(out).read_line(&mut first);
    }
    match first.split_whitespace().find(|w| w.starts_with("http://")) {
        Some(url) => Ok((server, url.to_string())),
        None => {
            let _ = server.kill();
            let _ = server.wait();
            Err(CliError::Usage(format!(
                "the server did not start:\n{}",
                tail(log)
            )))
        }
    }
}

/// The last lines of a child's log, for an error message.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Waits for a child and returns its stdout; a failure carries its log's tail.
pub(crate) fn finish(what: &str, child: &mut Child, log: &Path) -> Result<String, CliError> {
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    let status = child
        .wait()
        .map_err(|e| CliError::Usage(format!("{what}: {e}")))?;
    if !status.success() {
        return Err(CliError::Usage(format!(
            "{what} failed ({status}):\n{}",
            tail(log)
        )));
    }
    Ok(out)
}
