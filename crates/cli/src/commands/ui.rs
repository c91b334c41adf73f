//! `fedhe ui`: a link to the server's live study page (`/ui`) for a browser
//! (administrator; token from FEDHE_ADMIN_TOKEN). The link works for five
//! minutes and opens a twelve-hour session (`fedhe_server::ui`).

use super::ceremony::{admin_client, ServerArgs};
use super::say;
use crate::error::CliError;
use clap::Args;

/// Arguments of `fedhe ui`.
#[derive(Args, Debug)]
pub struct UiArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Open this study's page (default: the list of ceremonies and studies).
    #[arg(long)]
    study: Option<String>,
}

/// Prints the link.
pub fn run(args: UiArgs) -> Result<(), CliError> {
    if let Some(s) = &args.study {
        fedhe_crypto::MemberId::new(s.clone()).map_err(|_| {
            CliError::Usage(format!(
                "--study {}: not 1-64 characters of [A-Za-z0-9._-]",
                fedhe_crypto::text::quote(s, 80)
            ))
        })?;
    }
    let ticket = admin_client(&args.server)?.ui_ticket()?;
    let next = args
        .study
        .map(|s| format!("&next=/ui/studies/{s}"))
        .unwrap_or_default();
    say!(
        "{}{}{next}",
        args.server.server.trim_end_matches('/'),
        ticket.path
    )?;
    Ok(())
}
