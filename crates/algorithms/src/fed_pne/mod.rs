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

use crate::roster::{Roster, RoundProgress};
use crate::{AlgorithmError, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_tasks::Task;

/// Runs `params.method()`, every client in this process.
pub fn run(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let roster = Roster::simulation(members, seed);
    run_roster(task, params, channel, &roster, seed, &mut |_| {})
}

/// `params.method()` for the clients of `roster` (every one in the
/// simulator, one in an agent), calling `observer` after every round.
pub fn run_roster(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundProgress),
) -> Result<RunResult, AlgorithmError> {
    match params.method() {
        BanditMethod::FedPne | BanditMethod::DpFedPne => {
            Ok(pne::run_phases(task, params, channel, roster, seed, observer)?.result)
        }
        BanditMethod::Fed1Ucb => {
            let mut session = pne::Session::new(task, params, channel, roster, seed, observer)?;
            fed1_ucb::run_session(task, params, &mut session, seed)?;
            Ok(session.finish("fed1-ucb", seed))
        }
        BanditMethod::Hct => {
            let session = pne::Session::new(task, params, channel, roster, seed, observer)?;
            hct::run(session, params, task.dim(), seed)
        }
    }
}
