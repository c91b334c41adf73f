//! `/metrics`: Prometheus text format, written by hand (a few counters do not
//! need a metrics framework).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The server's counters.
#[derive(Default, Debug)]
pub struct Metrics {
    responses: Mutex<BTreeMap<u16, u64>>,
    upload_bytes: AtomicU64,
    transitions: AtomicU64,
}

impl Metrics {
    /// Counts a response.
    pub fn response(&self, status: u16) {
        let mut map = self.responses.lock().unwrap_or_else(|p| p.into_inner());
        *map.entry(status).or_default() += 1;
    }

    /// Counts stored upload bytes.
    pub fn uploaded(&self, bytes: usize) {
        self.upload_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Counts a round state transition.
    pub fn transition(&self) {
        self.transitions.fetch_add(1, Ordering::Relaxed);
    }

    /// The text exposition, with the round counts by state from the store.
    pub fn render(&self, rounds: &[(String, i64)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP fedhe_http_responses_total HTTP responses by status.\n");
        out.push_str("# TYPE fedhe_http_responses_total counter\n");
        for (status, n) in self
            .responses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(out, "fedhe_http_responses_total{{status=\"{status}\"}} {n}");
        }
        out.push_str("# HELP fedhe_upload_bytes_total Bytes of uploads stored.\n");
        out.push_str("# TYPE fedhe_upload_bytes_total counter\n");
        let _ = writeln!(
            out,
            "fedhe_upload_bytes_total {}",
            self.upload_bytes.load(Ordering::Relaxed)
        );
        out.push_str("# HELP fedhe_round_transitions_total Round state transitions made.\n");
        out.push_str("# TYPE fedhe_round_transitions_total counter\n");
        let _ = writeln!(
            out,
            "fedhe_round_transitions_total {}",
            self.transitions.load(Ordering::Relaxed)
        );
        out.push_str("# HELP fedhe_rounds Rounds in the store by state.\n");
        out.push_str("# TYPE fedhe_rounds gauge\n");
        for (state, n) in rounds {
            let _ = writeln!(out, "fedhe_rounds{{state=\"{state}\"}} {n}");
        }
        if let Some((rss, peak)) = memory_kib() {
            out.push_str("# HELP fedhe_process_resident_bytes Resident memory.\n");
            out.push_str("# TYPE fedhe_process_resident_bytes gauge\n");
            let _ = writeln!(out, "fedhe_process_resident_bytes {}", rss * 1024);
            out.push_str("# HELP fedhe_process_peak_resident_bytes Peak resident memory.\n");
            out.push_str("# TYPE fedhe_process_peak_resident_bytes gauge\n");
            let _ = writeln!(out, "fedhe_process_peak_resident_bytes {}", peak * 1024);
        }
        out
    }
}

/// (VmRSS, VmHWM) in KiB from `/proc/self/status` (Linux only).
fn memory_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
