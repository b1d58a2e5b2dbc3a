//! Retrying gRPC calls: exponential backoff with jitter, honouring the server's RetryInfo
//! (`client_stubs/retry.py`). UNAVAILABLE and RESOURCE_EXHAUSTED are retried; every other
//! status fails at once, as an [`Error::Service`] that keeps the status's rich details (the
//! `ErrorInfo` reason and the `BadRequest` field violations).

use std::future::Future;
use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::errors::Error;

/// How often and how patiently to retry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A RetryInfo delay longer than this is capped.
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(3),
            max_server_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt` (1-based); `jitter` is in [0, 1).
    pub fn delay(&self, attempt: u32, server_delay: Option<Duration>, jitter: f64) -> Duration {
        let doubled = self.initial_backoff.as_secs_f64() * 2f64.powi(attempt as i32 - 1);
        let backoff = doubled.min(self.max_backoff.as_secs_f64());
        let mut waited = Duration::from_secs_f64(backoff * (0.5 + jitter / 2.0));
        if let Some(server) = server_delay {
            waited = waited.max(server.min(self.max_server_delay));
        }
        waited
    }
}

pub fn retried(code: Code) -> bool {
    matches!(code, Code::Unavailable | Code::ResourceExhausted)
}

/// The RetryInfo delay in the status's rich details, if any.
pub fn server_retry_delay(status: &Status) -> Option<Duration> {
    status.get_details_retry_info()?.retry_delay
}

/// `Error::Service` for a final failed status.
pub fn service_error(status: &Status, context: &str) -> Error {
    let details = status.get_error_details();
    let reason = details.error_info().map(|info| info.reason.clone());
    let violations = details
        .bad_request()
        .map(|b| {
            b.field_violations
                .iter()
                .map(|v| format!("{}: {}", v.field, v.description))
                .collect()
        })
        .unwrap_or_default();
    let mut message = status.message().to_string();
    if let Some(reason) = &reason {
        message += &format!(" [{reason}]");
    }
    message += &format!(" ({context})");
    Error::Service {
        code: format!("{:?}", status.code()).to_uppercase_snake(),
        message,
        reason,
        violations,
    }
}

trait UpperSnake {
    fn to_uppercase_snake(&self) -> String;
}

impl UpperSnake for String {
    /// `ResourceExhausted` -> `RESOURCE_EXHAUSTED`: the status names the Python client uses.
    fn to_uppercase_snake(&self) -> String {
        let mut out = String::new();
        for (i, c) in self.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        out
    }
}

/// `call()` retried per `policy`; `what` names the call in the final error.
pub async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    what: &str,
    mut call: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let attempts = policy.max_attempts.max(1);
    for attempt in 1..=attempts {
        match call().await {
            Ok(value) => return Ok(value),
            Err(status) if retried(status.code()) && attempt < attempts => {
                let delay =
                    policy.delay(attempt, server_retry_delay(&status), rand::random::<f64>());
                tokio::time::sleep(delay).await;
            }
            Err(status) => {
                return Err(service_error(
                    &status,
                    &format!("{what}, attempt {attempt}/{attempts}"),
                ))
            }
        }
    }
    unreachable!("the last attempt returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_honours_the_server() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1, None, 0.0), Duration::from_millis(50));
        assert_eq!(policy.delay(2, None, 0.0), Duration::from_millis(100));
        assert_eq!(policy.delay(10, None, 0.0), Duration::from_millis(1500));
        let server = Some(Duration::from_secs(2));
        assert_eq!(policy.delay(1, server, 0.0), Duration::from_secs(2));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(90)), 0.0),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn status_names_are_the_python_ones() {
        let e = service_error(&Status::resource_exhausted("full"), "Compile");
        assert_eq!(
            e.to_string(),
            "compile service error RESOURCE_EXHAUSTED: full (Compile)"
        );
        assert!(retried(Code::Unavailable) && !retried(Code::InvalidArgument));
    }
}
