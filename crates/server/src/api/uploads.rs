//! A round's uploads under `/v1/studies/{study}/rounds/{round}`: the
//! members' contributions, decryption shares, and sum and share digests.
//! Each kind has an idempotent PUT per member (the same bytes again answer
//! 200, different bytes 409), a GET of one upload or a signed list; all
//! kinds go through one upload path that checks the member's signature and
//! decodes the object fully before it is stored.

use super::{
    created_or_ok, long_poll, not_ready, octet_response, parse_round, upload_signature,
    verify_upload_signature, BodyKey, Incoming, Shared, OCTET, P,
};
use crate::auth;
use crate::engine;
use crate::problem::{ApiError, ApiResult};
use crate::store::{Upload, UploadTable};
use crate::AppState;
use axum::extract::State;
use axum::response::Response;
use fedhe_api::signing::{
    contribution_statement, now_ms, share_digest_statement, sum_digest_statement, upload_statement,
};
use fedhe_api::*;
use fedhe_crypto::{
    ContributorDigest, DecryptionShare, EncryptedVector, SumDigest, ThresholdDecryptionShare,
    WireObject,
};
use std::collections::BTreeSet;
use std::sync::Arc;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The routes of this module.
pub(crate) fn router() -> OpenApiRouter<Arc<AppState>> {
    OpenApiRouter::new()
        .routes(routes!(put_contribution, get_contribution))
        .routes(routes!(put_decryption_share, get_decryption_share))
        .routes(routes!(list_contributions))
        .routes(routes!(list_decryption_shares))
        .routes(routes!(put_sum_digest))
        .routes(routes!(list_sum_digests))
        .routes(routes!(put_share_digest))
        .routes(routes!(list_share_digests))
}

/// Upload (reveal) a committed contribution: an EncryptedVector under the
/// ceremony's collective key whose hash is the member's commitment, with the
/// member's signature of (study, round, hash, frozen commitment list's hash)
/// in `fedhe-upload-signature`.
#[utoipa::path(put, path = fedhe_api::routes::CONTRIBUTION, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the upload statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "EncryptedVector wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, description = "The same bytes again", body = UploadReceipt),
        (status = 409, description = "Different bytes for this slot, or the round is not collecting", body = Problem, content_type = "application/problem+json"),
        (status = 413, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_contribution(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::Contributions).await
}

/// Upload a decryption share of the round's aggregate, signed like a contribution.
#[utoipa::path(put, path = fedhe_api::routes::DECRYPTION_SHARE, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the upload statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "DecryptionShare wire object"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_decryption_share(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(
        state,
        study,
        round,
        member,
        req,
        UploadTable::DecryptionShares,
    )
    .await
}

async fn put_upload(
    state: Arc<AppState>,
    study: String,
    round: String,
    member: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Response> {
    let req = req.read(&state, state.config.max_upload_bytes).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    let caller = auth::require_member(&state, &spec.ceremony, &req.parts()).await?;
    auth::require_self(&caller, &member)?;
    req.require_content_type(OCTET)?;
    let r = state.store.round(&study, round).await?;
    let hash = *blake3::hash(&req.body).as_bytes();
    let signature = upload_signature(&req.headers)?;
    let statement = match table {
        // A reveal names the frozen commitment list the member saw.
        UploadTable::Contributions => {
            let list_hash = r.commitment_list_hash.as_deref().ok_or_else(|| {
                ApiError::conflict(format!(
                    "round {round} of study {study} is {}: contributions are revealed only once the commitments are frozen",
                    r.state.as_str()
                ))
            })?;
            contribution_statement(&study, &member, round, &hash, list_hash)
        }
        UploadTable::DecryptionShares => {
            upload_statement(UploadKind::DecryptionShare, &study, &member, round, &hash)
        }
        // A digest names the contributor's own contribution, the list and the
        // aggregate whose challenge it was made on.
        // The list's entries hash is stored when the round aggregates: one
        // row read per digest, not the whole list.
        UploadTable::SumDigests => {
            let aggregate_hash = r.aggregate_hash.ok_or_else(|| not_ready(&r, "aggregate"))?;
            let contribution_hash = state
                .store
                .upload_hash(UploadTable::Contributions, &study, round, &member)
                .await?
                .ok_or_else(|| {
                    ApiError::unprocessable(format!(
                        "{member} has no contribution in round {round} of study {study} to digest"
                    ))
                })?;
            let entries_hash = match r.contribution_entries_hash {
                Some(h) => h,
                // A round aggregated before the column existed.
                None => ContributionList::entries_hash_of(
                    &study,
                    round,
                    &state
                        .store
                        .uploads(UploadTable::Contributions, &study, round)
                        .await?,
                ),
            };
            // Frozen before any contribution could be revealed.
            let commitment_list_hash = r
                .commitment_list_hash
                .as_deref()
                .ok_or_else(|| not_ready(&r, "commitment list"))?;
            sum_digest_statement(
                &study,
                &member,
                round,
                &contribution_hash,
                commitment_list_hash,
                &entries_hash,
                &aggregate_hash,
                &req.body,
            )
        }
        // A share digest names the maker's own decryption share, the share
        // list and combined share stored with the result, the aggregate and,
        // t-of-n, the decrypting set.
        UploadTable::ShareDigests => {
            let (Some(aggregate_hash), Some(combined_hash), Some(entries_hash)) =
                (r.aggregate_hash, r.combined_hash, r.share_entries_hash)
            else {
                return Err(not_ready(&r, "combined decryption share"));
            };
            let share_hash = state
                .store
                .upload_hash(UploadTable::DecryptionShares, &study, round, &member)
                .await?
                .ok_or_else(|| {
                    ApiError::unprocessable(format!(
                        "{member} has no decryption share in round {round} of study {study} to digest"
                    ))
                })?;
            let set = match state.store.ceremony(&spec.ceremony).await?.threshold {
                None => Vec::new(),
                Some(t) => {
                    let mut set = state.store.decrypting_set(&study, round, Some(t)).await?;
                    set.sort();
                    set
                }
            };
            share_digest_statement(
                &study,
                &member,
                round,
                &share_hash,
                &entries_hash,
                &combined_hash,
                &aggregate_hash,
                &set,
                &req.body,
            )
        }
    };
    verify_upload_signature(&state, &spec.ceremony, &member, &statement, &signature).await?;
    let c = state.store.ceremony(&spec.ceremony).await?;
    let params = state.params(&c.parameter_set, c.allow_insecure)?;
    // Only a contribution's encoding is checked against the member count.
    let members = match table {
        UploadTable::Contributions => state.store.member_count(&spec.ceremony).await?,
        _ => 0,
    };
    let body = req.body.clone();
    let expected_parts = r.parts;
    let check_member = member.clone();
    // t-of-n: a decryption share is made for the round's full decrypting
    // set, by one of its members.
    let decrypting_set = match (table, c.threshold) {
        (UploadTable::DecryptionShares, Some(t)) => {
            let mut set = state.store.decrypting_set(&study, round, Some(t)).await?;
            if set.len() < t as usize {
                return Err(ApiError::conflict(format!(
                    "round {round} of study {study} has {} of the {t} members of its decrypting set",
                    set.len()
                )));
            }
            if !set.contains(&member) {
                return Err(ApiError::unprocessable(format!(
                    "{member} is not in the decrypting set of round {round} ({})",
                    set.join(", ")
                )));
            }
            set.sort();
            Some(set)
        }
        _ => None,
    };
    // Decode fully (bounds, residues, checksum) before anything is stored.
    let shape = tokio::task::spawn_blocking(move || -> ApiResult<Option<String>> {
        match table {
            UploadTable::Contributions => {
                let v = EncryptedVector::from_bytes(&params, &body)
                    .map_err(|e| ApiError::unprocessable(format!("not an encrypted vector: {e}")))?;
                let e = v.encoding();
                if (e.members as usize) < members {
                    return Err(ApiError::unprocessable(format!(
                        "the vector is encoded for {} members; the ceremony has {members}, so sums could wrap",
                        e.members
                    )));
                }
                Ok(Some(engine::shape_text(e, v.len() as u64)))
            }
            // A contributor's digest carries its c1 commitment; a share
            // maker's is the sum digest alone.
            UploadTable::SumDigests => {
                ContributorDigest::from_bytes(&params, &body)
                    .map_err(|e| ApiError::unprocessable(format!("not a digest: {e}")))?;
                Ok(None)
            }
            UploadTable::ShareDigests => {
                SumDigest::from_bytes(&params, &body)
                    .map_err(|e| ApiError::unprocessable(format!("not a digest: {e}")))?;
                Ok(None)
            }
            UploadTable::DecryptionShares => {
                let s = match &decrypting_set {
                    None => DecryptionShare::from_bytes(&params, &body).map_err(|e| {
                        ApiError::unprocessable(format!("not a decryption share: {e}"))
                    })?,
                    Some(set) => {
                        let t = ThresholdDecryptionShare::from_bytes(&params, &body).map_err(|e| {
                            ApiError::unprocessable(format!(
                                "not a threshold decryption share: {e}"
                            ))
                        })?;
                        let named: Vec<&str> = t.active().iter().map(|m| m.as_str()).collect();
                        if named != set.iter().map(String::as_str).collect::<Vec<_>>() {
                            return Err(ApiError::unprocessable(format!(
                                "the share was made for the decrypting set {}, not the round's {}",
                                named.join(", "),
                                set.join(", ")
                            )));
                        }
                        t.share().clone()
                    }
                };
                if s.member().as_str() != check_member {
                    return Err(ApiError::unprocessable(format!(
                        "the share names member {}, not {check_member}",
                        s.member()
                    )));
                }
                if let Some(parts) = expected_parts {
                    if s.polys().len() as i64 != parts {
                        return Err(ApiError::unprocessable(format!(
                            "the share has {} polynomials; the aggregate has {parts} ciphertexts",
                            s.polys().len()
                        )));
                    }
                }
                Ok(None)
            }
        }
    })
    .await
    .map_err(|_| ApiError::internal("decoding task failed"))??;
    let created = state
        .store
        .put_upload(
            table,
            &Upload {
                study: &study,
                round,
                member: &member,
                bytes: &req.body,
                hash,
                signature: &signature,
                shape,
            },
            now_ms(),
        )
        .await?;
    if created {
        state.metrics.uploaded(req.body.len());
        state.notify_change();
        // A digest changes no round state.
        if !matches!(table, UploadTable::SumDigests | UploadTable::ShareDigests) {
            engine::advance_round(&state, &study, round).await?;
        }
    }
    Ok(created_or_ok(
        created,
        UploadReceipt {
            hash: hex::encode(hash),
            created,
        },
    ))
}

/// One member's contribution.
#[utoipa::path(get, path = fedhe_api::routes::CONTRIBUTION, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_contribution(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    get_upload(state, study, round, member, req, UploadTable::Contributions).await
}

/// One member's decryption share.
#[utoipa::path(get, path = fedhe_api::routes::DECRYPTION_SHARE, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path)),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, content_type = "application/octet-stream", body = String),
        (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn get_decryption_share(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    get_upload(
        state,
        study,
        round,
        member,
        req,
        UploadTable::DecryptionShares,
    )
    .await
}

async fn get_upload(
    state: Arc<AppState>,
    study: String,
    round: String,
    member: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    if table == UploadTable::Contributions {
        // No member may see another's contribution before the round's
        // contributions are fixed and summed (the copy attack, DESIGN.md §6).
        let r = state.store.round(&study, round).await?;
        if r.aggregate_hash.is_none() {
            return Err(ApiError::conflict(format!(
                "round {round} of study {study} is {}: contributions can be read only once the aggregate exists",
                r.state.as_str()
            )));
        }
    }
    Ok(octet_response(
        state
            .store
            .upload_bytes(table, &study, round, &member)
            .await?,
    ))
}

/// The decryption shares of a round, each with its member's signature, and
/// the hash of the aggregate they decrypt: a member recombines them itself
/// rather than trust the result this server decoded.
#[utoipa::path(get, path = fedhe_api::routes::DECRYPTION_SHARES, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("members" = Option<String>, Query, description = "Only these members' entries: member ids separated by commas (default: every entry)"),
        ("signatures" = Option<String>, Query, description = "Whose upload signatures to include: member ids separated by commas, `none`, or `all` (the default); the others' are empty")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, description = "The list: JSON, or compact bytes (`fedhe_api::compact`) when `Accept` names application/vnd.fedhe.list", content((DecryptionShareList = "application/json"), (Vec<u8> = "application/vnd.fedhe.list"))), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_decryption_shares(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    list_uploads(
        state,
        study,
        round,
        req,
        UploadTable::DecryptionShares,
        |state, shares, aggregate_hash| DecryptionShareList {
            state,
            shares,
            aggregate_hash,
        },
    )
    .await
}

/// A list of signed uploads in `table` (contributions or decryption
/// shares), made by `list` from the round's state, the selected entries and
/// the aggregate's hash.
async fn list_uploads<T: serde::Serialize + CompactList>(
    state: Arc<AppState>,
    study: String,
    round: String,
    req: Incoming,
    table: UploadTable,
    list: impl FnOnce(RoundState, Vec<SignedUpload>, Option<String>) -> T,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let selection = ListSelection::of(&req)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let r = state.store.round(&study, round).await?;
    let key = BodyKey::of(&req, &selection, table.name(), &study, round, r.state);
    if let Some(kept) = state.final_bodies.response(key.as_ref(), 0) {
        return Ok(kept);
    }
    let entries = state
        .store
        .listed_uploads(table, &study, round, r.state)
        .await?;
    state.final_bodies.encode(
        &req,
        key.filter(|_| table.is_final(r.state)),
        list(
            r.state,
            selection.uploads(&entries),
            r.aggregate_hash.map(hex::encode),
        ),
        entries.len(),
    )
}

/// Which entries of a signed list to send, and which keep their signature
/// (`?members=`, `?signatures=`; issue 16). A member checks an upload's own
/// signature only where its maker sent no signed digest (whose signature it
/// checks instead), and in an n-of-n ceremony only a random sample of a
/// commitment or digest list's signatures, so it asks for a list with
/// `signatures=none` and then for the entries whose signatures it checks
/// with `members=m1,m2`: at 1,000 members each entry it downloads is 128
/// hex characters shorter, and the second answer holds only the sample.
/// Absent: every entry, every signature.
pub(super) struct ListSelection {
    /// The members whose entries are sent (`None`: all).
    members: Option<BTreeSet<String>>,
    /// The members whose entries keep their signatures (`None`: all).
    signatures: Option<BTreeSet<String>>,
}

impl ListSelection {
    pub(super) fn of(req: &super::Received) -> ApiResult<Self> {
        Ok(Self {
            members: match req.query("members")? {
                None => None,
                Some(v) => Some(member_ids("members", &v)?),
            },
            signatures: match req.query("signatures")?.as_deref() {
                None | Some("all") => None,
                Some("none") => Some(BTreeSet::new()),
                Some(v) => Some(member_ids("signatures", v)?),
            },
        })
    }

    /// The selected entries (`member` names an entry's member), with the
    /// signatures not selected left out (emptied by `clear`).
    pub(super) fn apply<T: Clone>(
        &self,
        list: &[T],
        member: impl Fn(&T) -> &str,
        clear: impl Fn(&mut T),
    ) -> Vec<T> {
        list.iter()
            .filter(|e| self.members.as_ref().is_none_or(|m| m.contains(member(e))))
            .map(|e| {
                let mut e = e.clone();
                if self
                    .signatures
                    .as_ref()
                    .is_some_and(|s| !s.contains(member(&e)))
                {
                    clear(&mut e);
                }
                e
            })
            .collect()
    }

    /// For a request of the whole list, whether it asks for every
    /// signature (`Some(true)`) or none (`Some(false)`); `None` for a
    /// selection of entries or signatures ([`super::BodyKey`]).
    pub(super) fn whole(&self) -> Option<bool> {
        if self.members.is_some() {
            return None;
        }
        match &self.signatures {
            None => Some(true),
            Some(s) if s.is_empty() => Some(false),
            Some(_) => None,
        }
    }

    /// [`Self::apply`] to signed uploads.
    fn uploads(&self, list: &[SignedUpload]) -> Vec<SignedUpload> {
        self.apply(list, |u| u.member.as_str(), |u| u.signature.clear())
    }
}

/// The member ids of `?{param}=` (comma separated, each 1-64 characters
/// from `[A-Za-z0-9._-]`), or a 400 naming the parameter.
fn member_ids(param: &str, value: &str) -> ApiResult<BTreeSet<String>> {
    value
        .split(',')
        .map(|m| {
            let valid = (1..=64).contains(&m.len())
                && m.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if valid {
                Ok(m.to_string())
            } else {
                let shown = |t: &str| {
                    fedhe_crypto::text::escape_controls(&t.chars().take(80).collect::<String>())
                };
                Err(ApiError::bad_request(format!(
                    "{param}={:?}: {:?} is not a member id (1-64 characters from [A-Za-z0-9._-]); give member ids separated by commas{}",
                    shown(value),
                    shown(m),
                    if param == "signatures" { ", `none` or `all`" } else { "" },
                )))
            }
        })
        .collect()
}

/// Upload the digest of this member's contribution on the round's challenge
/// (`fedhe_crypto::sum_digest`), once the aggregate exists; signed (header
/// `fedhe-upload-signature`) over `fedhe_api::signing::sum_digest_statement`.
#[utoipa::path(put, path = fedhe_api::routes::SUM_DIGEST, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the sum-digest statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "SumDigest bytes"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_sum_digest(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::SumDigests).await
}

/// The contributors' signed digests of a round; `?wait=SECS&count=K` waits
/// until at least K are in (or the round is done or failed).
#[utoipa::path(get, path = fedhe_api::routes::SUM_DIGESTS, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait"),
        ("count" = Option<u64>, Query, description = "Long poll: the number of digests to wait for"),
        ("members" = Option<String>, Query, description = "Only these members' entries: member ids separated by commas (default: every entry)"),
        ("signatures" = Option<String>, Query, description = "Whose signatures to include: member ids separated by commas, `none`, or `all` (the default); the others' are empty")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, description = "The list: JSON, or compact bytes (`fedhe_api::compact`) when `Accept` names application/vnd.fedhe.list", content((SumDigestList = "application/json"), (Vec<u8> = "application/vnd.fedhe.list"))), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_sum_digests(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    list_digests(state, study, round, req, UploadTable::SumDigests).await
}

/// Upload the digest of this member's decryption share on the challenge of
/// the round's combined share (`SumChallenge::derive_for_shares`), once the
/// result is published; signed (header `fedhe-upload-signature`) over
/// `fedhe_api::signing::share_digest_statement`.
#[utoipa::path(put, path = fedhe_api::routes::SHARE_DIGEST, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path), ("member" = String, Path),
        ("fedhe-upload-signature" = String, Header, description = "ed25519 signature of the share-digest statement, hex")),
    request_body(content = String, content_type = "application/octet-stream", description = "SumDigest bytes"),
    security(("member" = [])),
    responses((status = 201, body = UploadReceipt), (status = 200, body = UploadReceipt),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json")))]
async fn put_share_digest(
    State(state): Shared,
    P((study, round, member)): P<(String, String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    put_upload(state, study, round, member, req, UploadTable::ShareDigests).await
}

/// The share makers' signed digests of their decryption shares;
/// `?wait=SECS&count=K` waits until at least K are in (or the round failed).
#[utoipa::path(get, path = fedhe_api::routes::SHARE_DIGESTS, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("wait" = Option<f64>, Query, description = "Long poll: seconds to wait"),
        ("count" = Option<u64>, Query, description = "Long poll: the number of digests to wait for"),
        ("members" = Option<String>, Query, description = "Only these members' entries: member ids separated by commas (default: every entry)"),
        ("signatures" = Option<String>, Query, description = "Whose signatures to include: member ids separated by commas, `none`, or `all` (the default); the others' are empty")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, description = "The list: JSON, or compact bytes (`fedhe_api::compact`) when `Accept` names application/vnd.fedhe.list", content((SumDigestList = "application/json"), (Vec<u8> = "application/vnd.fedhe.list"))), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_share_digests(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    list_digests(state, study, round, req, UploadTable::ShareDigests).await
}

/// The digests of a round in `table` (sum or share digests), long-polled
/// until `count` are in or no more can come: sum digests stop with the
/// round (done or failed), share digests, made once it is done, only if it
/// failed.
async fn list_digests(
    state: Arc<AppState>,
    study: String,
    round: String,
    req: Incoming,
    table: UploadTable,
) -> ApiResult<Response> {
    let req = req.read(&state, 0).await?;
    let round = parse_round(&round)?;
    let selection = ListSelection::of(&req)?;
    let spec = state.store.study(&study).await?.spec;
    auth::require_reader(&state, &spec.ceremony, &req.parts()).await?;
    let count: usize = match req.query("count")? {
        None => 0,
        Some(v) => v
            .parse()
            .map_err(|_| ApiError::bad_request(format!("count={v:?} is not a number")))?,
    };
    // A complete list's body, if kept, answers at once (it cannot grow).
    let r = state.store.round(&study, round).await?;
    let key = BodyKey::of(&req, &selection, table.name(), &study, round, r.state);
    if let Some(kept) = state.final_bodies.response(key.as_ref(), count) {
        return Ok(kept);
    }
    let st = &state;
    let study_ref = &study;
    let read = || async move {
        let r = st.store.round(study_ref, round).await?;
        let (rows, complete) = st
            .store
            .listed_digests(table, study_ref, round, r.state)
            .await?;
        Ok::<_, ApiError>((r, rows, complete))
    };
    // A waiter wakes on every upload of the round: it counts the digests
    // (on the index) and reads their n rows only once enough are in.
    let ready = long_poll(st, req.wait(st)?, || async move {
        let r = st.store.round(study_ref, round).await?;
        let settled = match table {
            UploadTable::ShareDigests => r.state == RoundState::Failed,
            _ => matches!(r.state, RoundState::Done | RoundState::Failed),
        };
        if !settled && st.store.upload_count(table, study_ref, round).await? < count {
            return Ok(None);
        }
        read().await.map(Some)
    })
    .await?;
    let (r, rows, complete) = match ready {
        Some(v) => v,
        None => read().await?,
    };
    let digests: Vec<SignedSumDigest> = rows
        .iter()
        .map(|(member, bytes, signature)| SignedSumDigest {
            member: member.clone(),
            digest: hex::encode(bytes),
            signature: signature.clone(),
        })
        .collect();
    let key = BodyKey::of(&req, &selection, table.name(), &study, round, r.state);
    state.final_bodies.encode(
        &req,
        key.filter(|_| complete),
        SumDigestList {
            state: r.state,
            digests: selection.apply(&digests, |d| d.member.as_str(), |d| d.signature.clear()),
            aggregate_hash: r.aggregate_hash.map(hex::encode),
        },
        rows.len(),
    )
}

/// The contributions of a round, each with its member's signature, and the
/// hash of their aggregate once it exists.
#[utoipa::path(get, path = fedhe_api::routes::CONTRIBUTIONS, tag = "studies",
    params(("study" = String, Path), ("round" = u64, Path),
        ("members" = Option<String>, Query, description = "Only these members' entries: member ids separated by commas (default: every entry)"),
        ("signatures" = Option<String>, Query, description = "Whose upload signatures to include: member ids separated by commas, `none`, or `all` (the default); the others' are empty")),
    security(("admin" = []), ("member" = [])),
    responses((status = 200, description = "The list: JSON, or compact bytes (`fedhe_api::compact`) when `Accept` names application/vnd.fedhe.list", content((ContributionList = "application/json"), (Vec<u8> = "application/vnd.fedhe.list"))), (status = 404, body = Problem, content_type = "application/problem+json")))]
async fn list_contributions(
    State(state): Shared,
    P((study, round)): P<(String, String)>,
    req: Incoming,
) -> ApiResult<Response> {
    list_uploads(
        state,
        study,
        round,
        req,
        UploadTable::Contributions,
        |state, contributions, aggregate_hash| ContributionList {
            state,
            contributions,
            aggregate_hash,
        },
    )
    .await
}
