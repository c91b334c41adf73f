//! A member's own policy (issue 15 item 6): the terms no server and no
//! administrator can lower for it, checked against every ceremony, study and
//! round it takes part in. Settings come from `policy.toml` in the member's
//! key folder, and from agent flags, which take precedence; a setting left
//! out does not constrain.
//!
//! ```toml
//! # keys/alpha/policy.toml
//! min_contributors = 4              # decrypt no round with fewer distinct contributors
//! parameter_sets = ["n8192-q124"]   # join studies only under these sets
//! max_rounds = 50                   # decrypt at most rounds 1..=50 of a study
//! spot_checks = 2                   # also download 2 digested contributions per round
//! signature_sampling = 32           # n-of-n: check ⌈32·L/n⌉ of a list's L signatures before decrypting
//! max_epsilon = 4.0                 # join only private studies that cost me at most ε = 4
//! max_delta = 1e-6                  # ... and whose δ is at most 1e-6
//! ```

use crate::keys::KeyDir;
use crate::ClientError;
use serde::{Deserialize, Serialize};

/// The policy file's name in a key folder.
pub const POLICY_FILE: &str = "policy.toml";

/// A member's own terms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberPolicy {
    /// The fewest distinct contributors a round may have before this member
    /// decrypts it: a study whose quorum is lower is refused.
    pub min_contributors: Option<u32>,
    /// The parameter sets (by name) this member accepts a ceremony under.
    pub parameter_sets: Option<Vec<String>>,
    /// The largest round number of a study this member decrypts (each
    /// decrypted round releases one more sum of its data).
    pub max_rounds: Option<u64>,
    /// How many contributions that came with a signed digest this member
    /// still downloads in full, at random, before it decrypts
    /// ([`DEFAULT_SPOT_CHECKS`], none, if unset: the c1 check of
    /// `crate::verify` catches a contributor that colludes with the
    /// server by signing a false digest; `crate::verify`, `SECURITY.md`).
    /// Each checks that contributor's signed digest and c1 commitment
    /// against its bytes, and names it if they differ.
    /// (Decryption shares are not spot-checked: a share maker colluding with
    /// the server could upload any share it liked in the open.)
    pub spot_checks: Option<usize>,
    /// λ of the signatures this member checks before it reveals and before
    /// it decrypts ([`DEFAULT_SIGNATURE_SAMPLING`] if unset;
    /// `crate::verify::SignatureSample`): of a list of L signed entries it
    /// checks a random ⌈λ·L/n⌉ in an n-of-n ceremony, so a server's forged
    /// entry escapes every member of a decryption with probability at most
    /// e^−λ (a value of at least n checks every entry); in t-of-n it checks
    /// every entry whatever λ (`crate::verify::SignatureChecks::for_decryption`).
    pub signature_sampling: Option<usize>,
    /// The largest privacy loss ε this member accepts for a whole study (at
    /// the study's δ): a study whose budget is larger, or which releases
    /// noise-free sums (no guarantee at all), is refused before anything is
    /// evaluated. Unset: no ceiling.
    pub max_epsilon: Option<f64>,
    /// The largest δ this member accepts with that ε: a private study whose
    /// δ is larger (or a noise-free one) is refused. Unset: no ceiling on δ.
    #[serde(default)]
    pub max_delta: Option<f64>,
}

/// λ of the sampled signature checks unless a member's policy says
/// otherwise: a forged entry escapes a whole decryption with probability at
/// most e^−16 (about 10^−7), and a federation of up to 16 members (n-of-n) is
/// checked in full.
pub const DEFAULT_SIGNATURE_SAMPLING: usize = 16;

/// Digested contributions a member downloads per round unless its policy
/// says otherwise: none. Until issue 16's c1 commitments a member downloaded
/// 16 at random (n-of-n) or every one (t-of-n) to catch a contributor that
/// colludes with the server by signing a false digest; the c1 check
/// (`crate::verify` check 7, made by every member every round) catches any
/// such aggregate at one multiscalar multiplication and no download. A
/// policy may still ask for some.
pub const DEFAULT_SPOT_CHECKS: usize = 0;

/// A study or round the member's policy refuses; names the setting.
fn refused(setting: &'static str, detail: String) -> ClientError {
    ClientError::Policy { setting, detail }
}

impl MemberPolicy {
    /// The policy of a key folder: its [`POLICY_FILE`] if there is one
    /// (private like every key file), else no constraint.
    pub fn load(keys: &KeyDir) -> Result<Self, ClientError> {
        if !keys.exists(POLICY_FILE) {
            return Ok(Self::default());
        }
        let bytes = keys.read(POLICY_FILE)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| ClientError::Keys(format!("{POLICY_FILE}: the file is not UTF-8 text")))?;
        let policy: Self =
            toml::from_str(text).map_err(|e| ClientError::Keys(format!("{POLICY_FILE}: {e}")))?;
        policy.validated()
    }

    /// This policy with every setting `over` gives replacing its own.
    pub fn overridden_by(self, over: Self) -> Result<Self, ClientError> {
        Self {
            min_contributors: over.min_contributors.or(self.min_contributors),
            parameter_sets: over.parameter_sets.or(self.parameter_sets),
            max_rounds: over.max_rounds.or(self.max_rounds),
            spot_checks: over.spot_checks.or(self.spot_checks),
            signature_sampling: over.signature_sampling.or(self.signature_sampling),
            max_epsilon: over.max_epsilon.or(self.max_epsilon),
            max_delta: over.max_delta.or(self.max_delta),
        }
        .validated()
    }

    fn validated(self) -> Result<Self, ClientError> {
        if self.min_contributors == Some(0) {
            return Err(ClientError::Usage(
                "policy min_contributors = 0: a round needs at least one contributor".into(),
            ));
        }
        if self.signature_sampling == Some(0) {
            return Err(ClientError::Usage(
                "policy signature_sampling = 0 would check no signature; use at least 1".into(),
            ));
        }
        if self.max_rounds == Some(0) {
            return Err(ClientError::Usage(
                "policy max_rounds = 0 would refuse every round".into(),
            ));
        }
        if let Some(e) = self.max_epsilon {
            if !(e > 0.0 && e.is_finite()) {
                return Err(ClientError::Usage(format!(
                    "policy max_epsilon = {e}: must be positive and finite"
                )));
            }
        }
        if let Some(d) = self.max_delta {
            if !(d > 0.0 && d < 1.0) {
                return Err(ClientError::Usage(format!(
                    "policy max_delta = {d}: must be in (0, 1)"
                )));
            }
        }
        if self.parameter_sets.as_ref().is_some_and(|s| s.is_empty()) {
            return Err(ClientError::Usage(
                "policy parameter_sets = [] would refuse every ceremony".into(),
            ));
        }
        Ok(self)
    }

    /// Refuses a ceremony under a parameter set the policy does not list.
    pub fn check_parameter_set(&self, name: &str) -> Result<(), ClientError> {
        match &self.parameter_sets {
            Some(sets) if !sets.iter().any(|s| s == name) => Err(refused(
                "parameter_sets",
                format!("the ceremony uses {name}; I accept {}", sets.join(", ")),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a study whose quorum is below the policy's floor.
    pub fn check_study(&self, study: &str, min_contributors: u32) -> Result<(), ClientError> {
        match self.min_contributors {
            Some(floor) if min_contributors < floor => Err(refused(
                "min_contributors",
                format!(
                    "study {study} decrypts rounds with {min_contributors} contributors; I require at least {floor}"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a study whose privacy budget `(ε, δ)` is above the policy's
    /// ceiling, or that has none (`None`: noise-free releases).
    pub fn check_privacy(
        &self,
        study: &str,
        budget: Option<(f64, f64)>,
    ) -> Result<(), ClientError> {
        if let (Some(ceiling), Some((epsilon, delta))) = (self.max_delta, budget) {
            if delta > ceiling {
                return Err(refused(
                    "max_delta",
                    format!(
                        "study {study} may cost me ε = {epsilon} at δ = {delta:e}; I accept at most δ = {ceiling:e}"
                    ),
                ));
            }
        }
        let Some(ceiling) = self.max_epsilon else {
            if self.max_delta.is_some() && budget.is_none() {
                return Err(refused(
                    "max_delta",
                    format!("study {study} releases noise-free sums, with no privacy guarantee"),
                ));
            }
            return Ok(());
        };
        match budget {
            None => Err(refused(
                "max_epsilon",
                format!(
                    "study {study} releases noise-free sums, with no privacy guarantee; I accept at most ε = {ceiling}"
                ),
            )),
            Some((epsilon, delta)) if epsilon > ceiling => Err(refused(
                "max_epsilon",
                format!(
                    "study {study} may cost me ε = {epsilon} (δ = {delta:e}); I accept at most ε = {ceiling}"
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    /// Refuses to decrypt a round past the policy's last.
    pub fn check_round(&self, study: &str, round: u64) -> Result<(), ClientError> {
        match self.max_rounds {
            Some(max) if round > max => Err(refused(
                "max_rounds",
                format!("round {round} of study {study} is past the last I decrypt ({max})"),
            )),
            _ => Ok(()),
        }
    }

    /// The quorum this member checks before decrypting: the study's, or its
    /// own floor if that is higher.
    pub fn quorum(&self, study_min_contributors: u32) -> usize {
        study_min_contributors.max(self.min_contributors.unwrap_or(0)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, KeyDir) {
        let dir = tempfile::tempdir().unwrap();
        let keys = KeyDir::open_or_create(dir.path().join("k")).unwrap();
        (dir, keys)
    }

    /// In t-of-n the default downloads every contribution, for a member's
    /// refusal does not stop the round there; in n-of-n it is 16.
    #[test]
    fn a_member_refuses_what_its_policy_does_not_allow() {
        let (_d, keys) = folder();
        // No file: no constraint.
        let open = MemberPolicy::load(&keys).unwrap();
        assert_eq!(open, MemberPolicy::default());
        open.check_study("s", 1).unwrap();
        open.check_round("s", 1_000_000).unwrap();
        open.check_parameter_set("toy-n1024").unwrap();
        keys.write(
            POLICY_FILE,
            b"min_contributors = 4\nparameter_sets = [\"n8192-q124\"]\nmax_rounds = 3\nspot_checks = 2\nsignature_sampling = 40\n",
            false,
        )
        .unwrap();
        let p = MemberPolicy::load(&keys).unwrap();
        // No ceiling: any study's privacy is accepted.
        p.check_privacy("s", None).unwrap();
        let capped = p.clone().overridden_by(MemberPolicy {
            max_epsilon: Some(4.0),
            ..MemberPolicy::default()
        });
        let capped = capped.unwrap();
        let e = capped.check_privacy("s", None).unwrap_err().to_string();
        assert!(e.contains("max_epsilon") && e.contains("noise-free"), "{e}");
        let e = capped
            .check_privacy("s", Some((8.0, 1e-6)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_epsilon") && e.contains("ε = 8"), "{e}");
        capped.check_privacy("s", Some((4.0, 1e-6))).unwrap();
        capped.check_privacy("s", Some((0.0, 0.0))).unwrap();
        // A δ ceiling: a study within ε but at a larger δ is refused naming
        // max_delta, as is a noise-free one; a bad ceiling is refused.
        let tight = capped
            .clone()
            .overridden_by(MemberPolicy {
                max_delta: Some(1e-6),
                ..MemberPolicy::default()
            })
            .unwrap();
        let e = tight
            .check_privacy("s", Some((4.0, 1e-5)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_delta") && e.contains("1e-5"), "{e}");
        tight.check_privacy("s", Some((4.0, 1e-6))).unwrap();
        let delta_only = MemberPolicy {
            max_delta: Some(1e-6),
            ..MemberPolicy::default()
        };
        let e = delta_only.check_privacy("s", None).unwrap_err().to_string();
        assert!(e.contains("max_delta") && e.contains("noise-free"), "{e}");
        delta_only.check_privacy("s", Some((100.0, 1e-7))).unwrap();
        for bad in [0.0, 1.0, -1e-6, f64::NAN] {
            let over = MemberPolicy {
                max_delta: Some(bad),
                ..MemberPolicy::default()
            };
            assert!(p.clone().overridden_by(over).is_err(), "{bad}");
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let over = MemberPolicy {
                max_epsilon: Some(bad),
                ..MemberPolicy::default()
            };
            assert!(p.clone().overridden_by(over).is_err(), "{bad}");
        }
        // The acceptance case: a floor of 4 refuses a study with quorum 3.
        let e = p.check_study("s", 3).unwrap_err().to_string();
        assert!(
            e.contains("min_contributors") && e.contains("at least 4"),
            "{e}"
        );
        p.check_study("s", 4).unwrap();
        assert_eq!((p.quorum(4), p.quorum(6), p.quorum(2)), (4, 6, 4));
        let e = p.check_round("s", 4).unwrap_err().to_string();
        assert!(e.contains("max_rounds") && e.contains("round 4"), "{e}");
        p.check_round("s", 3).unwrap();
        let e = p.check_parameter_set("toy-n1024").unwrap_err().to_string();
        assert!(
            e.contains("parameter_sets") && e.contains("toy-n1024"),
            "{e}"
        );
        p.check_parameter_set("n8192-q124").unwrap();
        // Flags replace the file's settings one by one.
        let flagged = p
            .clone()
            .overridden_by(MemberPolicy {
                min_contributors: Some(2),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(flagged.min_contributors, Some(2));
        assert_eq!(flagged.max_rounds, Some(3));
        assert_eq!(flagged.spot_checks, Some(2));
        assert_eq!(flagged.signature_sampling, Some(40));
    }

    #[test]
    fn a_bad_policy_file_is_refused_naming_what_is_wrong() {
        for (text, needle) in [
            ("min_contributors = 0\n", "min_contributors = 0"),
            ("max_rounds = 0\n", "max_rounds = 0"),
            ("parameter_sets = []\n", "parameter_sets = []"),
            ("min_contributor = 3\n", "unknown field"),
            ("min_contributors = -1\n", "min_contributors"),
            ("min_contributors = \"four\"\n", "min_contributors"),
            ("spot_checks = -1\n", "spot_checks"),
            ("signature_sampling = 0\n", "signature_sampling = 0"),
        ] {
            let (_d, keys) = folder();
            keys.write(POLICY_FILE, text.as_bytes(), false).unwrap();
            let e = MemberPolicy::load(&keys).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
