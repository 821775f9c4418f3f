//! Certificates for the TLS tests, made by the test with rcgen: a test CA and what it
//! signs (a server certificate, possibly expired or for another name), self-signed ones,
//! and client certificates for CertFP. Each is PEM text, written to a file on demand.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, date_time_ymd};
use sha2::{Digest as _, Sha256};

use super::HarnessError;

/// A certificate and its private key, both PEM.
#[derive(Clone, Debug)]
pub struct Pem {
    /// The certificate.
    pub cert: String,
    /// Its PKCS#8 private key.
    pub key: String,
    /// The certificate's DER.
    pub der: Vec<u8>,
}

impl Pem {
    /// Writes `NAME.pem` and `NAME.key` into `dir`; the two paths.
    pub fn write(&self, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), HarnessError> {
        let cert = dir.join(format!("{name}.pem"));
        let key = dir.join(format!("{name}.key"));
        std::fs::write(&cert, &self.cert).map_err(HarnessError::io(format!("writing {}", cert.display())))?;
        std::fs::write(&key, &self.key).map_err(HarnessError::io(format!("writing {}", key.display())))?;
        Ok((cert, key))
    }

    /// The SHA-256 of the certificate in lower-case hex: its CertFP as InspIRCd reports it
    /// with `hash="sha256"` (what `NickServ CERT ADD` takes).
    pub fn fingerprint(&self) -> String {
        Sha256::digest(&self.der).iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Which way a made server certificate is wrong, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// Valid now, for the names asked.
    Good,
    /// Valid only in 2020.
    Expired,
}

/// A CA for tests.
pub struct TestCa {
    /// The CA's own certificate (its key is in the issuer).
    pub pem: Pem,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> Result<TestCa, HarnessError> {
        let key = KeyPair::generate().map_err(rcgen_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_error)?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).map_err(rcgen_error)?;
        let pem = Pem { cert: cert.pem(), key: key.serialize_pem(), der: cert.der().to_vec() };
        Ok(TestCa { pem, issuer: Issuer::new(params, key) })
    }

    /// A certificate for `names` (DNS names or IP addresses) signed by this CA.
    pub fn sign(&self, names: &[&str], validity: Validity) -> Result<Pem, HarnessError> {
        make(names, validity, Some(&self.issuer))
    }
}

/// A self-signed certificate for `names`.
pub fn self_signed(names: &[&str], validity: Validity) -> Result<Pem, HarnessError> {
    make(names, validity, None)
}

fn make(
    names: &[&str],
    validity: Validity,
    issuer: Option<&Issuer<'static, KeyPair>>,
) -> Result<Pem, HarnessError> {
    let key = KeyPair::generate().map_err(rcgen_error)?;
    let mut params = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
        .map_err(rcgen_error)?;
    params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("spellbridge test"));
    if validity == Validity::Expired {
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2020, 12, 31);
    }
    let cert = match issuer {
        Some(issuer) => params.signed_by(&key, issuer),
        None => params.self_signed(&key),
    }
    .map_err(rcgen_error)?;
    Ok(Pem { cert: cert.pem(), key: key.serialize_pem(), der: cert.der().to_vec() })
}

fn rcgen_error(error: rcgen::Error) -> HarnessError {
    HarnessError::Io {
        what: "making a test certificate".to_owned(),
        source: std::io::Error::other(error.to_string()),
    }
}
