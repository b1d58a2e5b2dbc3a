//! Artifacts: bundles on disk, the local cache the Python client shares, and the integrity
//! checks every artifact passes before it is launched.

pub mod bundle;
pub mod cache;
pub mod integrity;

pub use bundle::{Bundle, BundleEntry, LoadedKernel};
pub use cache::{default_cache_dir, ArtifactCache};
