//! The federated X-armed bandit (paper 003): Fed-PNE and DP-Fed-PNE, and the
//! Fed1-UCB baseline.
//!
//! Every client pulls the nodes the server broadcasts and contributes only its
//! local mean reward of each node to a `SecureSum`; the server learns their
//! average (the global mean of eq. (1)), never one client's mean. Local
//! objectives are perturbed copies of a shared task ([`PerturbedObjectives`])
//! or a task's own per-client objectives.
//!
//! HCT (Azar et al. 2014), the centralised baseline of §4, runs on the same
//! partition with the clients' rewards averaged through the channel every
//! round ([`hct`]).

mod fed1_ucb;
pub mod hct;
mod objectives;
mod params;
mod partition;
mod pne;

pub use fed1_ucb::{meshgrid, run as run_fed1_ucb};
pub use fedhe_tasks::offsets::PerturbedObjectives;
pub use objectives::Federation;
pub use params::{BanditMethod, FedPneParams, ValidFedPneParams};
pub use partition::{Node, Partition};
pub use pne::{run as run_fed_pne, run_detailed, Client, FedPneReport, Phase, Server};

use crate::{AlgorithmError, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_tasks::Task;

/// Runs `params.method()`.
pub fn run(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    match params.method() {
        BanditMethod::FedPne | BanditMethod::DpFedPne => {
            pne::run(task, params, channel, members, seed)
        }
        BanditMethod::Fed1Ucb => fed1_ucb::run(task, params, channel, members, seed),
        BanditMethod::Hct => {
            let session = pne::Session::new(task, params, channel, members, seed)?;
            hct::run(session, params, task.dim(), seed)
        }
    }
}
