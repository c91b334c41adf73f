//! `fedhe demo`: the main job end to end. By default on loopback with real
//! processes: a coordinating server (`fedhe serve`, a temporary SQLite file),
//! one `fedhe ceremony join` and one `fedhe agent run` process per institution,
//! a key ceremony, then a short FBO-FedGP study on a CEC-2005 function whose
//! every aggregation runs through the real multiparty encryption, each
//! institution evaluating the function with `fedhe objective value` as its
//! own command. `--in-process` runs the same federation in one process.
mod in_process;
mod network;
mod recipe;

pub use recipe::DemoArgs;

use crate::error::CliError;

/// Runs the demo.
pub fn run(args: DemoArgs) -> Result<(), CliError> {
    if args.in_process {
        in_process::run(args)
    } else {
        network::run(args)
    }
}
