//! The appservice API's routes and its one check, with no I/O (issue 17, item 2): which
//! endpoint a request names ([`route`]) and whether it carries the registration's
//! `hs_token` ([`authorize`]: the `Authorization: Bearer` header, or the legacy
//! `access_token` query parameter; compared in constant time). A request without the
//! token is answered 401 and one with another token 403, before its body is read.

use hyper::Method;
use hyper::header::{AUTHORIZATION, HeaderMap};

/// The appservice API's endpoints (Matrix application service API v1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `PUT /_matrix/app/v1/transactions/{txnId}`: the path segment, decoded.
    Transaction(String),
    /// `GET /_matrix/app/v1/users/{userId}`: the path segment, decoded.
    User(String),
    /// `GET /_matrix/app/v1/rooms/{roomAlias}`: the path segment, decoded.
    Room(String),
    /// `POST /_matrix/app/v1/ping`.
    Ping,
    /// Anything else.
    Unknown,
}

const PREFIX: &str = "/_matrix/app/v1/";

/// The endpoint `method path` names.
pub fn route(method: &Method, path: &str) -> Route {
    let Some(rest) = path.strip_prefix(PREFIX) else { return Route::Unknown };
    let segment = |name: &str| {
        rest.strip_prefix(name)
            .and_then(|s| s.strip_prefix('/'))
            .filter(|s| !s.is_empty() && !s.contains('/'))
            .and_then(percent_decoded)
    };
    match *method {
        Method::PUT => segment("transactions").map_or(Route::Unknown, Route::Transaction),
        Method::GET => match (segment("users"), segment("rooms")) {
            (Some(user), _) => Route::User(user),
            (_, Some(room)) => Route::Room(room),
            _ => Route::Unknown,
        },
        Method::POST if rest == "ping" => Route::Ping,
        _ => Route::Unknown,
    }
}

/// A path segment with its `%XX` escapes decoded; `None` when that is not UTF-8.
fn percent_decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).ok()?);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Whether a request may be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// It carries the homeserver's token.
    Granted,
    /// It carries none: 401.
    Missing,
    /// It carries another: 403.
    Wrong,
}

/// Checks the request's token against `hs_token`: the `Authorization: Bearer` header,
/// else the `access_token` query parameter (deprecated since Matrix 1.11, still sent by
/// older homeservers).
pub fn authorize(headers: &HeaderMap, query: Option<&str>, hs_token: &str) -> Auth {
    let from_header = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    let from_query = query.and_then(|query| {
        query.split('&').find_map(|pair| pair.strip_prefix("access_token=")).map(str::to_owned)
    });
    let given = from_header.map(str::to_owned).or(from_query);
    match given {
        None => Auth::Missing,
        Some(token) if same(token.as_bytes(), hs_token.as_bytes()) => Auth::Granted,
        Some(_) => Auth::Wrong,
    }
}

/// Compares two tokens in time that depends only on their lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

    #[test]
    fn the_four_endpoints_are_routed_and_nothing_else() {
        assert_eq!(
            route(&Method::PUT, "/_matrix/app/v1/transactions/t%201"),
            Route::Transaction("t 1".into())
        );
        assert_eq!(route(&Method::GET, "/_matrix/app/v1/users/%40a%3Ahs"), Route::User("@a:hs".into()));
        assert_eq!(route(&Method::GET, "/_matrix/app/v1/rooms/%23r%3ahs"), Route::Room("#r:hs".into()));
        assert_eq!(route(&Method::GET, "/_matrix/app/v1/users/@a:hs%"), Route::User("@a:hs%".into()));
        assert_eq!(route(&Method::GET, "/_matrix/app/v1/users/%ff"), Route::Unknown, "not UTF-8");
        assert_eq!(route(&Method::POST, "/_matrix/app/v1/ping"), Route::Ping);
        for (method, path) in [
            (Method::GET, "/_matrix/app/v1/transactions/t1"),
            (Method::PUT, "/_matrix/app/v1/transactions/"),
            (Method::PUT, "/_matrix/app/v1/transactions/a/b"),
            (Method::GET, "/_matrix/app/v1/ping"),
            (Method::GET, "/transactions/t1"),
            (Method::GET, "/"),
        ] {
            assert_eq!(route(&method, path), Route::Unknown, "{method} {path}");
        }
    }

    #[test]
    fn the_token_comes_by_header_or_by_query_and_must_be_the_homeservers() {
        let mut headers = HeaderMap::new();
        assert_eq!(authorize(&headers, None, "secret"), Auth::Missing);
        assert_eq!(authorize(&headers, Some("access_token=secret"), "secret"), Auth::Granted);
        assert_eq!(authorize(&headers, Some("x=1&access_token=nope"), "secret"), Auth::Wrong);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer secret"));
        assert_eq!(authorize(&headers, None, "secret"), Auth::Granted);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer secreT"));
        assert_eq!(
            authorize(&headers, Some("access_token=secret"), "secret"),
            Auth::Wrong,
            "the header wins"
        );
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Basic c2VjcmV0"));
        assert_eq!(authorize(&headers, None, "secret"), Auth::Missing);
        assert!(!same(b"secret", b"secre"));
    }
}
