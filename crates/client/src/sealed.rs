//! Passphrase encryption of key files at rest (issue 5 deliverable 6).
//!
//! A sealed file is a small header followed by an XChaCha20-Poly1305
//! ciphertext under a key derived from the passphrase by Argon2id:
//!
//! | bytes | what |
//! | --- | --- |
//! | 8 | magic `FEDHESEC` (how a reader knows the file is encrypted) |
//! | 1 | format version (1) |
//! | 1 | KDF (1 = Argon2id, version 0x13) |
//! | 4 | Argon2 memory cost, KiB, little-endian |
//! | 4 | Argon2 time cost (passes), little-endian |
//! | 4 | Argon2 parallelism, little-endian |
//! | 16 | salt (random per file) |
//! | 24 | nonce (random per file) |
//! | ≥ 16 | ciphertext and tag |
//!
//! The associated data is the whole header and the file's name, so a
//! changed parameter, or a sealed identity renamed into the secret share's
//! place, fails authentication instead of decrypting to the wrong thing.
//! The parameters are read from an untrusted file, so each is bounded before
//! any memory is allocated for the KDF.

use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use std::path::Path;
use zeroize::Zeroizing;

/// The first bytes of every sealed file.
pub const MAGIC: &[u8; 8] = b"FEDHESEC";
/// The environment variable a passphrase may be given in.
pub const PASSPHRASE_ENV: &str = "FEDHE_PASSPHRASE";
/// What a reader of an encrypted file without a passphrase is told (the CLI's
/// flag and the environment variable are the two ways to give one).
pub const NEEDS_PASSPHRASE: &str =
    "this key file is encrypted; give --passphrase-file or FEDHE_PASSPHRASE";

const VERSION: u8 = 1;
const KDF_ARGON2ID: u8 = 1;
const SALT_LEN: usize = 16;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
const HEADER_LEN: usize = 8 + 1 + 1 + 4 + 4 + 4 + SALT_LEN + NONCE_LEN;
const AAD_CONTEXT: &[u8] = b"fedhe sealed key file v1\0";

/// Argon2id cost parameters of a sealed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfParams {
    /// Memory, KiB.
    pub m_cost_kib: u32,
    /// Passes.
    pub t_cost: u32,
    /// Lanes.
    pub p_cost: u32,
}

impl KdfParams {
    /// What new files use: 64 MiB, 3 passes, 1 lane (RFC 9106's second
    /// recommendation with one lane; a key file is read a few times per run,
    /// so a fraction of a second per read is affordable).
    pub const DEFAULT: Self = Self {
        m_cost_kib: 64 * 1024,
        t_cost: 3,
        p_cost: 1,
    };
    /// The largest memory cost a reader accepts (1 GiB): a tampered header
    /// must not make a reader allocate without bound.
    pub const MAX_M_COST_KIB: u32 = 1 << 20;
    /// The largest time cost a reader accepts.
    pub const MAX_T_COST: u32 = 64;
    /// The largest parallelism a reader accepts.
    pub const MAX_P_COST: u32 = 16;

    fn check(&self) -> Result<argon2::Params, String> {
        if self.m_cost_kib > Self::MAX_M_COST_KIB
            || self.t_cost > Self::MAX_T_COST
            || self.p_cost > Self::MAX_P_COST
        {
            return Err(format!(
                "key derivation parameters out of range (memory {} KiB, {} passes, {} lanes)",
                self.m_cost_kib, self.t_cost, self.p_cost
            ));
        }
        argon2::Params::new(self.m_cost_kib, self.t_cost, self.p_cost, Some(32))
            .map_err(|e| format!("key derivation parameters refused: {e}"))
    }
}

/// A passphrase, wiped from memory when dropped; never printed.
#[derive(Clone)]
pub struct Passphrase(Zeroizing<Vec<u8>>);

impl std::fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Passphrase(<redacted>)")
    }
}

impl Passphrase {
    /// A passphrase from its bytes; refuses an empty one (it would protect nothing).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, String> {
        let bytes = Zeroizing::new(bytes.into());
        if bytes.is_empty() {
            return Err("the passphrase is empty".into());
        }
        Ok(Self(bytes))
    }

    /// Reads a passphrase from a file: its content without one trailing
    /// newline (`\n` or `\r\n`, as an editor or `echo` leaves it). A regular
    /// file others can read is refused, like a key file; a pipe
    /// (`--passphrase-file <(pass show fedhe)`) is accepted.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "{} is accessible by others (mode {:o}); run chmod 600 on it",
                path.display(),
                meta.permissions().mode() & 0o777
            ));
        }
        let mut bytes =
            Zeroizing::new(std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?);
        if bytes.ends_with(b"\n") {
            bytes.pop();
            if bytes.ends_with(b"\r") {
                bytes.pop();
            }
        }
        Self::new(std::mem::take(&mut *bytes)).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The passphrase in [`PASSPHRASE_ENV`], if set.
    pub fn from_env() -> Result<Option<Self>, String> {
        match std::env::var_os(PASSPHRASE_ENV) {
            None => Ok(None),
            Some(v) => {
                use std::os::unix::ffi::OsStringExt;
                Self::new(v.into_vec())
                    .map(Some)
                    .map_err(|e| format!("{PASSPHRASE_ENV}: {e}"))
            }
        }
    }

    /// The passphrase from `file` if given, else from [`PASSPHRASE_ENV`], else none.
    pub fn from_file_or_env(file: Option<&Path>) -> Result<Option<Self>, String> {
        match file {
            Some(path) => Self::from_file(path).map(Some),
            None => Self::from_env(),
        }
    }
}

/// Whether `bytes` is a sealed file (starts with [`MAGIC`]).
pub fn is_sealed(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

fn derive_key(
    passphrase: &Passphrase,
    salt: &[u8],
    params: &KdfParams,
) -> Result<Zeroizing<[u8; 32]>, String> {
    let argon = argon2::Argon2::new(
        argon2::Algorithm::Argon2id,
        argon2::Version::V0x13,
        params.check()?,
    );
    let mut key = Zeroizing::new([0u8; 32]);
    argon
        .hash_password_into(&passphrase.0, salt, &mut *key)
        .map_err(|e| format!("key derivation failed: {e}"))?;
    Ok(key)
}

fn aad(header: &[u8], name: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(AAD_CONTEXT.len() + name.len() + 1 + header.len());
    aad.extend_from_slice(AAD_CONTEXT);
    aad.extend_from_slice(name.as_bytes());
    aad.push(0);
    aad.extend_from_slice(header);
    aad
}

/// Encrypts `plaintext`, the content of the key file called `name`.
pub fn seal(
    plaintext: &[u8],
    name: &str,
    passphrase: &Passphrase,
    params: KdfParams,
) -> Result<Vec<u8>, String> {
    let mut salt = [0u8; SALT_LEN];
    OsRng.fill_bytes(&mut salt);
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    let mut out = Vec::with_capacity(HEADER_LEN + plaintext.len() + TAG_LEN);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(KDF_ARGON2ID);
    out.extend_from_slice(&params.m_cost_kib.to_le_bytes());
    out.extend_from_slice(&params.t_cost.to_le_bytes());
    out.extend_from_slice(&params.p_cost.to_le_bytes());
    out.extend_from_slice(&salt);
    out.extend_from_slice(&nonce);
    debug_assert_eq!(out.len(), HEADER_LEN);
    let key = derive_key(passphrase, &salt, &params)?;
    let cipher = XChaCha20Poly1305::new(key.as_ref().into());
    let ciphertext = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext,
                aad: &aad(&out, name),
            },
        )
        .map_err(|_| "encryption failed".to_string())?;
    out.extend_from_slice(&ciphertext);
    Ok(out)
}

/// The header of a sealed file, parsed and bounds-checked.
struct Header<'a> {
    params: KdfParams,
    salt: &'a [u8],
    nonce: &'a [u8],
}

fn parse_header(bytes: &[u8]) -> Result<Header<'_>, String> {
    if !is_sealed(bytes) {
        return Err("not an encrypted key file".into());
    }
    if bytes.len() < HEADER_LEN + TAG_LEN {
        return Err(format!(
            "encrypted key file truncated ({} bytes; at least {} expected)",
            bytes.len(),
            HEADER_LEN + TAG_LEN
        ));
    }
    if bytes[8] != VERSION {
        return Err(format!(
            "encrypted key file of unsupported format version {}",
            bytes[8]
        ));
    }
    if bytes[9] != KDF_ARGON2ID {
        return Err(format!(
            "encrypted key file with an unknown key derivation ({})",
            bytes[9]
        ));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let params = KdfParams {
        m_cost_kib: word(10),
        t_cost: word(14),
        p_cost: word(18),
    };
    params.check()?;
    Ok(Header {
        params,
        salt: &bytes[22..22 + SALT_LEN],
        nonce: &bytes[22 + SALT_LEN..HEADER_LEN],
    })
}

/// The key-derivation costs in a sealed file's header, bounds-checked
/// exactly as [`open`] checks them before it runs the KDF (same errors), without
/// deriving a key: what a caller (or a fuzzer) can inspect cheaply.
pub fn read_kdf_params(bytes: &[u8]) -> Result<KdfParams, String> {
    parse_header(bytes).map(|h| h.params)
}

/// Decrypts a sealed file called `name`. A wrong passphrase and a modified
/// file are indistinguishable by design (both fail authentication) and get
/// the same message.
pub fn open(
    bytes: &[u8],
    name: &str,
    passphrase: &Passphrase,
) -> Result<Zeroizing<Vec<u8>>, String> {
    let header = parse_header(bytes)?;
    let key = derive_key(passphrase, header.salt, &header.params)?;
    let cipher = XChaCha20Poly1305::new(key.as_ref().into());
    cipher
        .decrypt(
            XNonce::from_slice(header.nonce),
            Payload {
                msg: &bytes[HEADER_LEN..],
                aad: &aad(&bytes[..HEADER_LEN], name),
            },
        )
        .map(Zeroizing::new)
        .map_err(|_| {
            "cannot decrypt this key file: wrong passphrase, or the file was modified".to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cheap parameters: the format, not the cost, is under test.
    const FAST: KdfParams = KdfParams {
        m_cost_kib: 64,
        t_cost: 1,
        p_cost: 1,
    };

    fn pass(s: &str) -> Passphrase {
        Passphrase::new(s).unwrap()
    }

    #[test]
    fn round_trip_and_the_plaintext_is_not_in_the_file() {
        let secret = b"0123456789abcdef0123456789abcdef-secret-share-bytes".to_vec();
        let sealed = seal(
            &secret,
            "secret-key-share.key",
            &pass("correct horse"),
            FAST,
        )
        .unwrap();
        assert!(is_sealed(&sealed));
        assert_eq!(sealed.len(), HEADER_LEN + secret.len() + TAG_LEN);
        for window in [8, 16] {
            assert!(
                !sealed
                    .windows(window)
                    .any(|w| secret.windows(window).any(|s| s == w)),
                "a {window}-byte run of the plaintext appears in the sealed file"
            );
        }
        let opened = open(&sealed, "secret-key-share.key", &pass("correct horse")).unwrap();
        assert_eq!(&*opened, &secret);
        // Two seals of the same bytes differ (fresh salt and nonce).
        let again = seal(
            &secret,
            "secret-key-share.key",
            &pass("correct horse"),
            FAST,
        )
        .unwrap();
        assert_ne!(sealed, again);
    }

    #[test]
    fn wrong_passphrase_renamed_file_and_every_modified_byte_are_refused() {
        let sealed = seal(b"identity seed", "identity.key", &pass("right"), FAST).unwrap();
        let err = open(&sealed, "identity.key", &pass("wrong")).unwrap_err();
        assert!(err.contains("wrong passphrase"), "{err}");
        let err = open(&sealed, "secret-key-share.key", &pass("right")).unwrap_err();
        assert!(err.contains("wrong passphrase"), "{err}");
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x01;
            let err = open(&bad, "identity.key", &pass("right"))
                .expect_err(&format!("a flipped byte {i} was accepted"));
            assert!(!err.is_empty());
        }
    }

    #[test]
    fn truncated_and_hostile_headers_are_refused_without_panicking() {
        let sealed = seal(b"seed", "identity.key", &pass("p"), FAST).unwrap();
        for len in 0..sealed.len() {
            assert!(
                open(&sealed[..len], "identity.key", &pass("p")).is_err(),
                "{len}"
            );
        }
        let err = open(&sealed[..HEADER_LEN + 3], "identity.key", &pass("p")).unwrap_err();
        assert!(err.contains("truncated"), "{err}");
        let mut huge = sealed.clone();
        huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = open(&huge, "identity.key", &pass("p")).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
        let mut version = sealed.clone();
        version[8] = 9;
        let err = open(&version, "identity.key", &pass("p")).unwrap_err();
        assert!(err.contains("version 9"), "{err}");
    }

    #[test]
    fn the_header_is_read_without_the_kdf_and_open_agrees() {
        let sealed = seal(b"seed", "identity.key", &pass("p"), FAST).unwrap();
        assert_eq!(read_kdf_params(&sealed), Ok(FAST));
        let mut huge = sealed.clone();
        huge[10..14].copy_from_slice(&(KdfParams::MAX_M_COST_KIB + 1).to_le_bytes());
        let err = read_kdf_params(&huge).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
        assert_eq!(open(&huge, "identity.key", &pass("p")).unwrap_err(), err);
        assert!(read_kdf_params(b"FEDHESEC")
            .unwrap_err()
            .contains("truncated"));
        assert!(read_kdf_params(b"plain").is_err());
    }

    #[test]
    fn passphrase_files_lose_one_newline_and_must_be_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pass");
        std::fs::write(&path, "hunter2\r\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(&*Passphrase::from_file(&path).unwrap().0, b"hunter2");
        std::fs::write(&path, "\n").unwrap();
        assert!(Passphrase::from_file(&path).unwrap_err().contains("empty"));
        std::fs::write(&path, "hunter2").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Passphrase::from_file(&path).unwrap_err();
        assert!(err.contains("accessible by others"), "{err}");
        assert!(!format!("{:?}", pass("hunter2")).contains("hunter2"));
    }
}
