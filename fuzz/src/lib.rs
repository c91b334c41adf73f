//! The decoders of untrusted bytes that fedhe's fuzz targets exercise, one
//! `check_*` function per target. Each takes the fuzzer's bytes, feeds them
//! to the library's own decoder and asserts what must hold: no panic, and
//! where a decode succeeds, that encoding the result gives the input back
//! (or a fixed point for JSON and TOML).
//!
//! The same functions replay the committed corpus in `cargo test`
//! (`tests/fuzz_corpus.rs` of the root package includes this file), so a
//! corpus entry that ever crashed stays a regression test without libFuzzer.
//!
//! Wire objects are fuzzed in two modes, chosen by the first byte:
//!
//! - *raw*: the bytes are a whole envelope (magic, header, payload, BLAKE3
//!   checksum); nearly every mutation fails the checksum, which tests the
//!   envelope checks only;
//! - *payload*: the bytes describe a payload (literal chunks, and whole
//!   polynomials generated from a seed, so one byte of input can stand for
//!   the 128 KiB polynomial of the default set); the header and the checksum
//!   are then computed as a sender would, so the payload decoders run.

use fedhe_crypto::wire::{self, Kind, WireObject};
use fedhe_crypto::{
    CollectivePublicKey, DecryptionShare, EncryptedVector, InsecurePolicy, ParameterSet, Params,
    PublicKeyShare, SecretKeyShare,
};
use std::sync::{Arc, OnceLock};

/// Kind codes the inspect target's payload mode picks from (0, an unknown
/// code, and every kind of [`Kind`]).
pub const KIND_CODES: u8 = 11;

/// What a fuzz target runs on one input (it panics on a failed invariant).
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (the file in `fuzz_targets/` and the folder in
/// `corpus/`) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("wire_inspect", check_wire_inspect),
    ("wire_public_key_share", check_wire_public_key_share),
    (
        "wire_collective_public_key",
        check_wire_collective_public_key,
    ),
    ("wire_encrypted_vector", check_wire_encrypted_vector),
    ("wire_decryption_share", check_wire_decryption_share),
    ("wire_secret_key_share", check_wire_secret_key_share),
    ("api_json", check_api_json),
    ("api_compact_list", check_api_compact_list),
    ("api_signing", check_api_signing),
    ("sealed_key_file", check_sealed_key_file),
    ("server_config", check_server_config),
    ("experiment_config", check_experiment_config),
];

/// The parameter sets the wire targets decode under: the insecure toy set
/// (N = 1024) and the default set (N = 8192), validated once.
pub fn parameter_sets() -> &'static [Arc<Params>; 2] {
    static SETS: OnceLock<[Arc<Params>; 2]> = OnceLock::new();
    SETS.get_or_init(|| {
        [ParameterSet::TOY_N1024, ParameterSet::DEFAULT].map(|set| {
            set.validate(InsecurePolicy::Allow)
                .expect("the built-in parameter sets validate")
        })
    })
}

/// A cursor over the fuzzer's bytes that never fails: past the end it
/// yields zeros and empty slices.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Whether every byte has been taken.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next byte (0 past the end).
    pub fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((b, rest)) => {
                self.bytes = rest;
                *b
            }
            None => 0,
        }
    }

    /// Up to `n` next bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.bytes.split_at(n.min(self.bytes.len()));
        self.bytes = rest;
        head
    }

    /// The next 8 bytes as a little-endian integer (zero-padded).
    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let head = self.take(8);
        b[..head.len()].copy_from_slice(head);
        u64::from_le_bytes(b)
    }

    /// Everything not taken yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}

/// SplitMix64: expands a seed from the input into polynomial coefficients.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// At most this many generated polynomials per payload (8 × 128 KiB at the
/// default set), so one input never costs more than a few milliseconds.
pub const MAX_GENERATED_POLYS: usize = 8;

/// Builds a payload from the input, chunk by chunk. Each chunk starts with an
/// opcode byte:
///
/// - `op % 4 == 0`: a literal: one length byte, then that many bytes;
/// - `op % 4 == 1`: a polynomial with every residue below its modulus,
///   generated from an 8-byte seed;
/// - `op % 4 == 2`: a polynomial of unreduced 64-bit words from an 8-byte
///   seed (nearly always refused);
/// - `op % 4 == 3`: a boundary polynomial, chosen by the next byte: all
///   zeros, all `p_i − 1`, or all zeros but one residue equal to `p_i`
///   (at the position of the two bytes after it).
pub fn build_payload(params: &Params, input: &mut Input<'_>) -> Vec<u8> {
    let moduli = params.set().moduli;
    let n = params.degree();
    let mut out = Vec::new();
    let mut polys = 0;
    while !input.is_empty() {
        let op = input.byte() % 4;
        if op == 0 {
            let len = input.byte() as usize;
            out.extend_from_slice(input.take(len));
            continue;
        }
        if polys == MAX_GENERATED_POLYS {
            break;
        }
        polys += 1;
        match op {
            1 | 2 => {
                let mut state = input.u64();
                for &p in moduli {
                    for _ in 0..n {
                        let mut v = splitmix(&mut state);
                        if op == 1 {
                            // ⌊v·p / 2^64⌋ < p, cheaper than a division.
                            v = ((u128::from(v) * u128::from(p)) >> 64) as u64;
                        }
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            _ => {
                let how = input.byte() % 3;
                let at =
                    (input.byte() as usize | (input.byte() as usize) << 8) % (n * moduli.len());
                for (i, &p) in moduli.iter().enumerate() {
                    for j in 0..n {
                        let v = match how {
                            0 => 0,
                            1 => p - 1,
                            _ if i * n + j == at => p,
                            _ => 0,
                        };
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
    }
    out
}

/// An envelope around `payload` exactly as a sender writes it: magic,
/// version 1, the set's id, the kind, reserved 0, the payload length, the
/// payload and BLAKE3 of everything before it.
pub fn envelope(params_id: u16, kind: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(wire::HEADER_LEN + payload.len() + wire::CHECKSUM_LEN);
    out.extend_from_slice(&wire::MAGIC);
    out.extend_from_slice(&wire::FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&params_id.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let digest = blake3::hash(&out);
    out.extend_from_slice(digest.as_bytes());
    out
}

/// What a decoder of one kind does with an envelope: decode, and on success
/// encode again.
type Decode = fn(&Arc<Params>, &[u8]) -> Option<Vec<u8>>;

fn decode<T: WireObject>(params: &Arc<Params>, bytes: &[u8]) -> Option<Vec<u8>> {
    T::from_bytes(params, bytes)
        .ok()
        .map(|o| o.to_bytes(params))
}

fn decode_secret(params: &Arc<Params>, bytes: &[u8]) -> Option<Vec<u8>> {
    SecretKeyShare::from_key_bytes(params, bytes)
        .ok()
        .map(|o| o.to_key_bytes(params).to_vec())
}

/// Decodes `bytes` as `kind` under `params`; a success must encode back to
/// the same bytes, and `fedhe inspect` must describe what decodes. Whether
/// it decoded.
fn decode_and_compare(kind: Kind, decode: Decode, params: &Arc<Params>, bytes: &[u8]) -> bool {
    let Some(again) = decode(params, bytes) else {
        return false;
    };
    assert!(
        again == bytes,
        "{} decoded under {} but encodes to different bytes",
        kind.name(),
        params.set().name
    );
    let description = wire::inspect(bytes).expect("inspect refuses an object that decodes");
    assert_eq!(description.kind, kind.name());
    assert_eq!(description.params, params.set().name);
    assert_eq!(description.bytes, bytes.len());
    true
}

/// One wire kind: first byte bit 0 picks the set (toy, default), bit 1 the
/// mode (raw envelope, generated payload in a correct envelope).
fn check_wire(kind: Kind, decode: Decode, data: &[u8]) {
    match payload_envelope(kind, data) {
        None => {
            let bytes = data.get(1..).unwrap_or_default();
            for params in parameter_sets() {
                decode_and_compare(kind, decode, params, bytes);
            }
            let _ = wire::inspect(bytes);
        }
        Some((params, bytes)) => {
            let decoded = decode_and_compare(kind, decode, params, &bytes);
            // inspect decodes it fully too, and agrees on failure as well.
            assert_eq!(
                wire::inspect(&bytes).is_ok(),
                decoded,
                "inspect and the {} decoder disagree",
                kind.name()
            );
        }
    }
}

/// `fedhe inspect` on any bytes: raw (first byte even) or a generated payload
/// of a kind code from the input (possibly unknown) in a correct envelope.
pub fn check_wire_inspect(data: &[u8]) {
    let mut input = Input::new(data);
    let selector = input.byte();
    let bytes = if selector & 2 == 0 {
        input.rest().to_vec()
    } else {
        let params = &parameter_sets()[(selector & 1) as usize];
        let kind = u16::from(input.byte() % KIND_CODES);
        let payload = build_payload(params, &mut input);
        envelope(params.set().id, kind, &payload)
    };
    if let Ok(d) = wire::inspect(&bytes) {
        assert_eq!(d.bytes, bytes.len());
        assert_eq!(
            d.payload_bytes + wire::HEADER_LEN + wire::CHECKSUM_LEN,
            d.bytes
        );
        assert_eq!(d.fingerprint, wire::fingerprint(&bytes));
    }
}

/// A [`PublicKeyShare`] (ceremony uploads and downloads).
pub fn check_wire_public_key_share(data: &[u8]) {
    check_wire(Kind::PublicKeyShare, decode::<PublicKeyShare>, data);
}

/// A [`CollectivePublicKey`] (downloaded by members).
pub fn check_wire_collective_public_key(data: &[u8]) {
    check_wire(
        Kind::CollectivePublicKey,
        decode::<CollectivePublicKey>,
        data,
    );
}

/// An [`EncryptedVector`] (contributions and aggregates).
pub fn check_wire_encrypted_vector(data: &[u8]) {
    check_wire(Kind::EncryptedVector, decode::<EncryptedVector>, data);
}

/// A [`DecryptionShare`] (uploaded to and combined by the server).
pub fn check_wire_decryption_share(data: &[u8]) {
    check_wire(Kind::DecryptionShare, decode::<DecryptionShare>, data);
}

/// A [`SecretKeyShare`] key file (read from a member's key folder).
pub fn check_wire_secret_key_share(data: &[u8]) {
    check_wire(Kind::SecretKeyShare, decode_secret, data);
}

/// Parses `bytes` as JSON of `T`; on success, serialising and parsing again
/// gives an equal value and the same text.
fn json_round_trip<T>(bytes: &[u8]) -> Option<T>
where
    T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    let value: T = serde_json::from_slice(bytes).ok()?;
    let text = serde_json::to_vec(&value).expect("a parsed body serialises");
    let again: T = serde_json::from_slice(&text).expect("a serialised body parses");
    assert_eq!(again, value, "JSON round trip changed the value");
    assert_eq!(
        serde_json::to_vec(&again).expect("serialises"),
        text,
        "JSON round trip is not a fixed point"
    );
    Some(value)
}

/// The JSON bodies of the REST API (`fedhe_api::types`) and the study
/// configuration members parse from a study's spec: the first byte picks the
/// type, the rest is the body.
pub fn check_api_json(data: &[u8]) {
    use fedhe_api::types::*;
    let mut input = Input::new(data);
    let selector = input.byte();
    let body = input.rest();
    match selector % 20 {
        0 => drop(json_round_trip::<CeremonySpec>(body)),
        1 => drop(json_round_trip::<CeremonyStatus>(body)),
        2 => drop(json_round_trip::<Commitment>(body)),
        3 => {
            if let Some(t) = json_round_trip::<Transcript>(body) {
                assert_eq!(t.hash_hex().len(), 64);
            }
        }
        4 => drop(json_round_trip::<StudySpec>(body)),
        5 => drop(json_round_trip::<StudyStatus>(body)),
        6 => drop(json_round_trip::<RoundStatus>(body)),
        7 => drop(json_round_trip::<ContributionList>(body)),
        8 => drop(json_round_trip::<RoundResult>(body)),
        9 => drop(json_round_trip::<UploadReceipt>(body)),
        10 => drop(json_round_trip::<Problem>(body)),
        11 => drop(json_round_trip::<MemberSpec>(body)),
        12 => drop(json_round_trip::<TranscriptEntry>(body)),
        13 => drop(json_round_trip::<SignedUpload>(body)),
        14 => {
            if let Some(s) = json_round_trip::<RoundState>(body) {
                assert_eq!(RoundState::parse(s.as_str()), Some(s));
            }
        }
        15 => drop(json_round_trip::<SignedStudySpec>(body)),
        16 => drop(json_round_trip::<RoundCommitment>(body)),
        17 => drop(json_round_trip::<CommittedContribution>(body)),
        18 => {
            if let Some(list) = json_round_trip::<CommitmentList>(body) {
                let h = CommitmentList::canonical_hash("s", 1, &list.commitments);
                assert_eq!(h.len(), 64);
            }
        }
        _ => {
            // A study's `config`, which every member's agent parses and checks.
            use fedhe_client::agent::StudyConfig;
            if let Some(config) = json_round_trip::<StudyConfig>(body) {
                let members = config
                    .settings
                    .get("members")
                    .and_then(serde_json::Value::as_u64)
                    .map_or(3, |m| m as usize);
                // Every method of the registry reads the same settings.
                for method in fedhe_algorithms::method::names() {
                    let _ = config.clone().validate(method, members);
                }
                let _ = config.validate("fbo-fedgp", members.wrapping_add(1));
            }
        }
    }
}

/// The compact encoding of the signed lists (`fedhe_api::compact`, what a
/// member decodes from the server): the first byte picks the list, the rest
/// is its bytes. A list that decodes encodes to the same bytes (the format
/// has one encoding per list) and survives its JSON round trip unchanged.
pub fn check_api_compact_list(data: &[u8]) {
    use fedhe_api::compact::CompactList;
    use fedhe_api::types::*;
    fn check<T>(bytes: &[u8])
    where
        T: CompactList
            + serde::Serialize
            + serde::de::DeserializeOwned
            + PartialEq
            + std::fmt::Debug,
    {
        if let Ok(list) = T::from_compact(bytes) {
            assert_eq!(list.to_compact().expect("a decoded list encodes"), bytes);
            let json: T = serde_json::from_slice(&serde_json::to_vec(&list).unwrap()).unwrap();
            assert_eq!(json, list);
        }
    }
    let mut input = Input::new(data);
    let selector = input.byte();
    let body = input.rest();
    match selector % 4 {
        0 => check::<ContributionList>(body),
        1 => check::<DecryptionShareList>(body),
        2 => check::<SumDigestList>(body),
        _ => check::<CommitmentList>(body),
    }
}

/// Lower-case hex.
fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The signed-request and upload-signature parsing of `fedhe_api::signing`:
/// hex keys and signatures, messages over arbitrary methods, paths, bodies
/// and nonces. Fields are separated by newlines: key, signature, method,
/// path, timestamp, nonce, seed byte, then the body.
pub fn check_api_signing(data: &[u8]) {
    use fedhe_api::signing::{
        contribution_statement, decode_fixed, parse_public_key, request_message,
        round_commitment_statement, study_spec_statement, upload_statement, verify_hex, UploadKind,
    };
    use fedhe_api::Identity;
    let mut fields = data.splitn(8, |b| *b == b'\n');
    let mut text = || String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let (key, signature, method, path, timestamp, nonce, seed) =
        (text(), text(), text(), text(), text(), text(), text());
    let body = fields.next().unwrap_or_default();
    let timestamp: i64 = timestamp.trim().parse().unwrap_or(0);

    for (text, what) in [(&key, "key"), (&signature, "signature")] {
        if let Ok(bytes) = decode_fixed::<32>(text, what) {
            assert_eq!(to_hex(&bytes), text.trim().to_ascii_lowercase());
        }
        if let Ok(bytes) = decode_fixed::<64>(text, what) {
            assert_eq!(to_hex(&bytes), text.trim().to_ascii_lowercase());
        }
    }
    let message = request_message(&method, &path, body, timestamp, &nonce);
    if let Ok(public) = parse_public_key(&key) {
        let _ = verify_hex(&public, &message, &signature, "request");
    }

    // A real signature over the same fields verifies, and only for them.
    let mut seed_bytes = [0u8; 32];
    for (i, b) in seed.bytes().enumerate() {
        seed_bytes[i % 32] ^= b;
    }
    let identity = Identity::from_seed(&seed_bytes);
    let public = parse_public_key(&identity.public_key_hex()).expect("own key parses");
    let good = identity.sign_hex(&message);
    verify_hex(&public, &message, &good, "request").expect("own signature verifies");
    let mut other = message.clone();
    other.push(b'x');
    assert!(verify_hex(&public, &other, &good, "request").is_err());
    let hash = blake3::hash(body);
    for kind in [UploadKind::Commitment, UploadKind::DecryptionShare] {
        let statement = upload_statement(kind, &path, &method, timestamp as u64, hash.as_bytes());
        assert!(verify_hex(&public, &statement, &good, "upload").is_err());
    }
    let round = timestamp as u64;
    for statement in [
        round_commitment_statement(
            &path,
            &method,
            round,
            hash.as_bytes(),
            round,
            &nonce,
            hash.as_bytes(),
        ),
        contribution_statement(&path, &method, round, hash.as_bytes(), &nonce),
        study_spec_statement(&nonce),
    ] {
        assert!(verify_hex(&public, &statement, &good, "upload").is_err());
    }
}

/// Sealed (passphrase-encrypted) key files, `fedhe_client::sealed`. First
/// byte even: the rest is a file to open (its header is checked first, and
/// the KDF runs only for small costs: a header may legally ask for 1 GiB);
/// odd: plaintext, name and passphrase from the input are sealed at a small
/// cost, opened, and a modified byte must be refused.
pub fn check_sealed_key_file(data: &[u8]) {
    use fedhe_client::sealed::{self, KdfParams, Passphrase};
    let mut input = Input::new(data);
    let selector = input.byte();
    if selector & 1 == 0 {
        let bytes = input.rest();
        let passphrase = Passphrase::new("fuzz").expect("non-empty");
        match sealed::read_kdf_params(bytes) {
            Ok(p) => {
                assert!(sealed::is_sealed(bytes));
                assert!(p.m_cost_kib <= KdfParams::MAX_M_COST_KIB);
                if p.m_cost_kib <= 256 && p.t_cost <= 2 && p.p_cost <= 2 {
                    // No input forges a Poly1305 tag: only the seed itself
                    // (sealed under this passphrase and name) opens.
                    if let Ok(plaintext) = sealed::open(bytes, "identity.key", &passphrase) {
                        assert_eq!(&plaintext[..], SEALED_SEED_PLAINTEXT, "a forged file opens");
                    }
                }
            }
            Err(header) => {
                let open = sealed::open(bytes, "identity.key", &passphrase)
                    .expect_err("a file whose header is refused opens");
                assert_eq!(open, header, "open and the header check disagree");
            }
        }
    } else {
        let params = KdfParams {
            m_cost_kib: 8 + u32::from(input.byte() % 8) * 8,
            t_cost: 1,
            p_cost: 1,
        };
        let flip = input.u64();
        let name_len = input.byte() as usize % 32;
        let name = String::from_utf8_lossy(input.take(name_len)).into_owned();
        let pass_len = input.byte() as usize % 32;
        let pass = input.take(pass_len).to_vec();
        let plaintext = input.rest();
        let Ok(passphrase) = Passphrase::new(pass) else {
            return;
        };
        let file = sealed::seal(plaintext, &name, &passphrase, params).expect("seal");
        assert!(sealed::is_sealed(&file));
        assert_eq!(sealed::read_kdf_params(&file), Ok(params));
        let opened = sealed::open(&file, &name, &passphrase).expect("own file opens");
        assert_eq!(&opened[..], plaintext);
        let mut bad = file.clone();
        let at = (flip % bad.len() as u64) as usize;
        bad[at] ^= 1 << ((flip >> 32) % 8);
        if let Ok(p) = sealed::read_kdf_params(&bad) {
            if p != params && (p.m_cost_kib > 1024 || p.t_cost > 4) {
                // A flipped cost bit asks for up to 1 GiB: refused by the
                // tag all the same, but not worth a KDF per execution.
                return;
            }
        }
        assert!(
            sealed::open(&bad, &name, &passphrase).is_err(),
            "a modified sealed file (byte {at}) opens"
        );
    }
}

/// The plaintext of the sealed-file seed of `sealed_key_file`.
const SEALED_SEED_PLAINTEXT: &[u8] = b"32 bytes of identity seed.......";

/// The server's TOML configuration (`fedhe serve --config`).
pub fn check_server_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = toml::from_str::<fedhe_server::Config>(text) {
        let redacted = fedhe_server::store::redact(&config.database_url);
        assert!(redacted.len() <= config.database_url.len() + 3);
        let _ = format!("{config:?}");
    }
}

/// The experiment configuration of `fedhe simulate --config`: its `[algorithm]`
/// table merged with each run's overrides, parsed into every algorithm
/// family's settings (`fedhe_algorithms`) and validated for every method, as
/// `fedhe simulate` does for the method a run names.
pub fn check_experiment_config(data: &[u8]) {
    use fedhe_algorithms::{dp_fts_de, fed_pne, fts, ldp_bo, FboFedGpParams};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return;
    };
    let algorithm = match table.get("algorithm") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    };
    let mut merged = vec![algorithm.clone()];
    if let Some(toml::Value::Array(runs)) = table.get("runs") {
        for run in runs.iter().take(8) {
            if let toml::Value::Table(overrides) = run {
                let mut t = algorithm.clone();
                for (k, v) in overrides {
                    if k != "method" && k != "label" {
                        t.insert(k.clone(), v.clone());
                    }
                }
                merged.push(t);
            }
        }
    }
    fn settings<T: serde::de::DeserializeOwned>(t: &toml::Table) -> Option<T> {
        toml::Value::Table(t.clone()).try_into().ok()
    }
    for t in &merged {
        if let Some(p) = settings::<FboFedGpParams>(t) {
            let _ = p.validate();
        }
        if let Some(p) = settings::<fts::FtsParams>(t) {
            let _ = p.validate();
        }
        if let Some(p) = settings::<dp_fts_de::DpFtsDeParams>(t) {
            let _ = p.validate();
        }
        if let Some(p) = settings::<ldp_bo::LdpBoParams>(t) {
            for m in ldp_bo::LdpMethod::all() {
                let _ = p.validate(m);
            }
        }
        if let Some(p) = settings::<fed_pne::FedPneParams>(t) {
            for m in fed_pne::BanditMethod::all() {
                let _ = p.validate(m);
            }
        }
    }
}

/// A literal chunk of [`build_payload`].
fn lit(out: &mut Vec<u8>, bytes: &[u8]) {
    assert!(bytes.len() < 256, "a literal chunk holds at most 255 bytes");
    out.push(0);
    out.push(bytes.len() as u8);
    out.extend_from_slice(bytes);
}

/// A literal member id (u16 length, then the id).
fn lit_member(out: &mut Vec<u8>, id: &str) {
    let mut b = (id.len() as u16).to_le_bytes().to_vec();
    b.extend_from_slice(id.as_bytes());
    lit(out, &b);
}

/// A generated polynomial chunk of [`build_payload`]: `op` 1 (reduced), 2
/// (unreduced) or 3 (boundary, with `how`).
fn poly(out: &mut Vec<u8>, op: u8, seed: u64, how: u8) {
    out.push(op);
    if op == 3 {
        out.extend_from_slice(&[how, 7, 0]);
    } else {
        out.extend_from_slice(&seed.to_le_bytes());
    }
}

/// Payload-mode bodies of the t-of-n kinds for `params` (members alpha,
/// beta, gamma; T = 2): `valid-*` ones decode; `bad-*` ones are refused (a
/// dealing whose shares are not sorted by recipient, a decrypting set
/// without the share's member).
fn threshold_payloads(params: &Params) -> Vec<(Kind, &'static str, Vec<u8>)> {
    let limbs = params.set().moduli.len();
    let commitment = |p: &mut Vec<u8>| {
        lit_member(p, "alpha");
        let mut head = 2u32.to_le_bytes().to_vec();
        head.extend_from_slice(&3u32.to_le_bytes());
        lit(p, &head);
        lit(p, &[7; 96]);
        lit(p, &2u32.to_le_bytes());
        // T mask coefficients, one small (reduced) residue per prime each.
        lit(p, &[3; 8].repeat(2 * limbs));
    };
    let sealed_len = fedhe_crypto::share_transport::sealed_len(params) as u32;
    let sealed = |p: &mut Vec<u8>, recipient: &str| {
        lit_member(p, "alpha");
        lit_member(p, recipient);
        lit(p, &[5; 24]);
        lit(p, &sealed_len.to_le_bytes());
        // Ciphertext bytes: 8 + a polynomial's worth + one mask residue per
        // prime + 48 (salt and tag).
        lit(p, &[1; 8]);
        poly(p, 2, 13, 0);
        lit(p, &[2; 8].repeat(limbs));
        lit(p, &[2; 48]);
    };
    let set = |p: &mut Vec<u8>, members: &[&str]| {
        lit(p, &(members.len() as u32).to_le_bytes());
        for m in members {
            lit_member(p, m);
        }
    };
    let mut out = Vec::new();
    let mut p = Vec::new();
    commitment(&mut p);
    out.push((Kind::ShamirCommitment, "valid", p));
    let mut p = Vec::new();
    sealed(&mut p, "beta");
    out.push((Kind::SealedShamirShare, "valid", p));
    for (name, recipients) in [
        ("valid", ["alpha", "beta"]),
        ("bad-unsorted", ["beta", "alpha"]),
    ] {
        let mut p = Vec::new();
        commitment(&mut p);
        lit(&mut p, &2u32.to_le_bytes());
        for r in recipients {
            sealed(&mut p, r);
        }
        out.push((Kind::ThresholdDealing, name, p));
    }
    for (name, member) in [("valid", "beta"), ("bad-outsider", "delta")] {
        let mut p = Vec::new();
        set(&mut p, &["alpha", "beta", "gamma"]);
        lit_member(&mut p, member);
        lit(&mut p, &1u32.to_le_bytes());
        poly(&mut p, 1, 15, 0);
        out.push((Kind::ThresholdDecryptionShare, name, p));
    }
    let mut p = Vec::new();
    lit_member(&mut p, "beta");
    lit(&mut p, &2u32.to_le_bytes());
    set(&mut p, &["alpha", "beta", "gamma"]);
    poly(&mut p, 1, 16, 0);
    out.push((Kind::ThresholdSecretShare, "valid", p));
    out
}

/// The seed inputs of every target, `(target, file name, bytes)`. Wire
/// seeds named `valid-*` decode (the fuzzer starts from objects that reach
/// the end of the payload decoders); `random-*` ones differ on every call
/// (a fresh salt), so only their presence is compared with the committed files.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    use fedhe_crypto::FixedPointCodec;
    let mut out = Vec::new();
    let sets = parameter_sets();
    for (s, params) in sets.iter().enumerate() {
        let set = params.set().name;
        let payload = |body: Vec<u8>| {
            let mut v = vec![2 | s as u8];
            v.extend(body);
            v
        };
        // Raw mode: empty payloads in correct envelopes, one per kind.
        for (target, kind) in [
            ("wire_public_key_share", Kind::PublicKeyShare),
            ("wire_collective_public_key", Kind::CollectivePublicKey),
            ("wire_encrypted_vector", Kind::EncryptedVector),
            ("wire_decryption_share", Kind::DecryptionShare),
            ("wire_secret_key_share", Kind::SecretKeyShare),
        ] {
            let mut raw = vec![s as u8];
            raw.extend(envelope(params.set().id, kind as u16, &[]));
            out.push((target, format!("raw-empty-{set}"), raw.clone()));
            out.push((
                "wire_inspect",
                format!("raw-empty-{}-{set}", kind.name()),
                raw,
            ));
        }
        // Payload mode: valid objects, and boundary variants.
        for (how, name) in [(1u8, "valid"), (2, "bad-residue")] {
            let mut p = Vec::new();
            lit_member(&mut p, "alpha");
            lit(&mut p, &[9; 32]);
            poly(&mut p, 3, 0, how);
            out.push(("wire_public_key_share", format!("{name}-{set}"), payload(p)));
        }
        let mut p = Vec::new();
        lit_member(&mut p, "alpha");
        lit(&mut p, &[9; 32]);
        poly(&mut p, 1, 1, 0);
        out.push((
            "wire_public_key_share",
            format!("valid-random-poly-{set}"),
            payload(p),
        ));

        let mut p = Vec::new();
        lit(&mut p, &[3; 32]);
        lit(&mut p, &2u32.to_le_bytes());
        lit_member(&mut p, "alpha");
        lit_member(&mut p, "beta");
        poly(&mut p, 1, 2, 0);
        out.push((
            "wire_collective_public_key",
            format!("valid-{set}"),
            payload(p),
        ));

        let codec = FixedPointCodec::new(params, 3, 10.0).expect("a valid codec");
        let info = codec.info();
        for (len, cts) in [(5u64, 1usize), (params.degree() as u64 + 1, 2)] {
            let mut p = Vec::new();
            let mut header = info.members.to_le_bytes().to_vec();
            header.extend_from_slice(&info.bound.to_le_bytes());
            header.extend_from_slice(&info.fractional_bits.to_le_bytes());
            header.extend_from_slice(&len.to_le_bytes());
            header.extend_from_slice(&(cts as u32).to_le_bytes());
            lit(&mut p, &header);
            for i in 0..2 * cts {
                poly(&mut p, 1, i as u64, 0);
            }
            out.push((
                "wire_encrypted_vector",
                format!("valid-{len}-values-{set}"),
                payload(p),
            ));
        }

        let mut p = Vec::new();
        lit_member(&mut p, "gamma");
        lit(&mut p, &1u32.to_le_bytes());
        poly(&mut p, 3, 0, 1);
        out.push(("wire_decryption_share", format!("valid-{set}"), payload(p)));

        let mut p = Vec::new();
        lit_member(&mut p, "delta");
        poly(&mut p, 1, 4, 0);
        out.push(("wire_secret_key_share", format!("valid-{set}"), payload(p)));
        for kind in 0..7u8 {
            let mut p = vec![2 | s as u8, kind];
            lit_member(&mut p, "alpha");
            poly(&mut p, 1, 5, 0);
            out.push(("wire_inspect", format!("payload-kind-{kind}-{set}"), p));
        }
        // The t-of-n kinds: empty envelopes at both sets, and valid objects
        // of every kind at the toy set (the default set's are megabytes).
        for kind in [
            Kind::ShamirCommitment,
            Kind::SealedShamirShare,
            Kind::ThresholdDecryptionShare,
            Kind::ThresholdSecretShare,
            Kind::ThresholdDealing,
        ] {
            let mut raw = vec![s as u8];
            raw.extend(envelope(params.set().id, kind as u16, &[]));
            out.push((
                "wire_inspect",
                format!("raw-empty-{}-{set}", kind.name()),
                raw,
            ));
        }
        if s == 0 {
            for (kind, name, body) in threshold_payloads(params) {
                let mut p = vec![2 | s as u8, kind as u8];
                p.extend(body);
                out.push(("wire_inspect", format!("{name}-{}-{set}", kind.name()), p));
            }
        }
    }

    let json: [(u8, &str, &str); 16] = [
        (
            0,
            "ceremony-spec",
            r#"{"id":"c1","parameter_set":"n8192-q124","members":[{"id":"alpha","identity_key":"00"}],"deadline_secs":60,"allow_insecure":false}"#,
        ),
        (
            1,
            "ceremony-status",
            r#"{"id":"c1","parameter_set":"toy-n1024","phase":"revealing","members":[],"committed":["a"],"revealed":[],"deadline_at":-1,"crs_seed":"ab","transcript_hash":null,"reason":"late"}"#,
        ),
        (2, "commitment", r#"{"share_hash":"aa","signature":"bb"}"#),
        (
            3,
            "transcript",
            r#"{"ceremony":"c","parameter_set":"p","crs_seed":"s","entries":[{"member":"m","identity_key":"k","share_hash":"h","signature":"g"}],"collective_key_hash":"x"}"#,
        ),
        (
            4,
            "study-spec",
            r#"{"id":"s1","ceremony":"c1","algorithm":"fbo-fedgp","config":{"a":[1,2.5,-0.0,null,true,"x"]},"min_contributors":2,"round_timeout_secs":10,"decrypt_timeout_secs":10}"#,
        ),
        (
            5,
            "study-status",
            r#"{"spec":{"id":"s","ceremony":"c","algorithm":"a","min_contributors":1,"round_timeout_secs":1,"decrypt_timeout_secs":1},"members":["a","b"],"latest_round":3}"#,
        ),
        (
            6,
            "round-status",
            r#"{"study":"s","round":1,"state":"collecting","received":1,"required":2,"members":3,"contributors":["a"],"shares":[],"deadline_at":1700000000000,"version":4,"reason":null}"#,
        ),
        (
            7,
            "contribution-list",
            r#"{"state":"decrypting","contributions":[{"member":"a","hash":"h","signature":"s"}],"aggregate_hash":"x"}"#,
        ),
        (
            8,
            "round-result",
            r#"{"round":2,"values":[1.5,-2e-300,1.7976931348623157e308,0.1],"aggregate_hash":"h","contributions":[],"shares":[]}"#,
        ),
        (9, "upload-receipt", r#"{"hash":"h","created":true}"#),
        (
            10,
            "problem",
            r#"{"type":"about:blank","title":"Conflict","status":409,"detail":"different bytes"}"#,
        ),
        (11, "member-spec", r#"{"id":"alpha","identity_key":"0123"}"#),
        (
            12,
            "transcript-entry",
            r#"{"member":"m","identity_key":"k","share_hash":"h","signature":"g"}"#,
        ),
        (
            13,
            "signed-upload",
            r#"{"member":"m","hash":"h","signature":"g"}"#,
        ),
        (14, "round-state", r#""failed""#),
        (
            15,
            "study-config",
            r#"{"objective":"my-model","lower":[-5,0],"upper":[0,3],"sense":"minimise","seed":7,"fbo_fedgp":{"members":3,"rounds":30,"initial_points":4,"support_size":16}}"#,
        ),
    ];
    for (selector, name, body) in json {
        let mut v = vec![selector];
        v.extend_from_slice(body.as_bytes());
        out.push(("api_json", name.to_string(), v));
    }

    {
        use fedhe_api::compact::CompactList;
        use fedhe_api::types::*;
        let upload = |member: &str, b: u8, signed: bool| SignedUpload {
            member: member.into(),
            hash: to_hex(&[b; 32]),
            signature: if signed {
                to_hex(&[b; 64])
            } else {
                String::new()
            },
        };
        let lists: Vec<(u8, &str, Vec<u8>)> = vec![
            (
                0,
                "contributions",
                ContributionList {
                    state: RoundState::Decrypting,
                    contributions: vec![upload("alpha", 1, true), upload("beta", 2, false)],
                    aggregate_hash: Some(to_hex(&[3; 32])),
                }
                .to_compact()
                .unwrap(),
            ),
            (
                1,
                "decryption-shares",
                DecryptionShareList {
                    state: RoundState::Done,
                    shares: vec![upload("m0001", 4, false)],
                    aggregate_hash: None,
                }
                .to_compact()
                .unwrap(),
            ),
            (
                2,
                "digests",
                SumDigestList {
                    state: RoundState::Failed,
                    digests: vec![SignedSumDigest {
                        member: "gamma".into(),
                        digest: to_hex(&[5; 64]),
                        signature: to_hex(&[6; 64]),
                    }],
                    aggregate_hash: Some(to_hex(&[7; 32])),
                }
                .to_compact()
                .unwrap(),
            ),
            (
                3,
                "commitments",
                CommitmentList {
                    state: RoundState::Collecting,
                    values: Some(300),
                    commitments: vec![CommittedContribution {
                        member: "alpha".into(),
                        hash: to_hex(&[8; 32]),
                        values: 300,
                        c1_commitment_hash: to_hex(&[9; 32]),
                        signature: String::new(),
                    }],
                    list_hash: Some(to_hex(&[10; 32])),
                }
                .to_compact()
                .unwrap(),
            ),
        ];
        for (selector, name, bytes) in lists {
            let mut v = vec![selector];
            v.extend_from_slice(&bytes);
            out.push(("api_compact_list", name.to_string(), v));
        }
    }

    out.push((
        "api_signing",
        "request".to_string(),
        b"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n\
          e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b\n\
          PUT\n/v1/studies/s1/rounds/1/contributions/alpha?wait=5\n1700000000000\n\
          0123456789abcdef0123456789abcdef\nseed\nbody bytes"
            .to_vec(),
    ));

    {
        use fedhe_client::sealed::{seal, KdfParams, Passphrase};
        let small = KdfParams {
            m_cost_kib: 8,
            t_cost: 1,
            p_cost: 1,
        };
        let file = seal(
            SEALED_SEED_PLAINTEXT,
            "identity.key",
            &Passphrase::new("fuzz").expect("non-empty"),
            small,
        )
        .expect("seal");
        let mut v = vec![0u8];
        v.extend(file);
        out.push(("sealed_key_file", "random-sealed-identity".to_string(), v));
        let mut v = vec![1u8, 0, 5, 0, 0, 0, 0, 0, 0, 0, 12];
        v.extend_from_slice(b"identity.key");
        v.push(4);
        v.extend_from_slice(b"pass");
        v.extend_from_slice(b"plaintext of a key file");
        out.push(("sealed_key_file", "seal-open".to_string(), v));
    }

    out.push((
        "server_config",
        "server.toml".to_string(),
        include_bytes!("../../configs/server.toml").to_vec(),
    ));
    for (name, text) in [
        (
            "ablation_local_global.toml",
            &include_bytes!("../../experiments/papers/ablation_local_global.toml")[..],
        ),
        (
            "dp_fts_de_fig2a.toml",
            &include_bytes!("../../experiments/papers/dp_fts_de_fig2a.toml")[..],
        ),
        (
            "paper001_fig2_ldp.toml",
            &include_bytes!("../../experiments/papers/paper001_fig2_ldp.toml")[..],
        ),
        (
            "paper003_fig2_fed_pne.toml",
            &include_bytes!("../../experiments/papers/paper003_fig2_fed_pne.toml")[..],
        ),
    ] {
        out.push(("experiment_config", name.to_string(), text.to_vec()));
    }
    out
}

/// The envelope a payload-mode wire input (first byte with bit 1 set) of
/// `kind` stands for, with its parameters; `None` for a raw-mode input.
pub fn payload_envelope(kind: Kind, data: &[u8]) -> Option<(&'static Arc<Params>, Vec<u8>)> {
    let mut input = Input::new(data);
    let selector = input.byte();
    if selector & 2 == 0 {
        return None;
    }
    let params = &parameter_sets()[(selector & 1) as usize];
    let payload = build_payload(params, &mut input);
    Some((params, envelope(params.set().id, kind as u16, &payload)))
}
