//! The cutile-serve client: requests and their cache keys, the gRPC calls with retries.

pub mod request;

pub use request::{request_key, Source};
