//! Every path of the REST API in one table: the server declares its routes
//! with these templates (axum's `{capture}` syntax, as `/openapi.json`
//! prints them) and the client fills them with [`fill`], so a path is
//! written once.

/// Key ceremonies (`POST` creates one).
pub const CEREMONIES: &str = "/v1/ceremonies";
/// One ceremony's status.
pub const CEREMONY: &str = "/v1/ceremonies/{ceremony}";
/// A member's commitment to its public-key share.
pub const CEREMONY_COMMITMENT: &str = "/v1/ceremonies/{ceremony}/commitments/{member}";
/// A member's revealed public-key share.
pub const PUBLIC_KEY_SHARE: &str = "/v1/ceremonies/{ceremony}/public-key-shares/{member}";
/// The ceremony's transcript.
pub const TRANSCRIPT: &str = "/v1/ceremonies/{ceremony}/transcript";
/// The collective public key.
pub const COLLECTIVE_KEY: &str = "/v1/ceremonies/{ceremony}/collective-key";
/// A member's threshold dealing.
pub const DEALING: &str = "/v1/ceremonies/{ceremony}/dealings/{member}";
/// One dealer's dealing for one recipient.
pub const DEALING_FOR: &str = "/v1/ceremonies/{ceremony}/dealings/{dealer}/for/{recipient}";
/// A member's verdicts on the dealings it received.
pub const DEALING_VERDICT: &str = "/v1/ceremonies/{ceremony}/dealing-verdicts/{member}";
/// The members' result keys (`PUT` uploads this member's).
pub const RESULT_KEYS: &str = "/v1/ceremonies/{ceremony}/result-keys";
/// One member's result-key message.
pub const RESULT_KEY: &str = "/v1/ceremonies/{ceremony}/result-keys/{member}";
/// The whole audit trail (administrator).
pub const AUDIT: &str = "/v1/audit";
/// One ceremony's audit trail.
pub const CEREMONY_AUDIT: &str = "/v1/ceremonies/{ceremony}/audit";
/// A member's signed audit head.
pub const AUDIT_HEAD: &str = "/v1/ceremonies/{ceremony}/audit-heads/{member}";
/// Studies (`POST` creates one).
pub const STUDIES: &str = "/v1/studies";
/// One study's status.
pub const STUDY: &str = "/v1/studies/{study}";
/// One round (`PUT` opens it).
pub const ROUND: &str = "/v1/studies/{study}/rounds/{round}";
/// A member's commitment to its round's uploads.
pub const ROUND_COMMITMENT: &str = "/v1/studies/{study}/rounds/{round}/commitments/{member}";
/// The round's commitments.
pub const ROUND_COMMITMENTS: &str = "/v1/studies/{study}/rounds/{round}/commitments";
/// A member's claim to decrypt a threshold round.
pub const DECRYPTION_CLAIM: &str = "/v1/studies/{study}/rounds/{round}/decryption-claims/{member}";
/// A member's encrypted contribution.
pub const CONTRIBUTION: &str = "/v1/studies/{study}/rounds/{round}/contributions/{member}";
/// The round's contributions (their signed list).
pub const CONTRIBUTIONS: &str = "/v1/studies/{study}/rounds/{round}/contributions";
/// The round's aggregate.
pub const AGGREGATE: &str = "/v1/studies/{study}/rounds/{round}/aggregate";
/// The aggregate's carries.
pub const AGGREGATE_CARRIES: &str = "/v1/studies/{study}/rounds/{round}/aggregate-carries";
/// A member's decryption share.
pub const DECRYPTION_SHARE: &str = "/v1/studies/{study}/rounds/{round}/decryption-shares/{member}";
/// The round's decryption shares (their signed list).
pub const DECRYPTION_SHARES: &str = "/v1/studies/{study}/rounds/{round}/decryption-shares";
/// The combined (blinded) decryption share.
pub const COMBINED_SHARE: &str = "/v1/studies/{study}/rounds/{round}/combined-share";
/// The round's result, as the server holds it (blinded).
pub const RESULT: &str = "/v1/studies/{study}/rounds/{round}/result";
/// A member's digest of the sum it verified.
pub const SUM_DIGEST: &str = "/v1/studies/{study}/rounds/{round}/sum-digests/{member}";
/// The round's sum digests.
pub const SUM_DIGESTS: &str = "/v1/studies/{study}/rounds/{round}/sum-digests";
/// A member's digest of the combined share it verified.
pub const SHARE_DIGEST: &str = "/v1/studies/{study}/rounds/{round}/share-digests/{member}";
/// The round's share digests.
pub const SHARE_DIGESTS: &str = "/v1/studies/{study}/rounds/{round}/share-digests";
/// One-use tickets for `/ui` (administrator).
pub const UI_TICKETS: &str = "/v1/ui-tickets";
/// Liveness.
pub const HEALTHZ: &str = "/healthz";
/// Readiness (the store answers).
pub const READYZ: &str = "/readyz";
/// Prometheus metrics (administrator).
pub const METRICS: &str = "/metrics";
/// This API's OpenAPI document.
pub const OPENAPI: &str = "/openapi.json";

/// Every path of the table, for tests that hold the server's routes to it.
pub const ALL: &[&str] = &[
    CEREMONIES,
    CEREMONY,
    CEREMONY_COMMITMENT,
    PUBLIC_KEY_SHARE,
    TRANSCRIPT,
    COLLECTIVE_KEY,
    DEALING,
    DEALING_FOR,
    DEALING_VERDICT,
    RESULT_KEYS,
    RESULT_KEY,
    AUDIT,
    CEREMONY_AUDIT,
    AUDIT_HEAD,
    STUDIES,
    STUDY,
    ROUND,
    ROUND_COMMITMENT,
    ROUND_COMMITMENTS,
    DECRYPTION_CLAIM,
    CONTRIBUTION,
    CONTRIBUTIONS,
    AGGREGATE,
    AGGREGATE_CARRIES,
    DECRYPTION_SHARE,
    DECRYPTION_SHARES,
    COMBINED_SHARE,
    RESULT,
    SUM_DIGEST,
    SUM_DIGESTS,
    SHARE_DIGEST,
    SHARE_DIGESTS,
    UI_TICKETS,
    HEALTHZ,
    READYZ,
    METRICS,
    OPENAPI,
];

/// `template` with its captures (`{name}`) replaced, in order, by `values`.
/// The values are ids the server accepts (no `/`, `?` or `{`) and numbers.
///
/// # Panics
/// When `values` has another count than the template's captures: a
/// programming error, caught by the client's tests of each path.
pub fn fill(template: &str, values: &[&dyn std::fmt::Display]) -> String {
    let mut out = String::with_capacity(template.len() + 16 * values.len());
    let mut values = values.iter();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        let value = values
            .next()
            .unwrap_or_else(|| panic!("{template}: fewer values than captures"));
        out.push_str(&value.to_string());
        rest = &rest[close..];
    }
    out.push_str(rest);
    assert!(
        values.next().is_none(),
        "{template}: more values than captures"
    );
    out
}

/// The names of `template`'s captures, in order.
pub fn captures(template: &str) -> Vec<&str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(name, _)| name))
        .collect()
}

/// The values of `template`'s captures in `path`, in order, when `path` is
/// `template` filled (each capture one non-empty segment, every other
/// segment equal); `None` otherwise. The inverse of [`fill`].
pub fn matches<'p>(template: &str, path: &'p str) -> Option<Vec<&'p str>> {
    let (mut wanted, mut given) = (template.split('/'), path.split('/'));
    let mut values = Vec::new();
    loop {
        match (wanted.next(), given.next()) {
            (None, None) => return Some(values),
            (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') => {
                if g.is_empty() {
                    return None;
                }
                values.push(g);
            }
            (Some(w), Some(g)) if w == g => {}
            _ => return None,
        }
    }
}

/// The route of the table `path` is ([`ALL`]; no two templates match the
/// same path) and its capture values, or `None` for a path outside the API.
pub fn route_of(path: &str) -> Option<(&'static str, Vec<&str>)> {
    ALL.iter()
        .find_map(|template| matches(template, path).map(|values| (*template, values)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_puts_each_value_in_its_capture_and_counts_them() {
        assert_eq!(
            fill(DEALING_FOR, &[&"c1", &"alice", &"bob"]),
            "/v1/ceremonies/c1/dealings/alice/for/bob"
        );
        assert_eq!(
            fill(RESULT, &[&"s", &7u64]),
            "/v1/studies/s/rounds/7/result"
        );
        assert_eq!(fill(STUDIES, &[]), STUDIES);
        assert!(std::panic::catch_unwind(|| fill(ROUND, &[&"s"])).is_err());
        assert!(std::panic::catch_unwind(|| fill(STUDY, &[&"s", &1])).is_err());
        assert_eq!(captures(DEALING_FOR), ["ceremony", "dealer", "recipient"]);
        assert_eq!(
            matches(DEALING_FOR, "/v1/ceremonies/c1/dealings/alice/for/bob"),
            Some(vec!["c1", "alice", "bob"])
        );
        for other in [
            "/v1/ceremonies/c1/dealings/alice/for",
            "/v1/ceremonies/c1/dealings/alice/to/bob",
            "/v1/ceremonies/c1/dealings//for/bob",
            "/v1/ceremonies/c1/dealings/alice/for/bob/",
        ] {
            assert_eq!(matches(DEALING_FOR, other), None, "{other}");
        }
        assert_eq!(
            route_of("/v1/studies/s/rounds/2"),
            Some((ROUND, vec!["s", "2"]))
        );
        assert_eq!(route_of("/v1/studies/s/rounds/2/other"), None);
        assert_eq!(route_of("/ui/login"), None);
        // Every path is absolute, its captures well formed, none twice.
        for path in ALL {
            assert!(path.starts_with('/'), "{path}");
            let names = captures(path);
            assert_eq!(names.len(), path.matches('{').count(), "{path}");
            assert_eq!(names.len(), path.matches('}').count(), "{path}");
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{path}");
            // Filled, it is this route and no other, with its values back.
            let values: Vec<String> = (0..names.len()).map(|i| format!("v{i}")).collect();
            let shown: Vec<&dyn std::fmt::Display> =
                values.iter().map(|v| v as &dyn std::fmt::Display).collect();
            let filled = fill(path, &shown);
            let matching: Vec<&&str> = ALL
                .iter()
                .filter(|t| matches(t, &filled).is_some())
                .collect();
            assert_eq!(matching, [path], "{filled}");
            assert_eq!(
                route_of(&filled),
                Some((*path, values.iter().map(String::as_str).collect()))
            );
        }
    }
}
