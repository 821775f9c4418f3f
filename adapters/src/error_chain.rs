//! An error with its whole chain of causes, for logs and `check-config --connect`: the
//! `irc` crate's `an io error occurred` alone hides whether the certificate was expired,
//! signed by an unknown CA or for another name, or the connection was refused, reset or
//! timed out. [`error_chain`] writes every cause, outermost first, and ends with what the
//! root cause means in plain words when it is one of those.

use std::error::Error;
use std::io;

use rustls::CertificateError;

/// `outer: cause: root cause (what it means)`. A cause whose text its parent already
/// shows is written once.
pub fn error_chain(error: &(dyn Error + 'static)) -> String {
    let mut text = String::new();
    let mut meaning = None;
    let mut current = Some(error);
    while let Some(error) = current {
        let message = message(error);
        if !message.is_empty() && !text.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
        // The innermost cause known is the one to explain.
        meaning = explain(error).or(meaning);
        current = error.source();
    }
    match meaning {
        Some(meaning) => format!("{text} ({meaning})"),
        None => text,
    }
}

/// The error's own text; rustls writes a certificate check's own error (such as
/// `tls_pin`'s) with `Debug` and gives no source, so that one is written out here.
fn message(error: &(dyn Error + 'static)) -> String {
    let tls = error
        .downcast_ref::<rustls::Error>()
        .or_else(|| error.downcast_ref::<io::Error>()?.get_ref()?.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(CertificateError::Other(other))) => {
            format!("invalid peer certificate: {other}")
        }
        _ => error.to_string(),
    }
}

/// What a well-known cause means, for a reader who does not know rustls's or the OS's words.
fn explain(error: &(dyn Error + 'static)) -> Option<&'static str> {
    if let Some(tls) = error.downcast_ref::<rustls::Error>() {
        return explain_tls(tls);
    }
    let io = error.downcast_ref::<io::Error>()?;
    if let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        return explain_tls(tls);
    }
    Some(match io.kind() {
        io::ErrorKind::ConnectionRefused => {
            "connection refused: nothing listens there; check the server and port (TLS is usually 6697, plain 6667)"
        }
        io::ErrorKind::ConnectionReset => {
            "connection reset by the server: it may be restarting, or expect TLS (or plain text) on that port"
        }
        io::ErrorKind::ConnectionAborted => "connection aborted by the server",
        io::ErrorKind::TimedOut => "timed out: the server did not answer; check the host, port and firewall",
        io::ErrorKind::UnexpectedEof => {
            "the server closed the connection: it may expect TLS (or plain text) on that port"
        }
        io::ErrorKind::NotFound => "no such host or file; check the name",
        _ => return None,
    })
}

/// The TLS failures people meet, in plain words with the option that fixes them.
fn explain_tls(error: &rustls::Error) -> Option<&'static str> {
    let rustls::Error::InvalidCertificate(certificate) = error else {
        return None;
    };
    Some(match certificate {
        CertificateError::UnknownIssuer => {
            "the server's certificate is not signed by a CA this machine trusts: \
             for a private CA set tls_ca, or pin the certificate with tls_pin"
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "the server's certificate has expired: ask its operator to renew it, or pin it with tls_pin"
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet: check this machine's clock"
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "the server's certificate is for another name: connect to a name it lists, or pin it with tls_pin"
        }
        CertificateError::BadSignature | CertificateError::BadEncoding => {
            "the server's certificate is damaged"
        }
        CertificateError::Revoked => "the server's certificate has been revoked",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// An error with an optional cause, like the `irc` crate's.
    #[derive(Debug)]
    struct Wrapper(&'static str, Option<Box<dyn Error + Send + Sync>>);

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_ref().map(|e| e.as_ref() as &(dyn Error + 'static))
        }
    }

    fn io_error_occurred(inner: io::Error) -> Wrapper {
        Wrapper("an io error occurred", Some(Box::new(inner)))
    }

    #[test]
    fn an_unknown_issuer_is_named_under_the_irc_crates_io_error() {
        let tls = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        let text = error_chain(&io_error_occurred(tls));
        assert!(text.starts_with("an io error occurred: invalid peer certificate: UnknownIssuer"), "{text}");
        assert!(text.contains("not signed by a CA this machine trusts"), "{text}");
        assert!(text.contains("tls_ca"), "{text}");
    }

    #[test]
    fn expired_and_wrong_name_certificates_say_so() {
        let expired = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::Expired),
        );
        assert!(error_chain(&io_error_occurred(expired)).contains("has expired"));
        let name = rustls::Error::InvalidCertificate(CertificateError::NotValidForName);
        assert!(error_chain(&name).contains("is for another name"));
    }

    #[test]
    fn refused_reset_and_timeout_are_told_apart() {
        for (kind, words) in [
            (io::ErrorKind::ConnectionRefused, "connection refused"),
            (io::ErrorKind::ConnectionReset, "connection reset"),
            (io::ErrorKind::TimedOut, "timed out"),
        ] {
            let text = error_chain(&io_error_occurred(io::Error::from(kind)));
            assert!(text.starts_with("an io error occurred: "), "{text}");
            assert!(text.contains(words), "{kind:?}: {text}");
        }
    }

    #[test]
    fn a_cause_already_in_its_parents_text_is_written_once() {
        let inner = Wrapper("root cause", None);
        let outer = Wrapper("failed: root cause", Some(Box::new(inner)));
        assert_eq!(error_chain(&outer), "failed: root cause");
        let plain = Wrapper("outer", Some(Box::new(Wrapper("inner", None))));
        assert_eq!(error_chain(&plain), "outer: inner");
    }
}
