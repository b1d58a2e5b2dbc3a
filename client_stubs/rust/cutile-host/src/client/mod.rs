//! The cutile-serve client: requests and their cache keys, the gRPC calls with retries.

pub mod facts;
pub mod request;
pub mod retry;
pub mod served;
pub mod service;

pub use request::{request_key, Source};
pub use retry::RetryPolicy;
pub use served::Served;
pub use service::{render_diagnostic, CompileClient, Connection};
