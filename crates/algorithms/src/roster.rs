//! Which members of a federation a process plays ([`Roster`]): every one in
//! the simulator, one in an institution's agent; and what a method reports
//! after each round ([`RoundProgress`]). Every method runs on a roster
//! ([`crate::method::FederatedMethod::run`]).

use crate::error::stream_seed;
use crate::AlgorithmError;
use fedhe_crypto::MemberId;

/// One member this process plays: its index in the federation's order and
/// the private seed of its own randomness (initial design, acquisition
/// search, observation and privacy noise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalMember {
    /// Its index in the federation's member list.
    pub index: usize,
    /// The seed of its private randomness.
    pub private_seed: u64,
}

/// Who takes part in a federation and which of them this process plays.
#[derive(Debug, Clone)]
pub struct Roster<'m> {
    members: &'m [MemberId],
    local: Vec<LocalMember>,
    simulation: bool,
}

impl<'m> Roster<'m> {
    /// Every member in this process (the simulator): member `i`'s private
    /// seed is [`simulated_private_seed`]`(seed, i)`. Simulation-only
    /// diagnostics (regret against the task's optimum, surrogate accuracy)
    /// are computed.
    pub fn simulation(members: &'m [MemberId], seed: u64) -> Self {
        Self {
            members,
            local: (0..members.len())
                .map(|index| LocalMember {
                    index,
                    private_seed: simulated_private_seed(seed, index),
                })
                .collect(),
            simulation: true,
        }
    }

    /// Only `me` in this process (an institution's agent); nothing is
    /// evaluated outside its own objective.
    pub fn member(
        members: &'m [MemberId],
        me: &MemberId,
        private_seed: u64,
    ) -> Result<Self, AlgorithmError> {
        let index = members.iter().position(|m| m == me).ok_or_else(|| {
            crate::error::config(
                "members",
                format!("{me} is not one of the federation's members"),
            )
        })?;
        Ok(Self {
            members,
            local: vec![LocalMember {
                index,
                private_seed,
            }],
            simulation: false,
        })
    }

    /// Every member, in the federation's order.
    pub fn members(&self) -> &'m [MemberId] {
        self.members
    }

    /// The members this process plays, in index order.
    pub fn local(&self) -> &[LocalMember] {
        &self.local
    }

    /// Whether every member runs here (the simulator), so diagnostics that
    /// evaluate other members' objectives may run.
    pub fn is_simulation(&self) -> bool {
        self.simulation
    }
}

/// The private seed the simulator gives member `index` of a federation
/// seeded with `seed` (an agent given it reproduces that member's run).
pub fn simulated_private_seed(seed: u64, index: usize) -> u64 {
    stream_seed(seed, index as u64 + 1)
}

/// What a method reports after each round, for progress displays and
/// `fedhe agent status`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundProgress {
    /// The round (from 1).
    pub round: usize,
    /// The best noise-free value so far over the members this process plays
    /// (for the Thompson-sampling family: their mean score, see
    /// [`crate::rff_agent::RffAgent::score`]).
    pub best_so_far: f64,
    /// The privacy loss ε spent so far, for differentially private methods.
    pub epsilon: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_roster_plays_one_member_and_refuses_a_stranger() {
        let members: Vec<MemberId> = ["a", "b", "c"]
            .iter()
            .map(|n| MemberId::new(*n).unwrap())
            .collect();
        let sim = Roster::simulation(&members, 7);
        assert_eq!(sim.local().len(), 3);
        assert_eq!(sim.local()[2].private_seed, simulated_private_seed(7, 2));
        assert_ne!(simulated_private_seed(7, 0), simulated_private_seed(7, 1));
        let one = Roster::member(&members, &members[1], 99).unwrap();
        assert_eq!(
            one.local(),
            &[LocalMember {
                index: 1,
                private_seed: 99
            }]
        );
        assert!(!one.is_simulation());
        let stranger = MemberId::new("z").unwrap();
        assert!(Roster::member(&members, &stranger, 1).is_err());
    }
}
