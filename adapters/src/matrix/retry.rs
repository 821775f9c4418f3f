//! What to do when a request to the homeserver fails, with no I/O: [`classify`] sorts a
//! matrix-sdk error into a [`RequestFailure`], and [`backoff`](crate::supervise::backoff) gives
//! the delay before the next attempt after a connection failure.
//!
//! The client is built with matrix-sdk's own retries turned off (it would retry a
//! rate-limited request for up to 15 minutes inside one call, and not retry connection
//! errors at all), so the sync loop and `send` decide here, and log what they do.

use std::time::{Duration, SystemTime};

use matrix_sdk::HttpError;
use matrix_sdk::ruma::api::error::{ErrorKind, RetryAfter};

/// What kind of failure a request met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestFailure {
    /// `M_LIMIT_EXCEEDED`: wait this long (the server's `retry_after_ms`, else 1 s) and
    /// try again.
    RateLimited(Duration),
    /// The homeserver could not be reached, or answered with a 5xx: back off and retry.
    Connection,
    /// `M_UNKNOWN_TOKEN`: the access token is no longer valid; a new login is needed.
    SessionGone,
    /// Anything else (forbidden, not found, bad request, a local store error): retrying
    /// the same request will not help.
    Refused,
}

/// When the server names no delay for a rate limit.
const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(1);
/// The most a rate limit is waited out in one go (a bad date from the server cannot park
/// the bot for days).
const MOST_RATE_LIMIT_WAIT: Duration = Duration::from_secs(300);

/// Sorts an error from a matrix-sdk call.
pub fn classify(error: &matrix_sdk::Error) -> RequestFailure {
    match error {
        matrix_sdk::Error::Http(http) => classify_http(http),
        _ => RequestFailure::Refused,
    }
}

/// Sorts an HTTP-level error.
pub fn classify_http(error: &HttpError) -> RequestFailure {
    match error {
        HttpError::Reqwest(_) => RequestFailure::Connection,
        HttpError::Cached(inner) => classify_http(inner),
        _ => match error.as_client_api_error() {
            Some(api) => classify_api(api.status_code.as_u16(), api.error_kind(), SystemTime::now()),
            None => RequestFailure::Refused,
        },
    }
}

/// Sorts an error response by its status and Matrix error code.
pub fn classify_api(status: u16, kind: Option<&ErrorKind>, now: SystemTime) -> RequestFailure {
    match kind {
        Some(ErrorKind::LimitExceeded(data)) => {
            let wait = match data.retry_after {
                Some(RetryAfter::Delay(delay)) => delay,
                Some(RetryAfter::DateTime(at)) => at.duration_since(now).unwrap_or(Duration::ZERO),
                None => DEFAULT_RATE_LIMIT_WAIT,
            };
            RequestFailure::RateLimited(wait.min(MOST_RATE_LIMIT_WAIT))
        }
        Some(ErrorKind::UnknownToken(_)) => RequestFailure::SessionGone,
        _ if status == 429 => RequestFailure::RateLimited(DEFAULT_RATE_LIMIT_WAIT),
        _ if (500..600).contains(&status) => RequestFailure::Connection,
        _ => RequestFailure::Refused,
    }
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::api::error::{LimitExceededErrorData, UnknownTokenErrorData};

    use super::*;

    fn limited(retry_after: Option<RetryAfter>) -> ErrorKind {
        let mut data = LimitExceededErrorData::new();
        data.retry_after = retry_after;
        ErrorKind::LimitExceeded(data)
    }

    #[test]
    fn rate_limits_wait_what_the_server_says() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let delay = limited(Some(RetryAfter::Delay(Duration::from_millis(1500))));
        assert_eq!(
            classify_api(429, Some(&delay), now),
            RequestFailure::RateLimited(Duration::from_millis(1500))
        );
        let at = limited(Some(RetryAfter::DateTime(now + Duration::from_secs(3))));
        assert_eq!(classify_api(429, Some(&at), now), RequestFailure::RateLimited(Duration::from_secs(3)));
        let past = limited(Some(RetryAfter::DateTime(now - Duration::from_secs(3))));
        assert_eq!(classify_api(429, Some(&past), now), RequestFailure::RateLimited(Duration::ZERO));
        assert_eq!(
            classify_api(429, Some(&limited(None)), now),
            RequestFailure::RateLimited(Duration::from_secs(1))
        );
        let huge = limited(Some(RetryAfter::Delay(Duration::from_secs(86_400))));
        assert_eq!(
            classify_api(429, Some(&huge), now),
            RequestFailure::RateLimited(Duration::from_secs(300))
        );
        assert_eq!(classify_api(429, None, now), RequestFailure::RateLimited(Duration::from_secs(1)));
    }

    #[test]
    fn server_errors_are_retried_and_client_errors_are_not() {
        let now = SystemTime::now();
        assert_eq!(classify_api(502, None, now), RequestFailure::Connection);
        assert_eq!(classify_api(503, Some(&ErrorKind::Unknown), now), RequestFailure::Connection);
        assert_eq!(classify_api(403, Some(&ErrorKind::Forbidden), now), RequestFailure::Refused);
        assert_eq!(classify_api(404, None, now), RequestFailure::Refused);
        let gone = ErrorKind::UnknownToken(UnknownTokenErrorData::new());
        assert_eq!(classify_api(401, Some(&gone), now), RequestFailure::SessionGone);
    }
}
