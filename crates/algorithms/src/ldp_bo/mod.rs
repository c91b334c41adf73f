//! Local-DP GP-UCB (paper 001): the learner sees only rewards corrupted by the
//! Laplace mechanism CTL(ε), and handles their heavy tails by truncating raw
//! rewards (LDP-TGP-UCB, Alg. 2), truncating in Nyström feature space
//! (LDP-ATA-GP-UCB, Alg. 1) or by a median of means (MoMA-GP-UCB, Alg. 3);
//! without CTL the same learners are the heavy-tailed BO methods of §5
//! (TGP-UCB, ATA-GP-UCB, MoMA-GP-UCB).
//!
//! Federated form: the users who answer a query are institutions. Each one
//! evaluates the queried point, privatises its own reward with CTL(ε) and
//! contributes it to a `SecureSum`; the learner (the server role) sees only the
//! sum of already-private rewards and learns from their mean. With one member
//! this is the paper's setting.
//!
//! The domain is finite, as in §5.1: a uniform grid of the unit cube.

mod learners;
mod mechanism;
mod params;
mod run;

pub use learners::{AtaGpUcb, Constants, Learner, MomaGpUcb, TgpUcb};
pub use mechanism::ConvertToLaplace;
pub use params::{LdpBoParams, LdpKernel, LdpMethod, NoiseModel, ValidLdpParams};
pub use run::{check_networked, grid, run, run_roster, Institution};
