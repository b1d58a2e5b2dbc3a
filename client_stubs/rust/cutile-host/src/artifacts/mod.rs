//! Artifacts: bundles on disk, the local cache the Python client shares, and the integrity
//! checks every artifact passes before it is launched.

pub mod bundle;
pub mod cache;
pub mod integrity;

use std::io::{self, Read as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

pub use bundle::{Bundle, BundleEntry, LoadedKernel};
pub use cache::{default_cache_dir, ArtifactCache};

/// The bytes of `path`, a regular file of at most `limit` bytes (symlinks followed). A FIFO
/// would block the open and the read, a device (`/dev/zero`) never end the read, a huge file
/// exhaust memory: each is an [`io::ErrorKind::InvalidData`] error whose text says which
/// ("not a regular file", "larger than N bytes"); other errors are the open's or the read's.
pub(crate) fn read_regular_file(path: &Path, limit: usize) -> io::Result<Vec<u8>> {
    // Opened without waiting (a FIFO's open blocks until a writer comes), then the file
    // opened is checked: whatever was swapped in before the open is refused unread.
    // O_NONBLOCK changes nothing for a regular file's reads.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    if meta.len() > limit as u64 {
        return Err(too_large(limit));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    file.take(limit as u64 + 1).read_to_end(&mut data)?;
    if data.len() > limit {
        return Err(too_large(limit)); // it grew since
    }
    Ok(data)
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "not a regular file")
}

fn too_large(limit: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {limit} bytes"),
    )
}
