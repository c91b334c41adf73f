//! Member signatures (DESIGN.md §5, §6): every member request is signed over
//! its method, path, body digest, time and nonce, and every upload carries a
//! signature over what it is (ceremony or study, round, BLAKE3 of the bytes).
//!
//! Each signed message starts with a domain-separation line naming its kind
//! and version, so a signature made for one purpose never verifies for another.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::fmt::Write as _;

/// Header: the member id of a signed request.
pub const HEADER_MEMBER: &str = "fedhe-member";
/// Header: the request time, unix milliseconds.
pub const HEADER_TIMESTAMP: &str = "fedhe-timestamp";
/// Header: a fresh random nonce, 32 hex digits.
pub const HEADER_NONCE: &str = "fedhe-nonce";
/// Header: the ed25519 signature of [`request_message`], hex.
pub const HEADER_SIGNATURE: &str = "fedhe-signature";
/// Header: the ed25519 signature of an upload's [`upload_statement`], hex.
pub const HEADER_UPLOAD_SIGNATURE: &str = "fedhe-upload-signature";
/// Header: hex(BLAKE3(body)), the digest the request signature names, so
/// that the server checks the signature from the headers alone before it
/// reads a byte of the body (issue 45, finding 1), then checks the body
/// against it.
pub const HEADER_CONTENT_DIGEST: &str = "fedhe-content-digest";

/// How far a request's timestamp may be from the server's clock.
pub const MAX_CLOCK_SKEW_MS: i64 = 120_000;

/// Why a signature or key was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignatureError {
    /// Not valid hex of the right length.
    #[error("{what} is not {bytes} bytes of hex")]
    Encoding {
        /// What was being decoded.
        what: &'static str,
        /// The expected length in bytes.
        bytes: usize,
    },
    /// Not a valid ed25519 public key: not a point of the curve, or a point
    /// of small order (all zeros, the identity) under which any message
    /// could be forged.
    #[error("not a valid ed25519 public key (not a curve point, or a small-order point such as all zeros)")]
    InvalidKey,
    /// The signature does not verify under the key.
    #[error("the {0} signature does not verify under the member's identity key")]
    Mismatch(&'static str),
}

/// BLAKE3 of `bytes`, hex (the body digest of a request, the hash of an upload).
pub fn digest_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The message a member signs for one request:
///
/// ```text
/// fedhe-request-v1
/// METHOD
/// /path?query
/// hex(BLAKE3(body))
/// timestamp (unix ms)
/// nonce
/// ```
pub fn request_message(
    method: &str,
    path_and_query: &str,
    body: &[u8],
    timestamp_ms: i64,
    nonce: &str,
) -> Vec<u8> {
    request_message_for_digest(
        method,
        path_and_query,
        &digest_hex(body),
        timestamp_ms,
        nonce,
    )
}

/// The five headers of a member's signed request (one helper for every
/// caller, the client and the server's tests alike): [`HEADER_MEMBER`],
/// [`HEADER_TIMESTAMP`] (now), [`HEADER_NONCE`] (fresh),
/// [`HEADER_SIGNATURE`] (`sign` applied to [`request_message`], hex) and
/// [`HEADER_CONTENT_DIGEST`]. A fresh timestamp and nonce per call: a retry
/// is a new request.
pub fn request_headers(
    member: &str,
    method: &str,
    path_and_query: &str,
    body: &[u8],
    sign: impl FnOnce(&[u8]) -> String,
) -> [(&'static str, String); 5] {
    let timestamp = now_ms();
    let nonce = fresh_nonce();
    let digest = digest_hex(body);
    let signature = sign(&request_message_for_digest(
        method,
        path_and_query,
        &digest,
        timestamp,
        &nonce,
    ));
    [
        (HEADER_MEMBER, member.to_string()),
        (HEADER_TIMESTAMP, timestamp.to_string()),
        (HEADER_NONCE, nonce),
        (HEADER_SIGNATURE, signature),
        (HEADER_CONTENT_DIGEST, digest),
    ]
}

/// [`request_message`] for a body whose digest (`hex(BLAKE3(body))`, as
/// [`HEADER_CONTENT_DIGEST`] carries it) is `body_digest_hex`.
pub fn request_message_for_digest(
    method: &str,
    path_and_query: &str,
    body_digest_hex: &str,
    timestamp_ms: i64,
    nonce: &str,
) -> Vec<u8> {
    let mut m = String::with_capacity(160 + path_and_query.len());
    let _ = write!(
        m,
        "fedhe-request-v1\n{}\n{}\n{}\n{}\n{}",
        method.to_ascii_uppercase(),
        path_and_query,
        body_digest_hex,
        timestamp_ms,
        nonce
    );
    m.into_bytes()
}

/// What a signed upload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadKind {
    /// A commitment to a public-key share (ceremony step 1).
    Commitment,
    /// A member's decryption share of a round's aggregate (step 4).
    DecryptionShare,
    /// A member's threshold dealing (t-of-n ceremony).
    Dealing,
}

impl UploadKind {
    fn label(self) -> &'static str {
        match self {
            Self::Commitment => "fedhe-commitment-v1",
            Self::DecryptionShare => "fedhe-decryption-share-v1",
            Self::Dealing => "fedhe-threshold-dealing-v1",
        }
    }
}

/// The statement a member signs for an upload: its kind, the ceremony or
/// study it belongs to, the member, the round (0 for a ceremony) and BLAKE3 of
/// the uploaded bytes. The server stores the signature and serves it with the
/// object, so every other member can check who sent what.
pub fn upload_statement(
    kind: UploadKind,
    scope: &str,
    member: &str,
    round: u64,
    hash: &[u8; 32],
) -> Vec<u8> {
    format!(
        "{}\n{}\n{}\n{}\n{}",
        kind.label(),
        scope,
        member,
        round,
        hex::encode(hash)
    )
    .into_bytes()
}

/// The statement a member signs to commit to its contribution to a round,
/// before any contribution of the round can be read (DESIGN.md §6): the
/// study, the member, the round, BLAKE3 of the contribution, its value count
/// the hash of the study spec the member recorded, and the hash of its
/// contribution's c1 commitment (`fedhe_crypto::C1Commitment::hash`, issue
/// 16), so that commitment is fixed before any other contribution can be
/// read. A member shown another spec signs another statement, so a split
/// spec is detected by every member that checks the commitment list.
pub fn round_commitment_statement(
    study: &str,
    member: &str,
    round: u64,
    hash: &[u8; 32],
    values: u64,
    spec_hash: &str,
    c1_commitment_hash: &[u8; 32],
) -> Vec<u8> {
    format!(
        "fedhe-round-commitment-v2\n{study}\n{member}\n{round}\n{}\n{values}\n{spec_hash}\n{}",
        hex::encode(hash),
        hex::encode(c1_commitment_hash)
    )
    .into_bytes()
}

/// The statement a member signs when it reveals (uploads) its committed
/// contribution: the contribution's hash and the hash of the frozen
/// commitment list the member saw before revealing. Every member checks that
/// all listed contributions were revealed against the same list it saw, so a
/// server cannot show different members different lists.
pub fn contribution_statement(
    study: &str,
    member: &str,
    round: u64,
    hash: &[u8; 32],
    list_hash: &str,
) -> Vec<u8> {
    format!(
        "fedhe-contribution-v2\n{study}\n{member}\n{round}\n{}\n{list_hash}",
        hex::encode(hash)
    )
    .into_bytes()
}

/// The statement a contributor signs for the digest of its contribution
/// (`fedhe_crypto::sum_digest`): the study, the member, the round, BLAKE3 of
/// its contribution, the hash of the frozen commitment list it revealed
/// against, BLAKE3 of the contribution list and of the aggregate the
/// challenge was derived from, and the digest's bytes (a contribution's sum
/// digest followed by its c1 commitment, `fedhe_crypto::ContributorDigest`).
///
/// Naming the commitment list makes this statement say everything the
/// reveal's [`contribution_statement`] says, so a member that checks a
/// contributor's digest signature need not check its reveal signature as
/// well (issue 16: one signature per contributor before decrypting, not two).
#[allow(clippy::too_many_arguments)]
pub fn sum_digest_statement(
    study: &str,
    member: &str,
    round: u64,
    contribution_hash: &[u8; 32],
    commitment_list_hash: &str,
    list_hash: &[u8; 32],
    aggregate_hash: &[u8; 32],
    digest: &[u8],
) -> Vec<u8> {
    format!(
        "fedhe-sum-digest-v2\n{study}\n{member}\n{round}\n{}\n{commitment_list_hash}\n{}\n{}\n{}",
        hex::encode(contribution_hash),
        hex::encode(list_hash),
        hex::encode(aggregate_hash),
        hex::encode(digest)
    )
    .into_bytes()
}

/// The statement a share maker signs for the digest of its own decryption
/// share (issue 16, verify after decrypt on digests): the study, the member,
/// the round, BLAKE3 of its share, of the decryption-share list
/// (`DecryptionShareList::entries_hash`), of the combined share `D` the
/// challenge was derived from and of the aggregate, the decrypting set
/// (t-of-n: its members, sorted; empty for n-of-n) and the digest's bytes.
#[allow(clippy::too_many_arguments)]
pub fn share_digest_statement(
    study: &str,
    member: &str,
    round: u64,
    share_hash: &[u8; 32],
    share_list_hash: &[u8; 32],
    combined_hash: &[u8; 32],
    aggregate_hash: &[u8; 32],
    decrypting_set: &[String],
    digest: &[u8],
) -> Vec<u8> {
    format!(
        "fedhe-share-digest-v1\n{study}\n{member}\n{round}\n{}\n{}\n{}\n{}\n{}\n{}",
        hex::encode(share_hash),
        hex::encode(share_list_hash),
        hex::encode(combined_hash),
        hex::encode(aggregate_hash),
        decrypting_set.join(","),
        hex::encode(digest)
    )
    .into_bytes()
}

/// The statement the administrator signs for a study spec: its hash
/// ([`crate::StudySpec::hash_hex`]).
pub fn study_spec_statement(spec_hash: &str) -> Vec<u8> {
    format!("fedhe-study-spec-v1\n{spec_hash}").into_bytes()
}

/// A member's ed25519 identity (its signing key; zeroized on drop).
pub struct Identity {
    key: SigningKey,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("public_key", &self.public_key_hex())
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// A fresh identity from the operating system's randomness.
    pub fn generate() -> Self {
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        getrandom_fill(&mut seed[..]);
        Self {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// The identity with this 32-byte secret seed.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self {
            key: SigningKey::from_bytes(seed),
        }
    }

    /// The 32-byte secret seed (for the key file; wiped on drop).
    pub fn seed(&self) -> zeroize::Zeroizing<[u8; 32]> {
        zeroize::Zeroizing::new(self.key.to_bytes())
    }

    /// The signing key (also the X25519 key that opens Shamir shares sealed
    /// to this member).
    pub fn signing_key(&self) -> &SigningKey {
        &self.key
    }

    /// The public key.
    pub fn public_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    /// The public key, hex.
    pub fn public_key_hex(&self) -> String {
        hex::encode(self.public_key().as_bytes())
    }

    /// Signs `message`; the signature in hex.
    pub fn sign_hex(&self, message: &[u8]) -> String {
        hex::encode(self.key.sign(message).to_bytes())
    }
}

/// Fills `out` with random bytes from the operating system.
fn getrandom_fill(out: &mut [u8]) {
    use rand::RngCore;
    rand::rngs::OsRng.fill_bytes(out);
}

/// A fresh request nonce: 16 random bytes, hex.
pub fn fresh_nonce() -> String {
    let mut n = [0u8; 16];
    getrandom_fill(&mut n);
    hex::encode(n)
}

/// Decodes a hex public key.
pub fn parse_public_key(hex_key: &str) -> Result<VerifyingKey, SignatureError> {
    let bytes: [u8; 32] = decode_fixed(hex_key, "public key")?;
    VerifyingKey::from_bytes(&bytes)
        .ok()
        .filter(|key| !key.is_weak())
        .ok_or(SignatureError::InvalidKey)
}

/// Decodes exactly `K` bytes of hex.
pub fn decode_fixed<const K: usize>(
    text: &str,
    what: &'static str,
) -> Result<[u8; K], SignatureError> {
    let text = text.trim();
    let mut out = [0u8; K];
    refuse_hex_prefix(text)
        .and_then(|()| hex::decode_to_slice(text, &mut out))
        .map_err(|_| SignatureError::Encoding { what, bytes: K })?;
    Ok(out)
}

/// Decodes hex as fedhe writes it: hex digits only, of either case.
///
/// The `hex` dependency is `const-hex` (SIMD decoding: a member decodes
/// thousands of list entries a round, issue 16), whose decoders also accept
/// a `0x` prefix; fedhe never writes one and refuses it, as it always has.
pub fn decode_hex(text: &str) -> Result<Vec<u8>, hex::FromHexError> {
    refuse_hex_prefix(text)?;
    hex::decode(text)
}

/// A `0x`/`0X` prefix named as the invalid character it is in plain hex.
fn refuse_hex_prefix(text: &str) -> Result<(), hex::FromHexError> {
    match text.as_bytes() {
        [b'0', c @ (b'x' | b'X'), ..] => Err(hex::FromHexError::InvalidHexCharacter {
            c: char::from(*c),
            index: 1,
        }),
        _ => Ok(()),
    }
}

/// Verifies a hex signature of `message` under `key` (strict verification:
/// no malleable or small-order signatures).
pub fn verify_hex(
    key: &VerifyingKey,
    message: &[u8],
    signature_hex: &str,
    what: &'static str,
) -> Result<(), SignatureError> {
    let bytes: [u8; 64] = decode_fixed(signature_hex, "signature")?;
    let signature = Signature::from_bytes(&bytes);
    key.verify_strict(message, &signature)
        .map_err(|_| SignatureError::Mismatch(what))
}

/// Signatures checked together: one ed25519 batch verification
/// (`ed25519_dalek::verify_batch`) instead of one verification each, about
/// three times less work per signature at a thousand (issue 16).
///
/// A batch accepts exactly the signatures that satisfy ed25519's
/// verification equation without the cofactor; [`verify_hex`] (strict) also
/// refuses some that only their key's holder could have made (a small-order
/// `R`). Nobody without the signing key can make a signature either accepts,
/// and a key's holder can sign any statement it likes anyway, so a batch
/// proves what the single checks prove: each statement was signed by its
/// member. Keys come from [`parse_public_key`], which refuses small-order
/// keys. When a batch fails, every signature is checked alone, strictly, to
/// name the first that does not verify.
#[derive(Default)]
pub struct SignatureBatch<L> {
    keys: Vec<VerifyingKey>,
    messages: Vec<Vec<u8>>,
    signatures: Vec<Signature>,
    labels: Vec<(L, &'static str)>,
}

impl<L> SignatureBatch<L> {
    /// An empty batch.
    pub fn new() -> Self {
        Self {
            keys: Vec::new(),
            messages: Vec::new(),
            signatures: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Adds `signature_hex` of `message` under `key`; `label` names it if it
    /// fails, `what` names its kind in the error. A signature that is not 64
    /// bytes of hex is refused at once.
    pub fn push(
        &mut self,
        key: VerifyingKey,
        message: Vec<u8>,
        signature_hex: &str,
        what: &'static str,
        label: L,
    ) -> Result<(), (L, SignatureError)> {
        let bytes: [u8; 64] = match decode_fixed(signature_hex, "signature") {
            Ok(b) => b,
            Err(e) => return Err((label, e)),
        };
        self.keys.push(key);
        self.messages.push(message);
        self.signatures.push(Signature::from_bytes(&bytes));
        self.labels.push((label, what));
        Ok(())
    }

    /// How many signatures the batch holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the batch holds no signature.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Checks every signature; on failure returns the label of the first
    /// (in the order pushed) that does not verify alone.
    pub fn verify(self) -> Result<(), (L, SignatureError)> {
        if self.keys.is_empty() {
            return Ok(());
        }
        let messages: Vec<&[u8]> = self.messages.iter().map(Vec::as_slice).collect();
        if ed25519_dalek::verify_batch(&messages, &self.signatures, &self.keys).is_ok() {
            return Ok(());
        }
        // The first that fails alone. If none does (impossible for ed25519
        // signatures that verify strictly), refuse rather than accept.
        let failed = (0..self.keys.len())
            .find(|&i| {
                self.keys[i]
                    .verify_strict(&self.messages[i], &self.signatures[i])
                    .is_err()
            })
            .unwrap_or(0);
        let (label, what) = self
            .labels
            .into_iter()
            .nth(failed)
            .expect("an index of a non-empty batch");
        Err((label, SignatureError::Mismatch(what)))
    }
}

/// The current time in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_its_message_and_key() {
        let id = Identity::generate();
        let msg = request_message("put", "/v1/x?wait=1", b"body", 5, "n1");
        let sig = id.sign_hex(&msg);
        let key = parse_public_key(&id.public_key_hex()).unwrap();
        verify_hex(&key, &msg, &sig, "request").unwrap();
        let other = request_message("PUT", "/v1/x?wait=1", b"bodY", 5, "n1");
        assert_eq!(
            verify_hex(&key, &other, &sig, "request"),
            Err(SignatureError::Mismatch("request"))
        );
        let stranger = Identity::generate();
        let key2 = parse_public_key(&stranger.public_key_hex()).unwrap();
        assert!(verify_hex(&key2, &msg, &sig, "request").is_err());
        assert!(verify_hex(&key, &msg, "zz", "request").is_err());
        assert!(parse_public_key("00").is_err());
        // Small-order points (all zeros, the identity) and non-points.
        for weak in [[0u8; 32], {
            let mut one = [0u8; 32];
            one[0] = 1;
            one
        }] {
            assert!(matches!(
                parse_public_key(&hex::encode(weak)),
                Err(SignatureError::InvalidKey)
            ));
        }
    }

    /// A batch accepts exactly when every signature verifies alone
    /// (`verify_hex`, strict, the reference), and names the first that does
    /// not.
    #[test]
    fn a_batch_agrees_with_single_strict_verification_and_names_the_first_failure() {
        let ids: Vec<Identity> = (0..40).map(|_| Identity::generate()).collect();
        let statements: Vec<Vec<u8>> = (0..40)
            .map(|i| {
                sum_digest_statement(
                    "s",
                    &format!("m{i}"),
                    1,
                    &[i as u8; 32],
                    "l",
                    &[1; 32],
                    &[2; 32],
                    &[i as u8],
                )
            })
            .collect();
        let mut signatures: Vec<String> = ids
            .iter()
            .zip(&statements)
            .map(|(id, m)| id.sign_hex(m))
            .collect();
        let keys: Vec<VerifyingKey> = ids
            .iter()
            .map(|id| parse_public_key(&id.public_key_hex()).unwrap())
            .collect();
        let batch_of = |signatures: &[String]| {
            let mut batch = SignatureBatch::new();
            for (i, sig) in signatures.iter().enumerate() {
                batch
                    .push(keys[i], statements[i].clone(), sig, "sum digest", i)
                    .unwrap();
            }
            batch
        };
        let reference = |signatures: &[String]| {
            (0..40).find(|&i| {
                verify_hex(&keys[i], &statements[i], &signatures[i], "sum digest").is_err()
            })
        };
        assert_eq!(reference(&signatures), None);
        assert_eq!(batch_of(&signatures).len(), 40);
        assert_eq!(batch_of(&signatures).verify(), Ok(()));
        assert_eq!(SignatureBatch::<usize>::new().verify(), Ok(()));
        // Signed by another member's key, and a statement signed for another.
        signatures[33] = ids[34].sign_hex(&statements[33]);
        signatures[17] = ids[17].sign_hex(&statements[18]);
        assert_eq!(reference(&signatures), Some(17));
        assert_eq!(
            batch_of(&signatures).verify(),
            Err((17, SignatureError::Mismatch("sum digest")))
        );
        signatures[17] = ids[17].sign_hex(&statements[17]);
        assert_eq!(reference(&signatures), Some(33));
        assert_eq!(batch_of(&signatures).verify().unwrap_err().0, 33);
        // Not a signature's hex: refused when pushed, naming the entry.
        let mut batch = SignatureBatch::new();
        assert_eq!(
            batch.push(keys[0], statements[0].clone(), "zz", "sum digest", 7),
            Err((
                7,
                SignatureError::Encoding {
                    what: "signature",
                    bytes: 64
                }
            ))
        );
        assert!(batch.is_empty());
    }

    #[test]
    fn statements_of_different_kinds_differ() {
        let h = [7u8; 32];
        let a = upload_statement(UploadKind::Commitment, "s", "m", 1, &h);
        let b = upload_statement(UploadKind::DecryptionShare, "s", "m", 1, &h);
        assert_ne!(a, b);
        let c = round_commitment_statement("s", "m", 1, &h, 3, "x", &h);
        let d = contribution_statement("s", "m", 1, &h, "x");
        assert!(c.starts_with(b"fedhe-round-commitment-v2\n"));
        assert!(d.starts_with(b"fedhe-contribution-v2\n"));
        assert_ne!(c, round_commitment_statement("s", "m", 1, &h, 4, "x", &h));
        assert_ne!(c, round_commitment_statement("s", "m", 1, &h, 3, "y", &h));
        assert_ne!(
            c,
            round_commitment_statement("s", "m", 1, &h, 3, "x", &[8; 32])
        );
        let id = Identity::from_seed(&[1; 32]);
        assert_eq!(
            Identity::from_seed(&id.seed()).public_key(),
            id.public_key()
        );
    }

    /// Hex decoding keeps its strict form on const-hex: digits only (either
    /// case), no `0x` prefix, whole bytes, and for fixed sizes the exact
    /// length. The expected bytes are written out by hand.
    #[test]
    fn hex_is_decoded_strictly() {
        assert_eq!(decode_hex("00ff7A").unwrap(), vec![0x00, 0xff, 0x7a]);
        for bad in ["0x00ff", "0X00ff", "0ff", "00fg", "0x"] {
            assert!(decode_hex(bad).is_err(), "{bad:?} was decoded");
        }
        let h = "ab".repeat(32);
        assert_eq!(decode_fixed::<32>(&h, "hash").unwrap(), [0xab; 32]);
        for bad in [format!("0x{h}"), h[2..].to_string(), format!("{h}ab")] {
            assert_eq!(
                decode_fixed::<32>(&bad, "hash"),
                Err(SignatureError::Encoding {
                    what: "hash",
                    bytes: 32
                })
            );
        }
        assert_eq!(hex::encode([0x00, 0xff, 0x7a]), "00ff7a");
    }
}
