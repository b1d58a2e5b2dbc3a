//! Artifacts: bundles on disk, the local cache the Python client shares, and the integrity
//! checks every artifact passes before it is launched.

pub mod bundle;
pub mod cache;
pub mod integrity;

use std::io::{self, Read as _};
use std::path::Path;

pub use bundle::{Bundle, BundleEntry, LoadedKernel};
pub use cache::{default_cache_dir, ArtifactCache};

/// The bytes of `path`, a regular file of at most `limit` bytes (symlinks followed). A FIFO
/// would block the open and the read, a device (`/dev/zero`) never end the read, a huge file
/// exhaust memory: each is an [`io::ErrorKind::InvalidData`] error whose text says which
/// ("not a regular file", "larger than N bytes"); other errors are the open's or the read's.
pub(crate) fn read_regular_file(path: &Path, limit: usize) -> io::Result<Vec<u8>> {
    // Checked before the open, which blocks on a FIFO until a writer comes (libc is not a
    // dependency, so no O_NONBLOCK open). The file opened is checked again: one swapped in
    // between is refused, though a FIFO swapped in can still block the open.
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::File::open(path)?;
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
