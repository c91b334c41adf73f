//! Verify before decrypt (DESIGN.md §2 step 4, §6). A member produces a
//! decryption share of an aggregate only if
//!
//! 1. the aggregate's hash is the one the server lists with the contributions;
//! 2. every listed contribution is signed by a distinct ceremony member over
//!    (study, round, hash), and the bytes it fetched have that hash;
//! 3. at least `min_contributors` members contributed (the member's own
//!    floor, not the server's word);
//! 4. its own contribution, if it sent one, is listed byte for byte;
//! 5. the aggregate is exactly the sum of the listed contributions;
//! 6. it never produced a share for this round before ([`crate::ShareLedger`]).
//!
//! So a server that deviates cannot have one member's contribution decrypted
//! alone, cannot decrypt a round twice over different member sets, and cannot
//! slip in contributions no member signed.

use fedhe_api::signing::{parse_public_key, upload_statement, verify_hex};
use fedhe_api::{ContributionList, MemberSpec, UploadKind};
use fedhe_crypto::{EncryptedVector, Params, WireObject};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Why a member refused to produce a decryption share.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to decrypt round {round} of study {study}: {reason}")]
pub struct Refusal {
    /// The study.
    pub study: String,
    /// The round.
    pub round: u64,
    /// What check failed.
    pub reason: String,
}

/// What a member checks before decrypting.
pub struct Evidence<'a> {
    /// The study.
    pub study: &'a str,
    /// The round.
    pub round: u64,
    /// The ceremony's members with their identity keys (from the member's own
    /// verified transcript, not from the server's word of the moment).
    pub members: &'a [MemberSpec],
    /// The member's own floor on distinct contributors.
    pub min_contributors: usize,
    /// The server's list of contributions.
    pub list: &'a ContributionList,
    /// The bytes of each listed contribution, as fetched.
    pub contributions: &'a [(String, Vec<u8>)],
    /// The aggregate's bytes, as fetched.
    pub aggregate: &'a [u8],
    /// This member and its own contribution, if it sent one.
    pub own: Option<(&'a str, &'a [u8])>,
}

/// The fetched bytes of `member`'s contribution.
fn fetched<'e>(ev: &'e Evidence<'_>, member: &str) -> Result<&'e [u8], String> {
    ev.contributions
        .iter()
        .find(|(m, _)| m == member)
        .map(|(_, b)| b.as_slice())
        .ok_or_else(|| format!("the contribution of {member} was not fetched"))
}

/// Runs checks 1-5 and returns the decoded aggregate.
pub fn verify_before_decrypt(
    params: &Arc<Params>,
    ev: &Evidence<'_>,
) -> Result<EncryptedVector, Refusal> {
    let refuse = |reason: String| Refusal {
        study: ev.study.to_string(),
        round: ev.round,
        reason,
    };
    let aggregate_hash = blake3::hash(ev.aggregate).to_hex().to_string();
    if ev.list.aggregate_hash.as_deref() != Some(aggregate_hash.as_str()) {
        return Err(refuse(format!(
            "the aggregate's hash {aggregate_hash} is not the listed {:?}",
            ev.list.aggregate_hash
        )));
    }
    let mut seen = BTreeSet::new();
    for upload in &ev.list.contributions {
        let member = ev
            .members
            .iter()
            .find(|m| m.id == upload.member)
            .ok_or_else(|| refuse(format!("{} is not a ceremony member", upload.member)))?;
        if !seen.insert(upload.member.as_str()) {
            return Err(refuse(format!("{} is listed twice", upload.member)));
        }
        let key = parse_public_key(&member.identity_key)
            .map_err(|e| refuse(format!("identity key of {}: {e}", member.id)))?;
        let hash: [u8; 32] = fedhe_api::signing::decode_fixed(&upload.hash, "hash")
            .map_err(|e| refuse(e.to_string()))?;
        verify_hex(
            &key,
            &upload_statement(
                UploadKind::Contribution,
                ev.study,
                &member.id,
                ev.round,
                &hash,
            ),
            &upload.signature,
            "contribution",
        )
        .map_err(|e| refuse(format!("the contribution listed for {}: {e}", member.id)))?;
        let bytes = fetched(ev, &upload.member).map_err(refuse)?;
        if blake3::hash(bytes).as_bytes() != &hash {
            return Err(refuse(format!(
                "the bytes served for {} do not have the signed hash",
                upload.member
            )));
        }
    }
    if seen.len() < ev.min_contributors.max(1) {
        return Err(refuse(format!(
            "{} distinct members contributed; at least {} are required",
            seen.len(),
            ev.min_contributors.max(1)
        )));
    }
    if let Some((me, own)) = ev.own {
        let listed = ev.list.contributions.iter().find(|u| u.member == me);
        match listed {
            None => {
                return Err(refuse(format!(
                    "my own contribution ({me}) is not included"
                )))
            }
            Some(u) if u.hash != blake3::hash(own).to_hex().as_str() => {
                return Err(refuse(format!(
                    "the contribution listed for me ({me}) is not the one I sent"
                )))
            }
            Some(_) => {}
        }
    }
    let mut sum: Option<EncryptedVector> = None;
    for upload in &ev.list.contributions {
        let bytes = fetched(ev, &upload.member).map_err(refuse)?;
        let v = EncryptedVector::from_bytes(params, bytes)
            .map_err(|e| refuse(format!("the contribution of {}: {e}", upload.member)))?;
        match &mut sum {
            None => sum = Some(v),
            Some(acc) => acc
                .add_assign(&v)
                .map_err(|e| refuse(format!("the contribution of {}: {e}", upload.member)))?,
        }
    }
    let sum = sum.ok_or_else(|| refuse("no contributions are listed".into()))?;
    if sum.to_bytes(params) != ev.aggregate {
        return Err(refuse(
            "the aggregate is not the sum of the listed contributions".into(),
        ));
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_api::signing::upload_statement;
    use fedhe_api::{Identity, RoundState, SignedUpload};
    use fedhe_crypto::{
        CeremonyId, CollectivePublicKey, CommonRandomPoly, FixedPointCodec, InsecurePolicy,
        MemberId, ParameterSet, PublicKeyShare, SecretKeyShare,
    };
    use fedhe_ring::Csprng;

    struct World {
        params: Arc<Params>,
        members: Vec<MemberSpec>,
        identities: Vec<Identity>,
        contributions: Vec<(String, Vec<u8>)>,
    }

    /// Three members, each with a signed contribution of one value.
    fn world() -> World {
        let params = ParameterSet::TOY_N1024
            .validate(InsecurePolicy::Allow)
            .unwrap();
        let names = ["a", "b", "c"];
        let ids: Vec<MemberId> = names.iter().map(|n| MemberId::new(*n).unwrap()).collect();
        let crs =
            CommonRandomPoly::for_ceremony(&params, &CeremonyId::new("c").unwrap(), &ids).unwrap();
        let mut rng = Csprng::from_u128_seed(3);
        let shares: Vec<PublicKeyShare> = ids
            .iter()
            .map(|m| {
                let sk = SecretKeyShare::generate(&params, m.clone(), &mut rng);
                PublicKeyShare::generate(&params, &sk, &crs, &mut rng).unwrap()
            })
            .collect();
        let key = CollectivePublicKey::aggregate(&crs, &ids, &shares).unwrap();
        let codec = FixedPointCodec::new(&params, 3, 10.0).unwrap();
        let identities: Vec<Identity> = names.iter().map(|_| Identity::generate()).collect();
        let contributions = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v =
                    EncryptedVector::encrypt(&params, &key, &codec, &[i as f64], &mut rng).unwrap();
                (n.to_string(), v.to_bytes(&params))
            })
            .collect();
        World {
            members: names
                .iter()
                .zip(&identities)
                .map(|(n, id)| MemberSpec {
                    id: n.to_string(),
                    identity_key: id.public_key_hex(),
                })
                .collect(),
            params,
            identities,
            contributions,
        }
    }

    impl World {
        fn signed(&self, i: usize, bytes: &[u8]) -> SignedUpload {
            let hash = blake3::hash(bytes);
            SignedUpload {
                member: self.members[i].id.clone(),
                hash: hash.to_hex().to_string(),
                signature: self.identities[i].sign_hex(&upload_statement(
                    UploadKind::Contribution,
                    "s",
                    &self.members[i].id,
                    1,
                    hash.as_bytes(),
                )),
            }
        }

        fn sum(&self, which: &[usize]) -> Vec<u8> {
            let vs: Vec<EncryptedVector> = which
                .iter()
                .map(|i| {
                    EncryptedVector::from_bytes(&self.params, &self.contributions[*i].1).unwrap()
                })
                .collect();
            EncryptedVector::sum(vs.iter())
                .unwrap()
                .to_bytes(&self.params)
        }

        fn check(
            &self,
            list: Vec<SignedUpload>,
            aggregate: &[u8],
            min: usize,
            own: Option<usize>,
        ) -> Result<EncryptedVector, Refusal> {
            let list = ContributionList {
                state: RoundState::Decrypting,
                contributions: list,
                aggregate_hash: Some(blake3::hash(aggregate).to_hex().to_string()),
            };
            let own = own.map(|i| {
                (
                    self.members[i].id.as_str(),
                    self.contributions[i].1.as_slice(),
                )
            });
            verify_before_decrypt(
                &self.params,
                &Evidence {
                    study: "s",
                    round: 1,
                    members: &self.members,
                    min_contributors: min,
                    list: &list,
                    contributions: &self.contributions,
                    aggregate,
                    own,
                },
            )
        }
    }

    fn reason(r: Result<EncryptedVector, Refusal>) -> String {
        r.err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "accepted".into())
    }

    #[test]
    fn an_honest_aggregate_is_accepted() {
        let w = world();
        let list = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        assert!(w.check(list, &w.sum(&[0, 1, 2]), 3, Some(0)).is_ok());
    }

    #[test]
    fn a_deviating_server_is_refused() {
        let w = world();
        let all: Vec<SignedUpload> = (0..3).map(|i| w.signed(i, &w.contributions[i].1)).collect();
        // A share of one member's contribution alone.
        let r = w.check(vec![all[1].clone()], &w.sum(&[1]), 2, None);
        assert!(reason(r).contains("1 distinct members contributed; at least 2"));
        // My own contribution dropped.
        let r = w.check(all[1..].to_vec(), &w.sum(&[1, 2]), 2, Some(0));
        assert!(reason(r).contains("my own contribution (a) is not included"));
        // An aggregate over other contributions than the listed ones.
        let r = w.check(all[..2].to_vec(), &w.sum(&[0, 1, 2]), 2, None);
        assert!(reason(r).contains("not the sum of the listed"));
        // Impersonation: b's contribution signed by c's key.
        let mut forged = all.clone();
        forged[1].signature = w.identities[2].sign_hex(b"anything");
        let r = w.check(forged, &w.sum(&[0, 1, 2]), 2, None);
        assert!(
            reason(r).contains("does not verify"),
            "{}",
            reason(w.check(vec![], &[], 1, None))
        );
        // The same member listed twice.
        let twice = vec![all[0].clone(), all[0].clone()];
        let r = w.check(twice, &w.sum(&[0, 0]), 1, None);
        assert!(reason(r).contains("listed twice"));
        // A member outside the ceremony.
        let mut stranger = all.clone();
        stranger[2].member = "mallory".into();
        assert!(reason(w.check(stranger, &w.sum(&[0, 1, 2]), 2, None))
            .contains("not a ceremony member"));
        // An aggregate other than the listed hash.
        let list = ContributionList {
            state: RoundState::Decrypting,
            contributions: all,
            aggregate_hash: Some("00".repeat(32)),
        };
        let aggregate = w.sum(&[0, 1, 2]);
        let r = verify_before_decrypt(
            &w.params,
            &Evidence {
                study: "s",
                round: 1,
                members: &w.members,
                min_contributors: 2,
                list: &list,
                contributions: &w.contributions,
                aggregate: &aggregate,
                own: None,
            },
        );
        assert!(reason(r).contains("is not the listed"));
    }
}
