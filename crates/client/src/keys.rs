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

use crate::ClientError;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Name of the identity seed file.
pub const IDENTITY_FILE: &str = "identity.key";
/// Name of the secret key share file.
pub const SECRET_SHARE_FILE: &str = "secret-key-share.key";
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

/// A key folder.
#[derive(Clone, Debug)]
pub struct KeyDir {
    path: PathBuf,
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
        Ok(Self { path })
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
        Ok(Self { path })
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

    /// Reads `name`, refusing a file others can read. The buffer is wiped on drop.
    pub fn read(&self, name: &str) -> Result<Zeroizing<Vec<u8>>, ClientError> {
        let path = self.path.join(name);
        check_private(&path, 0o077)?;
        Ok(Zeroizing::new(fs::read(&path).map_err(|e| io(&path, e))?))
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
}
