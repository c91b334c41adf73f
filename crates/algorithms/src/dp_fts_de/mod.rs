//! DP-FTS-DE (paper 000, Algs. 1-2): differentially private federated Thompson
//! sampling with distributed exploration, over the encrypted-sum channel.
//!
//! Every round `t` each agent draws `ω_{n,t} ~ N(ν, λΣ⁻¹)` from its RFF
//! posterior (eq. 2), clips it to `S/√P` and weights it by the public softmax
//! weights `φ_n^(i)` of every sub-region `X_i` ([`client`]); the server gets only
//! the sum through [`fedhe_crypto::SecureSum`], adds Gaussian noise of standard
//! deviation `z·φ_max·S` (central mode), divides by `q` and broadcasts
//! `ω_t^(i) = q⁻¹ Σ_{n ∈ S_t} φ_n^(i) ω̂_{n,t} + N(0, (z·φ_max·S/q)² I)`
//! (eq. 4, [`server`]). With probability `p_t` an agent takes its own TS step,
//! otherwise it maximises `φ(x)ᵀ ω_t^(i[x])` over all sub-regions. The moments
//! accountant composes one subsampled Gaussian per round and the run reports
//! ε after each round (`RunResult::epsilon`).
//!
//! Configurations of the same code:
//!
//! | name | `subregions` | `noise` |
//! | --- | --- | --- |
//! | modified FTS (paper 000 Fig. 2a "FTS") | 1 | `none` (`q = 1`) |
//! | FTS-DE | `P > 1` | `none` |
//! | DP-FTS | 1 | `central` or `distributed` |
//! | DP-FTS-DE | `P > 1` | `central` or `distributed` |
//!
//! Without noise the vectors are still clipped to `S` (a public bound the
//! channel needs); take `S` large to make clipping inactive.
//!
//! # Privacy of the two noise modes
//!
//! Every member contributes a vector every round — `φ ω̂` if it is in the
//! batch `S_t`, zeros otherwise — so the channel's n-of-n decryption holds and
//! the contributions all look alike under encryption.
//!
//! - **Central** (the paper's model, footnote 2): the *server* draws the Poisson
//!   batch, learns the decrypted sum `Σ φ ω̂` and adds `N(0, (z·φ_max·S)²)`
//!   itself. The broadcast is `(ε, δ)`-user-level DP against the agents and
//!   anyone who sees only broadcasts (Prop. 1, the accountant's ε). Against the
//!   server there is no DP: it sees the noiseless sum of the batch (though,
//!   thanks to the encryption, never one agent's `ω`). The server must be
//!   trusted to add the noise and keep the batch secret.
//! - **Distributed**: every member flips its own Poisson coin (nobody else
//!   learns the batch) and adds a share `N(0, (z·φ_max·S)²/N)` to its
//!   contribution before encryption, so the *decrypted* sum already carries the
//!   full noise `N(0, (z·φ_max·S)²)`. The same ε then holds against the server
//!   too, as long as members follow the protocol (semi-honest). A coalition of
//!   `c` colluding members can subtract its own shares: against it the noise
//!   multiplier is `z·√((N − c)/N)` (account with that to cover up to `c`
//!   colluders). Shares are discrete Gaussians on a fine grid; their sum is
//!   within a negligible distance of the Gaussian the accountant assumes.
//!   When members may be missing from a round (a t-of-n study), set
//!   `min_present = m`, the quorum: each share is then `N(0, (z·φ_max·S)²/m)`,
//!   any `m` contributors already give the full noise, and the reported ε
//!   (for multiplier `z`) is the worst case over the rounds' sizes.
//!
//! In both modes the weights are public and depend only on the round, the
//! clipping bounds one agent's joint vector by `N·φ_max·S` (App. A.1), and the
//! sensitivity of the estimator is `φ_max·S/q`.

pub mod client;
mod params;
mod run;
pub mod server;
pub mod subregions;

pub use params::{AccountantChoice, DpFtsDeParams, NoiseMode, ValidParams, NOISE_SHARE_TAIL};
pub use run::{check_networked, run, run_observed, run_roster, RoundEvent};

/// The registry name of DP-FTS-DE (and its configurations).
pub const METHOD: &str = "dp-fts-de";
pub use server::DpFtsDeServer;
pub use subregions::{RoundWeights, SubRegions, WeightSchedule};
