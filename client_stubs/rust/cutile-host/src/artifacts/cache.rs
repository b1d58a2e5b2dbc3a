//! The local, content-addressed artifact cache, in the Python client's layout (`cache.py`),
//! so both hosts share one folder: `<root>/<key[:2]>/<key>.bin`, each entry
//! `cutile-client-cache v1\n<sha256 of the payload>\n<payload>`, written to a temporary file
//! in the same folder and renamed into place. A corrupt entry reads as a miss and is removed.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::artifacts::integrity::MAX_CUBIN_BYTES;
use crate::artifacts::read_regular_file;
use crate::errors::{Error, Result};

const MAGIC: &[u8] = b"cutile-client-cache v1\n";
/// The largest entry read: the header and one artifact, a cubin of at most `MAX_CUBIN_BYTES`
/// and its contract (far smaller). A larger file reads as a corrupt entry, not whole.
const MAX_ENTRY_BYTES: usize = MAGIC.len() + 65 + 2 * MAX_CUBIN_BYTES;

/// `$CUTILE_CLIENT_CACHE`, else `$XDG_CACHE_HOME/cutile-serve/client`, else
/// `~/.cache/cutile-serve/client`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(explicit) = std::env::var_os("CUTILE_CLIENT_CACHE").filter(|v| !v.is_empty()) {
        return PathBuf::from(explicit);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache")
        });
    base.join("cutile-serve").join("client")
}

/// Whether `key` is 64 lowercase hex digits.
pub fn is_key(key: &str) -> bool {
    key.len() == 64
        && key
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Bytes by sha256 key, atomically written, checksummed on read.
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    pub root: PathBuf,
}

impl Default for ArtifactCache {
    fn default() -> Self {
        ArtifactCache::new(default_cache_dir())
    }
}

impl ArtifactCache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ArtifactCache { root: root.into() }
    }

    pub fn path_for(&self, key: &str) -> Result<PathBuf> {
        if !is_key(key) {
            return Err(Error::Usage(format!(
                "cache key must be 64 lowercase hex digits, got {key:?}"
            )));
        }
        Ok(self.root.join(&key[..2]).join(format!("{key}.bin")))
    }

    /// The payload stored under `key`, or None (missing or corrupt: then removed). An entry
    /// that is not a regular file (a FIFO would block, a device never end) or is larger than
    /// any artifact is corrupt, and is not read.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path_for(key)?;
        let blob = match read_regular_file(&path, MAX_ENTRY_BYTES) {
            Ok(blob) => blob,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                discard(&path);
                return Ok(None);
            }
            Err(_) => return Ok(None),
        };
        let header_end = MAGIC.len() + 65;
        if !blob.starts_with(MAGIC) || blob.len() < header_end {
            discard(&path);
            return Ok(None);
        }
        let digest = &blob[MAGIC.len()..header_end - 1];
        let payload = &blob[header_end..];
        if hex::encode(Sha256::digest(payload)).as_bytes() != digest {
            discard(&path);
            return Ok(None);
        }
        Ok(Some(payload.to_vec()))
    }

    /// Drop the entry of `key` (one that failed a check above this layer).
    pub fn delete(&self, key: &str) -> Result<()> {
        discard(&self.path_for(key)?);
        Ok(())
    }

    /// Store `payload` under `key` atomically; returns its path.
    pub fn put(&self, key: &str, payload: &[u8]) -> Result<PathBuf> {
        let path = self.path_for(key)?;
        let folder = path.parent().expect("a key folder");
        std::fs::create_dir_all(folder)
            .map_err(|e| Error::io(format!("creating {}", folder.display()), e))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", &key[..16]))
            .suffix(".tmp")
            .tempfile_in(folder)
            .map_err(|e| Error::io(format!("a temporary file in {}", folder.display()), e))?;
        let digest = hex::encode(Sha256::digest(payload));
        let write = |file: &mut std::fs::File| -> std::io::Result<()> {
            file.write_all(MAGIC)?;
            file.write_all(digest.as_bytes())?;
            file.write_all(b"\n")?;
            file.write_all(payload)?;
            file.sync_all()
        };
        write(tmp.as_file_mut())
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        tmp.persist(&path)
            .map_err(|e| Error::io(format!("publishing {}", path.display()), e.error))?;
        Ok(path)
    }

    pub fn contains(&self, key: &str) -> bool {
        matches!(self.get(key), Ok(Some(_)))
    }
}

fn discard(path: &Path) {
    let _ = std::fs::remove_file(path);
}
