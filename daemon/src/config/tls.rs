//! `[[irc]]`'s TLS trust options (`tls_ca`, `tls_ca_only`, `tls_pin`, `client_cert`,
//! `client_key`), checked when the config is read: a pin that is not `sha256/BASE64`, a
//! file that cannot be read or holds no certificate, a key that is not the certificate's
//! are refused here, before any connection, with the option to fix.

use std::path::{Path, PathBuf};

use spellbridge_adapters::irc::tls::{self, Pin, TlsOptions};

use super::raw;

/// The network's TLS options, file paths anchored at the config's folder.
pub(super) fn options(raw: &raw::Irc, base: &Path) -> Result<TlsOptions, String> {
    let at = |what: String| format!("[[irc]] `{}`: {what}", raw.name);
    let anchored = |path: &Option<PathBuf>| {
        path.as_ref().map(|path| if path.is_relative() { base.join(path) } else { path.clone() })
    };
    let options = TlsOptions {
        ca: anchored(&raw.tls_ca),
        ca_only: raw.tls_ca_only.unwrap_or(false),
        pin: raw.tls_pin.as_deref().map(str::parse::<Pin>).transpose().map_err(|e| at(e.to_string()))?,
        client_cert: anchored(&raw.client_cert),
        client_key: anchored(&raw.client_key),
    };
    if options == TlsOptions::default() {
        return Ok(options);
    }
    if raw.tls == Some(false) {
        return Err(at("tls_ca, tls_ca_only, tls_pin, client_cert and client_key apply only to TLS; \
             remove tls = false (TLS is the default) or remove them"
            .to_owned()));
    }
    // Reads the files now, so that a wrong path is reported by `check-config`.
    tls::client_config(&options).map_err(|e| at(spellbridge_adapters::error_chain(&e)))?;
    Ok(options)
}
