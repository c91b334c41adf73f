//! `fedhe-client`: one institution's side of a federation (DESIGN.md §5).
//!
//! | module | what |
//! | --- | --- |
//! | [`audit`] | the member's journal of audit-trail heads, verified and signed after every round |
//! | [`agent`] | an institution's agent: FBO-FedGP's client role over the network, resumable |
//! | [`http`] | typed client of the REST API: signed requests, retries with backoff |
//! | [`keys`] | the member's key folder: private, atomic, never silently overwritten |
//! | [`sealed`] | passphrase encryption of key files at rest (Argon2id, XChaCha20-Poly1305) |
//! | [`member`] | ceremony join and verification, rounds, [`member::NetworkSum`] |
//! | [`policy`] | the member's own terms (quorum floor, parameter sets, last round) |
//! | [`verify`] | verify before decrypt (DESIGN.md §6) |

pub mod agent;
pub mod audit;
pub mod http;
pub mod keys;
pub mod member;
pub mod policy;
pub mod sealed;
pub mod verify;

pub use http::{Auth, Client, Exchange, ListPart, RetryPolicy, Tls};
pub use member::{MemberSession, NetworkSum, Transport};
pub use verify::{Refusal, RefusalKind};

/// Everything that can go wrong on the member's side. Messages never hold
/// secret material.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with a problem report.
    #[error("{method} {path}: {} {}: {}", problem.status, problem.title, problem.detail)]
    Problem {
        /// Method.
        method: String,
        /// Path.
        path: String,
        /// The RFC 9457 report.
        problem: Box<fedhe_api::Problem>,
    },
    /// The server could not be reached (after retries).
    #[error("transport: {0}")]
    Transport(String),
    /// A response could not be decoded.
    #[error("decode: {0}")]
    Decode(String),
    /// The key folder refused an operation.
    #[error("keys: {0}")]
    Keys(String),
    /// Something the server served does not verify.
    #[error("verification failed: {0}")]
    Verification(String),
    /// Verify before decrypt refused.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The member's own policy refuses the study or round (`policy.toml`
    /// or the agent's flags): nothing was opened, committed or decrypted.
    #[error(
        "my policy refuses this: {setting} ({} or the agent's --{} flag): {detail}",
        crate::policy::POLICY_FILE,
        setting.replace('_', "-")
    )]
    Policy {
        /// The policy setting that refuses (`max_epsilon`, `min_contributors`, ...).
        setting: &'static str,
        /// What the study or round asks, against the setting.
        detail: String,
    },
    /// A round failed on the server.
    #[error(
        "round {round} failed: {}",
        fedhe_crypto::text::escape_controls(reason)
    )]
    RoundFailed {
        /// The round.
        round: u64,
        /// The server's reason.
        reason: String,
    },
    /// Waited too long.
    #[error("timeout: {0}")]
    Timeout(String),
    /// The channel refused (parameters, codec, wire format).
    #[error(transparent)]
    Channel(#[from] fedhe_crypto::ChannelError),
    /// A signature or key was malformed.
    #[error(transparent)]
    Signature(#[from] fedhe_api::SignatureError),
    /// Wrong use of the API.
    #[error("usage: {0}")]
    Usage(String),
    /// Told values (`fedhe agent tell --params`, the Python sampler) that
    /// are not the waiting point's: outside the study's space or other
    /// values. Nothing was journaled.
    #[error("--params: {reason}")]
    ToldPoint {
        /// What is wrong, naming the parameter.
        reason: String,
    },
    /// The algorithm failed (its settings, the objective, the channel).
    #[error(transparent)]
    Algorithm(#[from] fedhe_algorithms::AlgorithmError),
}
