//! The ceremonies' routes: create, status, commit-then-reveal of key
//! shares, dealings and their verdicts, result keys.

use super::*;

impl Client {
    /// Creates a ceremony (administrator).
    pub fn create_ceremony(&self, spec: &CeremonySpec) -> Result<CeremonyStatus, ClientError> {
        self.json(Method::POST, routes::CEREMONIES, Some(spec))
    }

    /// A ceremony's status.
    pub fn ceremony(&self, id: &str) -> Result<CeremonyStatus, ClientError> {
        self.json(
            Method::GET,
            &routes::fill(routes::CEREMONY, &[&id]),
            None::<&()>,
        )
    }

    /// A ceremony's status once it has left `phase` or at least `dealt`
    /// members have dealt (whichever is given), or after `wait` (a long
    /// poll; the server caps `wait`).
    pub fn ceremony_wait(
        &self,
        id: &str,
        wait: Duration,
        phase: Option<CeremonyPhase>,
        dealt: Option<usize>,
    ) -> Result<CeremonyStatus, ClientError> {
        let mut path = format!(
            "{}?wait={}",
            routes::fill(routes::CEREMONY, &[&id]),
            wait.as_secs_f64()
        );
        if let Some(p) = phase {
            path.push_str(&format!("&phase={}", p.as_str()));
        }
        if let Some(d) = dealt {
            path.push_str(&format!("&dealt={d}"));
        }
        self.json(Method::GET, &path, None::<&()>)
    }

    /// Commits to a public-key share (its wire bytes), signed.
    pub fn commit(&self, ceremony: &str, share: &[u8]) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(share);
        let commitment = Commitment {
            share_hash: hash.to_hex().to_string(),
            signature: identity.sign_hex(&upload_statement(
                UploadKind::Commitment,
                ceremony,
                member,
                0,
                hash.as_bytes(),
            )),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::CEREMONY_COMMITMENT, &[&ceremony, &member]),
            Some(&commitment),
        )
    }

    /// Reveals the committed public-key share.
    pub fn reveal(&self, ceremony: &str, share: &[u8]) -> Result<UploadReceipt, ClientError> {
        let (member, _) = self.identity()?;
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::PUBLIC_KEY_SHARE, &[&ceremony, &member]),
            share.to_vec(),
            OCTET,
            &[],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// One member's revealed public-key share.
    pub fn public_key_share(&self, ceremony: &str, member: &str) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(
            routes::PUBLIC_KEY_SHARE,
            &[&ceremony, &member],
        ))
    }

    /// The transcript of a complete ceremony.
    pub fn transcript(&self, ceremony: &str) -> Result<Transcript, ClientError> {
        self.json(
            Method::GET,
            &routes::fill(routes::TRANSCRIPT, &[&ceremony]),
            None::<&()>,
        )
    }

    /// The collective public key's wire bytes.
    pub fn collective_key(&self, ceremony: &str) -> Result<Vec<u8>, ClientError> {
        self.bytes(&routes::fill(routes::COLLECTIVE_KEY, &[&ceremony]))
    }

    /// Uploads this member's threshold dealing (its wire bytes), signed.
    pub fn put_dealing(
        &self,
        ceremony: &str,
        dealing: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let (member, identity) = self.identity()?;
        let hash = blake3::hash(dealing);
        let signature = identity.sign_hex(&upload_statement(
            UploadKind::Dealing,
            ceremony,
            member,
            0,
            hash.as_bytes(),
        ));
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::DEALING, &[&ceremony, &member]),
            dealing.to_vec(),
            OCTET,
            &[(HEADER_UPLOAD_SIGNATURE, signature)],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// `dealer`'s dealing with only the share sealed to this member.
    pub fn dealing_for_me(&self, ceremony: &str, dealer: &str) -> Result<Vec<u8>, ClientError> {
        let (member, _) = self.identity()?;
        self.bytes(&routes::fill(
            routes::DEALING_FOR,
            &[&ceremony, &dealer, &member],
        ))
    }

    /// Uploads the ceremony's result-key dealing (this member must be its
    /// first member by id; `fedhe_crypto::ResultKeyDealing` bytes).
    pub fn put_result_keys(
        &self,
        ceremony: &str,
        dealing: &[u8],
    ) -> Result<UploadReceipt, ClientError> {
        let answer = self.send(
            Method::PUT,
            &routes::fill(routes::RESULT_KEYS, &[&ceremony]),
            dealing.to_vec(),
            OCTET,
            &[],
        )?;
        serde_json::from_slice(&answer.body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// The result key sealed to this member (`fedhe_crypto::SealedResultKey`
    /// bytes), or `None` while it has not been dealt (404).
    pub fn result_key_for_me(&self, ceremony: &str) -> Result<Option<Vec<u8>>, ClientError> {
        let (member, _) = self.identity()?;
        match self.bytes(&routes::fill(routes::RESULT_KEY, &[&ceremony, &member])) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(ClientError::Problem { problem, .. }) if problem.status == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// This member's verdict on the Shamir shares it received.
    pub fn put_dealing_verdict(
        &self,
        ceremony: &str,
        verdict: &DealingVerdict,
    ) -> Result<DealingVerdict, ClientError> {
        let (member, _) = self.identity()?;
        self.json(
            Method::PUT,
            &routes::fill(routes::DEALING_VERDICT, &[&ceremony, &member]),
            Some(verdict),
        )
    }
}
