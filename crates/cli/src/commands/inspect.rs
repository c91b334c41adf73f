//! `fedhe inspect FILE`: decode any wire object and describe it.

use super::print_stdout;
use crate::error::CliError;
use clap::Args;
use fedhe_crypto::text::escape_controls;
use std::path::PathBuf;

/// Arguments of `fedhe inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The file holding one wire object.
    file: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Decodes the file fully; any malformation is an error (exit status 2).
pub fn run(args: InspectArgs) -> Result<(), CliError> {
    let path = args.file.display().to_string();
    let bytes = std::fs::read(&args.file).map_err(|source| CliError::Io {
        path: path.clone(),
        source,
    })?;
    let d = fedhe_crypto::wire::inspect(&bytes).map_err(|e| CliError::Invalid {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if args.json {
        return print_stdout(&serde_json::to_string(&d).unwrap_or_default());
    }
    // The path and the file's fields may hold control characters.
    let path = escape_controls(&path);
    let security = match d.security_bits {
        0 => "INSECURE, tests only".to_string(),
        b => format!("{b}-bit security"),
    };
    let mut text = format!("{path}: {} ({} bytes)", d.kind, d.bytes);
    text.push_str(&format!("\n  parameter set  {} ({security})", d.params));
    text.push_str(&format!("\n  format         version {}", d.format_version));
    text.push_str(&format!("\n  fingerprint    {}", d.fingerprint));
    for (k, v) in &d.details {
        text.push_str(&format!("\n  {k:<14} {}", escape_controls(&v.to_string())));
    }
    print_stdout(&text)
}
