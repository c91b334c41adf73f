//! A `fedhe serve` child process for the tests that run the server as a
//! real process (its own module, so test files that do not use it carry no
//! dead code).

use std::io::BufRead;
use std::process::{Command, Stdio};

/// A running `fedhe serve`; killed when dropped.
pub struct ServerProcess {
    /// The child.
    pub child: std::process::Child,
    /// Its base URL, from the "listening on" line (`http://` or `https://`).
    pub url: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `command` (a `fedhe serve ...`) and returns once it printed the
/// line with the URL it listens on.
pub fn spawn(mut command: Command) -> ServerProcess {
    let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    ServerProcess { child, url }
}

/// `fedhe serve --allow-insecure` on a free loopback port, its store an
/// SQLite file in `root`, with administrator token `admin_token`. (Not
/// every test file that includes this module uses it.)
#[allow(dead_code)]
pub fn serve_sqlite(root: &std::path::Path, admin_token: &str) -> ServerProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fedhe"));
    command
        .args(["serve", "--allow-insecure", "--listen", "127.0.0.1:0"])
        .arg("--database-url")
        .arg(format!("sqlite://{}", root.join("fedhe.db").display()))
        .env("FEDHE_ADMIN_TOKEN", admin_token);
    spawn(command)
}

/// The resident memory (KiB) of process `pid`, from `/proc`.
#[allow(dead_code)]
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}
