//! The audit trail's routes: the trail, a ceremony's trail, a member's
//! signed head.

use super::*;

impl Client {
    /// The audit trail of a study, oldest first (administrator), every page.
    pub fn audit(&self, study: &str) -> Result<AuditLog, ClientError> {
        let study = fedhe_crypto::MemberId::new(study)
            .map_err(|e| ClientError::Usage(format!("study id: {e}")))?;
        let mut entries = Vec::new();
        loop {
            let after = entries.last().map_or(0, |e: &AuditEntry| e.seq);
            let page: AuditLog = self.json(
                Method::GET,
                &format!("{}?study={}&after={after}", routes::AUDIT, study.as_str()),
                None::<&()>,
            )?;
            if page.entries.is_empty() {
                return Ok(AuditLog { entries });
            }
            entries.extend(page.entries);
        }
    }

    /// A ceremony's hash-chained audit trail (its studies' entries too),
    /// oldest first, the entries with a seq above `after`, every page
    /// (administrator or a member of the ceremony).
    pub fn ceremony_audit(&self, ceremony: &str, after: i64) -> Result<AuditLog, ClientError> {
        let ceremony = fedhe_crypto::MemberId::new(ceremony)
            .map_err(|e| ClientError::Usage(format!("ceremony id: {e}")))?;
        let mut entries: Vec<AuditEntry> = Vec::new();
        loop {
            let from = entries.last().map_or(after, |e| e.seq);
            let page: AuditLog = self.json(
                Method::GET,
                &format!(
                    "{}?after={from}",
                    routes::fill(routes::CEREMONY_AUDIT, &[&ceremony.as_str()])
                ),
                None::<&()>,
            )?;
            if page.entries.is_empty() {
                return Ok(AuditLog { entries });
            }
            if page.entries.iter().any(|e| e.seq <= from) {
                return Err(ClientError::Verification(format!(
                    "the server answered the audit trail after seq {from} with an entry at or before it"
                )));
            }
            entries.extend(page.entries);
        }
    }

    /// Signs `head`, a head of `ceremony`'s trail this member saw, to the
    /// server (`fedhe_api::audit::head_statement`), which records it in the
    /// trail.
    pub fn put_audit_head(
        &self,
        ceremony: &str,
        head: &fedhe_api::AuditHead,
    ) -> Result<fedhe_api::SignedAuditHead, ClientError> {
        let (member, identity) = self.identity()?;
        let signed = fedhe_api::SignedAuditHead {
            head: head.clone(),
            signature: identity.sign_hex(&fedhe_api::audit::head_statement(ceremony, member, head)),
        };
        self.json(
            Method::PUT,
            &routes::fill(routes::AUDIT_HEAD, &[&ceremony, &member]),
            Some(&signed),
        )
    }
}
