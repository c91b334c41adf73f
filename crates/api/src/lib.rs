//! `fedhe-api`: what the server and the client of the REST API agree on
//! (DESIGN.md §5): the JSON bodies, the request signatures and the signed
//! upload statements. Neither side imports the other; both import this.

pub mod audit;
pub mod compact;
pub mod routes;
pub mod signing;
pub mod types;

pub use audit::{AuditEntry, AuditHead, AuditLog, SignedAuditHead};
pub use compact::{CompactError, CompactList, COMPACT_LIST};
pub use signing::{Identity, SignatureError, UploadKind};
pub use types::*;
