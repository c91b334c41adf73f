//! A member's key folder (DESIGN.md §2 step 1; issue 5 deliverable 6): the
//! folder is 0700 and every file 0600, each written atomically (temporary
//! file, fsync, link into place, fsync of the folder), never overwritten
//! without `force`, and refused when readable by others.
//!
//! | file | what |
//! | --- | --- |
//! | `identity.key` | the ed25519 identity seed (32 bytes, secret) |
//! | `secret-key-share.key` | the RLWE secret key share (`SecretKeyShare::to_key_bytes`, secret) |
//! | `public-key-share.bin` | the public-key share as committed |
//! | `member.json` | member id, ceremony, server, parameter set |
//! | `transcript.json` | the verified ceremony transcript |
//!
//! The two secret files may be encrypted with a passphrase
//! ([`crate::sealed`]): a folder opened [`KeyDir::with_passphrase`] writes
//! them sealed through [`KeyDir::write_secret`], and [`KeyDir::read`] opens a
//! sealed file whatever its name, so every reader accepts both forms:
//!
//! ```no_run
//! # use fedhe_client::keys::{KeyDir, Passphrase};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // --passphrase-file FILE if given, else FEDHE_PASSPHRASE, else none.
//! let passphrase = Passphrase::from_file_or_env(None)?;
//! let keys = KeyDir::open("keys/alpha")?.with_passphrase(passphrase);
//! let identity = keys.read_identity()?;
//! # Ok(()) }
//! ```

use crate::sealed::{self, NEEDS_PASSPHRASE};
pub use crate::sealed::{KdfParams, Passphrase, PASSPHRASE_ENV};
use crate::ClientError;
use fedhe_api::Identity;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Name of the identity seed file.
pub const IDENTITY_FILE: &str = "identity.key";
/// Name of the secret key share file.
pub const SECRET_SHARE_FILE: &str = "secret-key-share.key";
/// Name of the threshold key share file (s'_j of a t-of-n ceremony).
pub const THRESHOLD_SHARE_FILE: &str = "threshold-key-share.key";
/// Name of the result key file (the members' key that blinds every
/// decryption share from the server; `fedhe_crypto::result_key`).
pub const RESULT_KEY_FILE: &str = "result.key";
/// Name of the public-key share file.
pub const PUBLIC_SHARE_FILE: &str = "public-key-share.bin";
/// Name of the member description file.
pub const MEMBER_FILE: &str = "member.json";
/// Name of the transcript file.
pub const TRANSCRIPT_FILE: &str = "transcript.json";

/// What `member.json` records.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemberFile {
    /// The member id.
    pub member: String,
    /// The ceremony.
    pub ceremony: String,
    /// The server it joined through.
    pub server: String,
    /// The parameter set.
    pub parameter_set: String,
}

/// A key folder, with the passphrase its secret files are sealed with (if any).
#[derive(Clone, Debug)]
pub struct KeyDir {
    path: PathBuf,
    passphrase: Option<Passphrase>,
    kdf: KdfParams,
}

fn io(path: &Path, e: std::io::Error) -> ClientError {
    ClientError::Keys(format!("{}: {e}", path.display()))
}

fn check_private(path: &Path, mode_mask: u32) -> Result<(), ClientError> {
    let mode = fs::metadata(path)
        .map_err(|e| io(path, e))?
        .permissions()
        .mode();
    if mode & mode_mask != 0 {
        return Err(ClientError::Keys(format!(
            "{} is accessible by others (mode {:o}); run chmod {} on it",
            path.display(),
            mode & 0o777,
            if mode_mask == 0o077 { "go-rwx" } else { "600" }
        )));
    }
    Ok(())
}

impl KeyDir {
    /// Opens `path`, creating it with mode 0700 if missing; refuses a folder
    /// that others can read.
    pub fn open_or_create(path: impl Into<PathBuf>) -> Result<Self, ClientError> {
        let path = path.into();
        if !path.exists() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path)
                .map_err(|e| io(&path, e))?;
        }
        check_private(&path, 0o077)?;
        Ok(Self::at(path))
    }

    fn at(path: PathBuf) -> Self {
        Self {
            path,
            passphrase: None,
            kdf: KdfParams::DEFAULT,
        }
    }

    /// The same folder with a passphrase (or none): [`Self::write_secret`]
    /// seals with it, [`Self::read`] opens sealed files with it.
    pub fn with_passphrase(mut self, passphrase: Option<Passphrase>) -> Self {
        self.passphrase = passphrase;
        self
    }

    /// The same folder sealing new files with other Argon2id costs (tests use
    /// cheap ones; readers take the costs recorded in each file).
    pub fn with_kdf_params(mut self, kdf: KdfParams) -> Self {
        self.kdf = kdf;
        self
    }

    /// Whether this folder has a passphrase.
    pub fn has_passphrase(&self) -> bool {
        self.passphrase.is_some()
    }

    /// Opens an existing folder (refused if missing or readable by others).
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ClientError> {
        let path = path.into();
        if !path.is_dir() {
            return Err(ClientError::Keys(format!(
                "{} is not a key folder",
                path.display()
            )));
        }
        check_private(&path, 0o077)?;
        Ok(Self::at(path))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        self.path.join(name).exists()
    }

    /// Writes `name` atomically with mode 0600. Refuses to replace an existing
    /// file unless `force`.
    pub fn write(&self, name: &str, bytes: &[u8], force: bool) -> Result<(), ClientError> {
        let target = self.path.join(name);
        if target.exists() && !force {
            return Err(ClientError::Keys(format!(
                "{} exists; refusing to overwrite it without --force",
                target.display()
            )));
        }
        write_atomic(&self.path, name, bytes, force)
    }

    /// Writes a secret file (identity, secret key share) like [`Self::write`],
    /// sealed with the folder's passphrase if it has one.
    pub fn write_secret(&self, name: &str, bytes: &[u8], force: bool) -> Result<(), ClientError> {
        match &self.passphrase {
            None => self.write(name, bytes, force),
            Some(passphrase) => {
                let sealed = sealed::seal(bytes, name, passphrase, self.kdf).map_err(|e| {
                    ClientError::Keys(format!("{}: {e}", self.path.join(name).display()))
                })?;
                self.write(name, &sealed, force)
            }
        }
    }

    /// Reads `name`, refusing a file others can read; a sealed file is
    /// decrypted with the folder's passphrase (refused, saying how to give
    /// one, without it). The buffer is wiped on drop.
    pub fn read(&self, name: &str) -> Result<Zeroizing<Vec<u8>>, ClientError> {
        let path = self.path.join(name);
        check_private(&path, 0o077)?;
        let bytes = Zeroizing::new(fs::read(&path).map_err(|e| io(&path, e))?);
        if !sealed::is_sealed(&bytes) {
            return Ok(bytes);
        }
        let passphrase = self
            .passphrase
            .as_ref()
            .ok_or_else(|| ClientError::Keys(format!("{}: {NEEDS_PASSPHRASE}", path.display())))?;
        sealed::open(&bytes, name, passphrase)
            .map_err(|e| ClientError::Keys(format!("{}: {e}", path.display())))
    }

    /// Whether `name` is sealed with a passphrase.
    pub fn is_encrypted(&self, name: &str) -> Result<bool, ClientError> {
        use std::io::Read;
        let path = self.path.join(name);
        let mut head = [0u8; 8];
        let mut f = fs::File::open(&path).map_err(|e| io(&path, e))?;
        let n = f.read(&mut head).map_err(|e| io(&path, e))?;
        Ok(sealed::is_sealed(&head[..n]))
    }

    /// What `fedhe ceremony join` recorded of the member ([`MEMBER_FILE`]).
    pub fn read_member_file(&self) -> Result<MemberFile, ClientError> {
        serde_json::from_slice(&self.read(MEMBER_FILE)?)
            .map_err(|e| ClientError::Keys(format!("{MEMBER_FILE}: {e}")))
    }

    /// The member's identity ([`IDENTITY_FILE`], sealed or not).
    pub fn read_identity(&self) -> Result<Identity, ClientError> {
        let seed = self.read(IDENTITY_FILE)?;
        let seed: &[u8; 32] = seed.as_slice().try_into().map_err(|_| {
            ClientError::Keys(format!(
                "{}: an identity file holds exactly 32 bytes",
                self.path.join(IDENTITY_FILE).display()
            ))
        })?;
        Ok(Identity::from_seed(seed))
    }
}

/// Writes `dir/name` atomically with mode 0600: a temporary file is written
/// and synced, then renamed (`replace`) or hard-linked (never replaces: fails
/// if the name exists) into place, and the folder is synced.
pub fn write_atomic(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<(), ClientError> {
    let target = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| io(&tmp, e))?;
        f.sync_all().map_err(|e| io(&tmp, e))?;
    }
    let placed = if replace {
        fs::rename(&tmp, &target)
    } else {
        let r = fs::hard_link(&tmp, &target);
        let _ = fs::remove_file(&tmp);
        r
    };
    if let Err(e) = placed {
        let _ = fs::remove_file(&tmp);
        return Err(io(&target, e));
    }
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_private_atomic_and_never_silently_replaced() {
        let root = tempfile::tempdir().unwrap();
        let dir = KeyDir::open_or_create(root.path().join("keys/alpha")).unwrap();
        let mode = fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        dir.write("a.key", b"one", false).unwrap();
        let mode = fs::metadata(dir.path().join("a.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let err = dir.write("a.key", b"two", false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(&**dir.read("a.key").unwrap(), b"one");
        dir.write("a.key", b"two", true).unwrap();
        assert_eq!(&**dir.read("a.key").unwrap(), b"two");
        // Readable by others: refused.
        fs::set_permissions(dir.path().join("a.key"), fs::Permissions::from_mode(0o644)).unwrap();
        assert!(dir
            .read("a.key")
            .unwrap_err()
            .to_string()
            .contains("accessible by others"));
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(KeyDir::open(dir.path()).is_err());
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    const FAST: KdfParams = KdfParams {
        m_cost_kib: 64,
        t_cost: 1,
        p_cost: 1,
    };

    #[test]
    fn sealed_secrets_need_the_passphrase_and_every_reader_opens_them() {
        let root = tempfile::tempdir().unwrap();
        let pass = |s: &str| Some(Passphrase::new(s).unwrap());
        let dir = KeyDir::open_or_create(root.path().join("k"))
            .unwrap()
            .with_kdf_params(FAST)
            .with_passphrase(pass("open sesame"));
        let identity = Identity::generate();
        dir.write_secret(IDENTITY_FILE, &identity.seed()[..], false)
            .unwrap();
        dir.write(PUBLIC_SHARE_FILE, b"public", false).unwrap();
        assert!(dir.is_encrypted(IDENTITY_FILE).unwrap());
        assert!(!dir.is_encrypted(PUBLIC_SHARE_FILE).unwrap());
        let on_disk = fs::read(dir.path().join(IDENTITY_FILE)).unwrap();
        assert!(!on_disk
            .windows(8)
            .any(|w| identity.seed().windows(8).any(|s| s == w)));
        let mode = fs::metadata(dir.path().join(IDENTITY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        let reopened = KeyDir::open(dir.path()).unwrap();
        assert_eq!(
            reopened
                .clone()
                .with_passphrase(pass("open sesame"))
                .read_identity()
                .unwrap()
                .public_key_hex(),
            identity.public_key_hex()
        );
        // Plain files read the same with or without a passphrase.
        assert_eq!(&**reopened.read(PUBLIC_SHARE_FILE).unwrap(), b"public");
        let err = reopened.read_identity().unwrap_err().to_string();
        assert!(
            err.contains("this key file is encrypted; give --passphrase-file or FEDHE_PASSPHRASE"),
            "{err}"
        );
        assert!(err.contains(IDENTITY_FILE), "{err}");
        let err = reopened
            .with_passphrase(pass("open sesam"))
            .read_identity()
            .unwrap_err()
            .to_string();
        assert!(err.contains("wrong passphrase"), "{err}");
        assert!(!err.contains("open sesam"), "{err}");
    }
}
