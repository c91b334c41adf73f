//! The seam between a member's round protocol and the server: every call a
//! [`super::MemberSession`] makes in a round, behind one trait. [`Client`]
//! (HTTP, to a server over the network or to one in this process,
//! [`Client::in_process`]) is its implementation; tests wrap it to cut the
//! member off between any two calls or to answer in the server's place.

use crate::{Client, ClientError, ListPart};
use fedhe_api::{
    AuditHead, AuditLog, CommitmentList, ContributionList, DecryptionShareList, RoundResult,
    RoundStatus, SignedAuditHead, SumDigestList, UploadReceipt,
};
use std::time::Duration;

/// What a member asks of the server in a round (the routes of
/// `fedhe_api::routes`; each method is [`Client`]'s of the same name).
pub trait Transport: Send + Sync {
    /// Opens a round (idempotent).
    fn open_round(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError>;
    /// The round's status, waiting up to `wait` for a version after `since`.
    fn round(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
        since: Option<i64>,
    ) -> Result<RoundStatus, ClientError>;
    /// Claims a seat among a t-of-n round's decrypting members.
    fn claim_decryption(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError>;
    /// Uploads this member's signed commitment to its contribution.
    #[allow(clippy::too_many_arguments)]
    fn put_round_commitment(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        values: u64,
        spec_hash: &str,
        c1_commitment_hash: &[u8; 32],
    ) -> Result<UploadReceipt, ClientError>;
    /// The round's commitment list, or part of it.
    fn round_commitments_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<CommitmentList, ClientError>;
    /// Uploads this member's contribution, signed with the list it saw.
    fn put_contribution(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        list_hash: &str,
    ) -> Result<UploadReceipt, ClientError>;
    /// The round's contribution list, or part of it.
    fn contributions_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<ContributionList, ClientError>;
    /// One member's contribution.
    fn contribution(&self, study: &str, round: u64, member: &str) -> Result<Vec<u8>, ClientError>;
    /// The round's aggregate, waiting up to `wait` for it.
    fn aggregate(&self, study: &str, round: u64, wait: Duration) -> Result<Vec<u8>, ClientError>;
    /// The aggregate's carries (for the c1 check).
    fn aggregate_carries(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError>;
    /// Uploads this member's signed digest of the sum it checked.
    #[allow(clippy::too_many_arguments)]
    fn put_sum_digest(
        &self,
        study: &str,
        round: u64,
        contribution_hash: &[u8; 32],
        commitment_list_hash: &str,
        list_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError>;
    /// The contributors' signed sum digests, waiting up to `wait` for
    /// `count` of them.
    fn sum_digests_part(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
        part: ListPart<'_>,
    ) -> Result<SumDigestList, ClientError>;
    /// Uploads this member's decryption share.
    fn put_decryption_share(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
    ) -> Result<UploadReceipt, ClientError>;
    /// The round's decryption-share list, or part of it.
    fn decryption_shares_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<DecryptionShareList, ClientError>;
    /// One member's decryption share.
    fn decryption_share(
        &self,
        study: &str,
        round: u64,
        member: &str,
    ) -> Result<Vec<u8>, ClientError>;
    /// The combined (still blinded) decryption share.
    fn combined_share(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError>;
    /// Uploads this member's signed digest of the shares it combined.
    #[allow(clippy::too_many_arguments)]
    fn put_share_digest(
        &self,
        study: &str,
        round: u64,
        share_hash: &[u8; 32],
        share_list_hash: &[u8; 32],
        combined_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        decrypting_set: &[String],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError>;
    /// The share makers' signed digests, waiting up to `wait` for `count`.
    fn share_digests(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
    ) -> Result<SumDigestList, ClientError>;
    /// The round's result record, waiting up to `wait` for it.
    fn result(&self, study: &str, round: u64, wait: Duration) -> Result<RoundResult, ClientError>;
    /// The ceremony's audit trail after `after`.
    fn ceremony_audit(&self, ceremony: &str, after: i64) -> Result<AuditLog, ClientError>;
    /// Signs a head of the ceremony's trail to the server.
    fn put_audit_head(
        &self,
        ceremony: &str,
        head: &AuditHead,
    ) -> Result<SignedAuditHead, ClientError>;
}

/// Hands the signature of every [`Transport`] method to the macro `$then`
/// (the one list [`Client`]'s implementation, and the tests' wrappers, are
/// made from).
macro_rules! transport_methods {
    ($then:ident) => {
        $then! {
            open_round(study: &str, round: u64) -> RoundStatus;
            round(study: &str, round: u64, wait: Duration, since: Option<i64>) -> RoundStatus;
            claim_decryption(study: &str, round: u64) -> RoundStatus;
            put_round_commitment(study: &str, round: u64, bytes: &[u8], values: u64, spec_hash: &str, c1_commitment_hash: &[u8; 32]) -> UploadReceipt;
            round_commitments_part(study: &str, round: u64, part: ListPart<'_>) -> CommitmentList;
            put_contribution(study: &str, round: u64, bytes: &[u8], list_hash: &str) -> UploadReceipt;
            contributions_part(study: &str, round: u64, part: ListPart<'_>) -> ContributionList;
            contribution(study: &str, round: u64, member: &str) -> Vec<u8>;
            aggregate(study: &str, round: u64, wait: Duration) -> Vec<u8>;
            aggregate_carries(study: &str, round: u64) -> Vec<u8>;
            put_sum_digest(study: &str, round: u64, contribution_hash: &[u8; 32], commitment_list_hash: &str, list_hash: &[u8; 32], aggregate_hash: &[u8; 32], digest: &[u8]) -> UploadReceipt;
            sum_digests_part(study: &str, round: u64, count: usize, wait: Duration, part: ListPart<'_>) -> SumDigestList;
            put_decryption_share(study: &str, round: u64, bytes: &[u8]) -> UploadReceipt;
            decryption_shares_part(study: &str, round: u64, part: ListPart<'_>) -> DecryptionShareList;
            decryption_share(study: &str, round: u64, member: &str) -> Vec<u8>;
            combined_share(study: &str, round: u64) -> Vec<u8>;
            put_share_digest(study: &str, round: u64, share_hash: &[u8; 32], share_list_hash: &[u8; 32], combined_hash: &[u8; 32], aggregate_hash: &[u8; 32], decrypting_set: &[String], digest: &[u8]) -> UploadReceipt;
            share_digests(study: &str, round: u64, count: usize, wait: Duration) -> SumDigestList;
            result(study: &str, round: u64, wait: Duration) -> RoundResult;
            ceremony_audit(ceremony: &str, after: i64) -> AuditLog;
            put_audit_head(ceremony: &str, head: &AuditHead) -> SignedAuditHead;
}
    };
}
#[cfg(test)]
pub(super) use transport_methods;

/// `Transport for Client`: each method is the client's own.
macro_rules! forward_to_client {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        impl Transport for Client {
            $(fn $name(&self, $($arg: $ty),*) -> Result<$out, ClientError> {
                Client::$name(self, $($arg),*)
            })*
        }
    };
}

transport_methods!(forward_to_client);
