//! The studies' and rounds' routes: create, status, open a round,
//! commitments, uploads, signed lists, the aggregate and the result.

use super::*;

impl Client {
    /// Creates a study (administrator): the spec and the administrator's
    /// signature of its hash.
    pub fn create_study(&self, spec: &SignedStudySpec) -> Result<StudyStatus, ClientError> {
        self.json(Method::POST, routes::STUDIES, Some(spec))
    }

    /// A study.
    ///
    /// The spec served must be the study's own: one whose id is another
    /// study's (a server serving study C's signed spec for study D, issue 45
    /// item 8) is refused here, before anything uses it.
    pub fn study(&self, id: &str) -> Result<StudyStatus, ClientError> {
        let status: StudyStatus = self.json(
            Method::GET,
            &routes::fill(routes::STUDY, &[&id]),
            None::<&()>,
        )?;
        if status.spec.id != id {
            return Err(ClientError::Verification(format!(
                "the server served the spec of study {} for study {}",
                fedhe_crypto::text::quote(&status.spec.id, 64),
                fedhe_crypto::text::quote(id, 64)
            )));
        }
        Ok(status)
    }

    /// Opens a round (idempotent).
    pub fn open_round(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError> {
        self.json(
            Method::PUT,
            &routes::fill(routes::ROUND, &[&study, &round]),
            None::<&()>,
        )
    }

    /// A round's status, waiting up to `wait` for its version to pass `since`.
    pub fn round(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
        since: Option<i64>,
    ) -> Result<RoundStatus, ClientError> {
        let mut path = format!(
            "{}?wait={}",
            routes::fill(routes::ROUND, &[&study, &round]),
            wait.as_secs_f64()
        );
        if let Some(v) = since {
            path.push_str(&format!("&since={v}"));
        }
        self.json(Method::GET, &path, None::<&()>)
    }

    /// Claims a place in a t-of-n round's decrypting set; the round's status
    /// with the set so far.
    pub fn claim_decryption(&self, study: &str, round: u64) -> Result<RoundStatus, ClientError> {
        let (member, _) = self.identity()?;
        self.json(
            Method::PUT,
            &routes::fill(routes::DECRYPTION_CLAIM, &[&study, &round, &member]),
            None::<&()>,
        )
    }

    /// Uploads `bytes` to this member's slot of a round (`slot`, a route
    /// with captures study, round and member), with `signature` of the
    /// upload's statement.
    fn upload(
        &self,
        slot: &'static str,
        study: &str,
        round: u64,
        bytes: &[u8],
        signature: String,
    ) -> Result<UploadReceipt, ClientError> {
        let (member, _) = self.identity()?;
        let answer = self.send(
            Method::PUT,
            &routes::fill(slot, &[&study, &round, &member]),
            bytes.to_vec(),
            OCTET,
            &[(HEADER_UPLOAD_SIGNATURE, signature)],
        )?;
        let receipt: UploadReceipt =
            serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))?;
        debug_assert!(answer.status.is_success());
        Ok(receipt)
    }

    /// Commits to this member's contribution (an encrypted vector's wire
    /// bytes holding `values` values, whose c1 commitment has hash
    /// `c1_commitment_hash`) under the study spec of hash `spec_hash`
    /// (DESIGN.md §6).
    pub fn put_round_commitment(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        values: u64,
        spec_hash: &str,
        c1_commitment_hash: &[u8; 32],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let commitment = RoundCommitment {
            hash: hash.to_hex().to_string(),
            values,
            c1_commitment_hash: hex::encode(c1_commitment_hash),
            signature: identity.sign_hex(&round_commitment_statement(
                study,
                member,
                round,
                hash.as_bytes(),
                values,
                spec_hash,
                c1_commitment_hash,
            )),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::ROUND_COMMITMENT, &[&study, &round, &member]),
            Some(&commitment),
        )
    }

    /// A round's signed commitments.
    pub fn round_commitments(
        &self,
        study: &str,
        round: u64,
    ) -> Result<CommitmentList, ClientError> {
        self.round_commitments_part(study, round, ListPart::All)
    }

    /// `part` of a round's commitments ([`ListPart`]: a member checking a
    /// sample asks for the list without signatures, then for its sample's
    /// entries, issue 16).
    pub fn round_commitments_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<CommitmentList, ClientError> {
        self.list_part(routes::ROUND_COMMITMENTS, study, round, part)
    }

    /// Reveals (uploads) this member's committed contribution, signed with
    /// the hash of the frozen commitment list it saw.
    pub fn put_contribution(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
        list_hash: &str,
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let signature = identity.sign_hex(&contribution_statement(
            study,
            member,
            round,
            hash.as_bytes(),
            list_hash,
        ));
        self.upload(routes::CONTRIBUTION, study, round, bytes, signature)
    }

    /// Uploads this member's decryption share.
    pub fn put_decryption_share(
        &self,
        study: &str,
        round: u64,
        bytes: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(bytes);
        let signature = identity.sign_hex(&upload_statement(
            UploadKind::DecryptionShare,
            study,
            member,
            round,
            hash.as_bytes(),
        ));
        self.upload(routes::DECRYPTION_SHARE, study, round, bytes, signature)
    }

    /// Uploads this member's signed digest of its own contribution
    /// (`fedhe_crypto::sum_digest`), made on the challenge of the aggregate
    /// with hash `aggregate_hash` and the contribution list with entries hash
    /// `list_hash`, naming the frozen commitment list it revealed against.
    #[allow(clippy::too_many_arguments)]
    pub fn put_sum_digest(
        &self,
        study: &str,
        round: u64,
        contribution_hash: &[u8; 32],
        commitment_list_hash: &str,
        list_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let signature = identity.sign_hex(&sum_digest_statement(
            study,
            member,
            round,
            contribution_hash,
            commitment_list_hash,
            list_hash,
            aggregate_hash,
            digest,
        ));
        self.upload(routes::SUM_DIGEST, study, round, digest, signature)
    }

    /// The contributors' signed digests of a round, waiting up to `wait` until
    /// at least `count` are in (or the round is done or failed).
    pub fn sum_digests(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(
            routes::SUM_DIGESTS,
            study,
            round,
            count,
            wait,
            ListPart::All,
        )
    }

    /// `part` of [`Self::sum_digests`] (as for
    /// [`Self::round_commitments_part`]).
    pub fn sum_digests_part(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
        part: ListPart<'_>,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(routes::SUM_DIGESTS, study, round, count, wait, part)
    }

    /// Uploads this member's signed digest of its own decryption share, made
    /// on the challenge of the combined share with hash `combined_hash`
    /// (`fedhe_crypto::SumChallenge::derive_for_shares`; `decrypting_set`
    /// empty for n-of-n).
    #[allow(clippy::too_many_arguments)]
    pub fn put_share_digest(
        &self,
        study: &str,
        round: u64,
        share_hash: &[u8; 32],
        share_list_hash: &[u8; 32],
        combined_hash: &[u8; 32],
        aggregate_hash: &[u8; 32],
        decrypting_set: &[String],
        digest: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let signature = identity.sign_hex(&share_digest_statement(
            study,
            member,
            round,
            share_hash,
            share_list_hash,
            combined_hash,
            aggregate_hash,
            decrypting_set,
            digest,
        ));
        self.upload(routes::SHARE_DIGEST, study, round, digest, signature)
    }

    /// The share makers' signed digests of their decryption shares, waiting
    /// up to `wait` until at least `count` are in (or the round failed).
    pub fn share_digests(
        &self,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
    ) -> Result<SumDigestList, ClientError> {
        self.digests(
            routes::SHARE_DIGESTS,
            study,
            round,
            count,
            wait,
            ListPart::All,
        )
    }

    /// `part` of the signed list `list` (a route with captures study and
    /// round) of a round (`?signatures=`, `?members=`).
    fn list_part<T: serde::de::DeserializeOwned + CompactList>(
        &self,
        list: &'static str,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<T, ClientError> {
        self.list(&format!(
            "{}{}",
            routes::fill(list, &[&study, &round]),
            part.query()
        ))
    }

    fn digests(
        &self,
        kind: &'static str,
        study: &str,
        round: u64,
        count: usize,
        wait: Duration,
        part: ListPart<'_>,
    ) -> Result<SumDigestList, ClientError> {
        let signatures = part.query().replace('?', "&");
        self.list(&format!(
            "{}?count={count}&wait={}{signatures}",
            routes::fill(kind, &[&study, &round]),
            wait.as_secs_f64()
        ))
    }

    /// A signed list, asked for in the compact encoding
    /// (`fedhe_api::compact`: raw hashes and signatures, under half the
    /// bytes of hex JSON) and decoded from whichever of the two the server
    /// answers (a server without it answers JSON).
    fn list<T: serde::de::DeserializeOwned + CompactList>(
        &self,
        path: &str,
    ) -> Result<T, ClientError> {
        let answer = self.send(
            Method::GET,
            path,
            Vec::new(),
            JSON,
            &[("accept", format!("{COMPACT_LIST}, {JSON}"))],
        )?;
        if answer.content_type == COMPACT_LIST {
            T::from_compact(&answer.body).map_err(|e| ClientError::Decode(format!("{path}: {e}")))
        } else {
            serde_json::from_slice(&answer.body)
                .map_err(|e| ClientError::Decode(format!("{path}: {e}")))
        }
    }

    /// The combined decryption share of a finished round
    /// (`fedhe_crypto::CombinedShare` bytes).
    pub fn combined_share(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::COMBINED_SHARE, &[&study, &round]))
    }

    /// The signed contributions of a round and the aggregate's hash.
    pub fn contributions(&self, study: &str, round: u64) -> Result<ContributionList, ClientError> {
        self.contributions_part(study, round, ListPart::All)
    }

    /// `part` of a round's contribution list ([`ListPart`]): a member checks
    /// a contribution's own signature only where its contributor sent no
    /// signed digest (issue 16).
    pub fn contributions_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<ContributionList, ClientError> {
        self.list_part(routes::CONTRIBUTIONS, study, round, part)
    }

    /// The server's counters, Prometheus text (administrator).
    pub fn metrics(&self) -> Result<String, ClientError> {
        Ok(String::from_utf8_lossy(&self.bytes("/metrics")?).into_owned())
    }

    /// A link to the server's `/ui` pages for a browser (administrator).
    pub fn ui_ticket(&self) -> Result<UiTicket, ClientError> {
        self.json(Method::POST, routes::UI_TICKETS, None::<&()>)
    }

    /// The signed decryption shares of a round and the aggregate's hash.
    pub fn decryption_shares(
        &self,
        study: &str,
        round: u64,
    ) -> Result<DecryptionShareList, ClientError> {
        self.decryption_shares_part(study, round, ListPart::All)
    }

    /// `part` of a round's signed decryption shares (as for
    /// [`Self::contributions_part`]).
    pub fn decryption_shares_part(
        &self,
        study: &str,
        round: u64,
        part: ListPart<'_>,
    ) -> Result<DecryptionShareList, ClientError> {
        self.list_part(routes::DECRYPTION_SHARES, study, round, part)
    }

    /// One member's decryption share.
    pub fn decryption_share(
        &self,
        study: &str,
        round: u64,
        member: &str,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::DECRYPTION_SHARE,
            &[&study, &round, &member],
        ))
    }

    /// One member's contribution.
    pub fn contribution(
        &self,
        study: &str,
        round: u64,
        member: &str,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::CONTRIBUTION,
            &[&study, &round, &member],
        ))
    }

    /// The aggregate, waiting up to `wait` for it.
    pub fn aggregate(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
    ) -> Result<Vec<u8>, ClientError> {
        self.bytes(&format!(
            "{}?wait={}",
            routes::fill(routes::AGGREGATE, &[&study, &round]),
            wait.as_secs_f64()
        ))
    }

    /// The carries of a round's aggregate (`fedhe_crypto::C1Carries` bytes).
    pub fn aggregate_carries(&self, study: &str, round: u64) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::AGGREGATE_CARRIES, &[&study, &round]))
    }

    /// The result, waiting up to `wait` for it.
    pub fn result(
        &self,
        study: &str,
        round: u64,
        wait: Duration,
    ) -> Result<RoundResult, ClientError> {
        self.json(
            Method::GET,
            &format!(
                "{}?wait={}",
                routes::fill(routes::RESULT, &[&study, &round]),
                wait.as_secs_f64()
            ),
            None::<&()>,
        )
    }

    /// `GET /readyz` answers 200.
    pub fn ready(&self) -> bool {
        self.send(Method::GET, routes::READYZ, Vec::new(), JSON, &[])
            .is_ok()
    }
}
