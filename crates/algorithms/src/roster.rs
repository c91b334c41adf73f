//! Which members of a federation a process plays ([`Roster`]): every one in
//! the simulator, one in an institution's agent; and what a method reports
//! after each round ([`RoundProgress`]). Every method runs on a roster
//! ([`crate::method::FederatedMethod::run`]).

use crate::error::stream_seed;
use crate::AlgorithmError;
use fedhe_crypto::MemberId;
use fedhe_ring::Csprng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The 256-bit seed of one member's private randomness: its initial design,
/// acquisition search and every share of privacy noise it adds. An
/// institution's agent draws it from the operating system once per study
/// (`agent.json`), so the noise a release carries cannot be found by
/// searching seeds (issue 44: a 64-bit seed gave an adversary 2^64 guesses).
/// Its `Debug` prints no byte of it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PrivateSeed([u8; 32]);

impl PrivateSeed {
    /// The seed of 32 secret bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Its bytes, for the member's own state file only.
    pub fn expose_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The member's general private stream (ChaCha8 keyed by the whole seed).
    pub fn rng(&self) -> ChaCha8Rng {
        ChaCha8Rng::from_seed(self.0)
    }

    /// A cryptographic stream for noise, separated from the others by
    /// `domain` (tfhe's XOF seeding of [`Csprng::from_seed`]).
    pub fn csprng(&self, domain: [u8; 8]) -> Csprng {
        Csprng::from_seed(&self.0, domain)
    }
}

/// A 64-bit seed (the simulator's, tests', and a legacy `agent.json`'s)
/// expanded as `ChaCha8Rng::seed_from_u64` expands it, so that
/// [`PrivateSeed::rng`] is exactly the stream `seed_from_u64(seed)` gave:
/// seeded runs keep their results. Such a seed holds 64 bits of entropy only.
impl From<u64> for PrivateSeed {
    fn from(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed).get_seed())
    }
}

impl std::fmt::Debug for PrivateSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateSeed(..)")
    }
}

/// One member this process plays: its index in the federation's order and
/// the private seed of its own randomness (initial design, acquisition
/// search, observation and privacy noise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalMember {
    /// Its index in the federation's member list.
    pub index: usize,
    /// The seed of its private randomness.
    pub private_seed: PrivateSeed,
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
        private_seed: PrivateSeed,
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
pub fn simulated_private_seed(seed: u64, index: usize) -> PrivateSeed {
    PrivateSeed::from(stream_seed(seed, index as u64 + 1))
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

    /// A 64-bit seed gives exactly `seed_from_u64`'s stream (seeded runs
    /// keep their results); a 32-byte seed's every byte counts, in the
    /// general stream and in each noise domain; `Debug` shows no byte.
    #[test]
    fn private_seeds_use_all_their_bytes_and_keep_seeded_runs() {
        use rand::RngCore;
        for x in [0u64, 7, u64::MAX] {
            let mut ours = PrivateSeed::from(x).rng();
            let mut reference = ChaCha8Rng::seed_from_u64(x);
            for _ in 0..8 {
                assert_eq!(ours.next_u64(), reference.next_u64());
            }
        }
        let mut bytes = [0x5au8; 32];
        let a = PrivateSeed::from_bytes(bytes);
        bytes[31] ^= 1;
        let b = PrivateSeed::from_bytes(bytes);
        assert_ne!(a.rng().next_u64(), b.rng().next_u64());
        assert_ne!(
            a.csprng(*b"domain-1").next_u64(),
            b.csprng(*b"domain-1").next_u64()
        );
        assert_ne!(
            a.csprng(*b"domain-1").next_u64(),
            a.csprng(*b"domain-2").next_u64()
        );
        assert_eq!(format!("{a:?}"), "PrivateSeed(..)");
    }

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
        let one = Roster::member(&members, &members[1], PrivateSeed::from(99)).unwrap();
        assert_eq!(
            one.local(),
            &[LocalMember {
                index: 1,
                private_seed: PrivateSeed::from(99)
            }]
        );
        assert!(!one.is_simulation());
        let stranger = MemberId::new("z").unwrap();
        assert!(Roster::member(&members, &stranger, PrivateSeed::from(1)).is_err());
    }
}
