//! Reading the P-256 private key for `ECDSA-NIST256P-CHALLENGE` ([`super::ecdsa`]) from
//! the PEM files operators have: SEC1 (`EC PRIVATE KEY`) with or without the
//! `EC PARAMETERS` block that `openssl ecparam -genkey` writes before it (Libera's guide),
//! with or without its public key; PKCS#8 (`PRIVATE KEY`, `openssl genpkey`) with or
//! without its public key. Other blocks (parameters, certificates) are passed over. A key
//! on another curve, or of another kind, is named, so the operator knows what to make.

use p256::SecretKey;
use p256::pkcs8::der::Decode as _;
use p256::pkcs8::der::pem;
use p256::pkcs8::{AssociatedOid as _, ObjectIdentifier, PrivateKeyInfo};

/// Why a PEM text gave no P-256 key.
#[derive(Debug, PartialEq, Eq)]
pub enum Unusable {
    /// No private key block that reads as one.
    NoKey,
    /// A private key, but on this curve, or of this kind (as a person names it).
    Other(String),
    /// An encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`).
    Encrypted,
}

/// `id-ecPublicKey`: the PKCS#8 algorithm of every EC key.
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");

/// The P-256 key in `text`, from the first private key block in it.
pub fn read(text: &str) -> Result<SecretKey, Unusable> {
    // The curve an `EC PARAMETERS` block named, for a SEC1 key that names none.
    let mut parameters: Option<ObjectIdentifier> = None;
    for block in blocks(text) {
        let Ok((label, der)) = pem::decode_vec(block.as_bytes()) else { continue };
        match label {
            "EC PARAMETERS" => parameters = ObjectIdentifier::from_der(&der).ok(),
            "EC PRIVATE KEY" => {
                let Ok(key) = sec1::EcPrivateKey::from_der(&der) else { continue };
                let curve = key.parameters.and_then(|p| p.named_curve()).or(parameters);
                if let Some(curve) = curve.filter(|c| *c != p256::NistP256::OID) {
                    return Err(Unusable::Other(curve_name(curve)));
                }
                if let Ok(secret) = SecretKey::try_from(key) {
                    return Ok(secret);
                }
            }
            "PRIVATE KEY" => {
                let Ok(info) = PrivateKeyInfo::from_der(&der) else { continue };
                if info.algorithm.oid != EC_PUBLIC_KEY {
                    return Err(Unusable::Other(curve_name(info.algorithm.oid)));
                }
                match info.algorithm.parameters_oid() {
                    Ok(curve) if curve == p256::NistP256::OID => {}
                    Ok(curve) => return Err(Unusable::Other(curve_name(curve))),
                    Err(_) => continue,
                }
                if let Ok(secret) = SecretKey::try_from(info) {
                    return Ok(secret);
                }
            }
            "ENCRYPTED PRIVATE KEY" => return Err(Unusable::Encrypted),
            _ => {}
        }
    }
    Err(Unusable::NoKey)
}

/// Each `-----BEGIN …-----` … `-----END …-----` block of `text`, whole; text around and
/// between them (comments, `Bag Attributes`) is left out.
fn blocks(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with("-----BEGIN ") {
            current = Some(String::new());
        }
        if let Some(block) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
            if line.starts_with("-----END ") {
                found.extend(current.take());
            }
        }
    }
    found
}

/// A curve or key algorithm as openssl names it, else its OID.
fn curve_name(oid: ObjectIdentifier) -> String {
    let name = match oid.to_string().as_str() {
        "1.3.132.0.10" => "secp256k1",
        "1.3.132.0.34" => "secp384r1 (P-384)",
        "1.3.132.0.35" => "secp521r1 (P-521)",
        "1.2.840.10045.3.1.1" => "prime192v1 (P-192)",
        "1.3.132.0.33" => "secp224r1 (P-224)",
        "1.3.36.3.3.2.8.1.1.7" => "brainpoolP256r1",
        "1.3.101.112" => "Ed25519",
        "1.3.101.113" => "Ed448",
        "1.2.840.113549.1.1.1" => "RSA",
        other => return format!("OID {other}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::*;
    use crate::irc::ecdsa::{EcdsaError, EcdsaKey};

    /// Runs `openssl` in `dir`; it is on every machine the tests run on.
    fn openssl(dir: &Path, args: &str) -> Vec<u8> {
        let output =
            Command::new("openssl").args(args.split(' ')).current_dir(dir).output().unwrap_or_else(|e| {
                panic!("openssl is needed to make the test keys (apt-get install openssl): {e}")
            });
        assert!(output.status.success(), "openssl {args}: {}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    }

    /// The compressed public point of the key in `file`, as openssl derives it.
    fn openssl_point(dir: &Path, file: &str) -> Vec<u8> {
        let der = openssl(dir, &format!("ec -in {file} -pubout -conv_form compressed -outform DER"));
        der[der.len() - 33..].to_vec()
    }

    #[test]
    fn the_key_files_openssl_writes_are_read_with_or_without_parameters_and_public_key() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        // Libera's guide: an EC PARAMETERS block, then the SEC1 key.
        openssl(d, "ecparam -genkey -name prime256v1 -out libera.pem");
        openssl(d, "ecparam -genkey -name prime256v1 -noout -out sec1.pem");
        openssl(d, "ec -in sec1.pem -no_public -out sec1-no-public.pem");
        openssl(d, "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out pkcs8.pem");
        openssl(d, "pkcs8 -topk8 -nocrypt -in sec1-no-public.pem -out pkcs8-no-public.pem");
        let text = |file: &str| std::fs::read_to_string(d.join(file)).expect("read");
        assert!(text("libera.pem").starts_with("-----BEGIN EC PARAMETERS-----"), "{}", text("libera.pem"));
        assert!(text("pkcs8.pem").starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(text("pkcs8-no-public.pem").len() < text("pkcs8.pem").len(), "the public key is left out");
        for file in ["libera.pem", "sec1.pem", "sec1-no-public.pem", "pkcs8.pem", "pkcs8-no-public.pem"] {
            let key = EcdsaKey::load(&d.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let point = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, key.public_key())
                .expect("base64");
            assert_eq!(point, openssl_point(d, file), "{file}: the key openssl made");
        }
        // Text around the blocks, as some tools write it, is passed over.
        let noted = format!("Bag Attributes\n    localKeyID: 01\n{}", text("pkcs8.pem"));
        assert!(read(&noted).is_ok());
    }

    #[test]
    fn a_key_on_another_curve_or_of_another_kind_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        openssl(d, "ecparam -genkey -name secp384r1 -out p384.pem");
        // Same length as a P-256 key: only its curve tells them apart.
        openssl(d, "ecparam -genkey -name secp256k1 -noout -out k1.pem");
        openssl(d, "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp384r1 -out p384-pkcs8.pem");
        openssl(d, "genpkey -algorithm ed25519 -out ed25519.pem");
        for (file, found) in [
            ("p384.pem", "secp384r1 (P-384)"),
            ("k1.pem", "secp256k1"),
            ("p384-pkcs8.pem", "secp384r1 (P-384)"),
            ("ed25519.pem", "Ed25519"),
        ] {
            let path = d.join(file);
            let error = EcdsaKey::load(&path).expect_err(file);
            assert_eq!(error, EcdsaError::WrongCurve { path: path.clone(), found: found.to_owned() });
            let text = error.to_string();
            assert!(text.contains(&format!("holds a {found} key")), "{text}");
            assert!(text.contains("openssl ecparam -name prime256v1 -genkey -noout"), "{text}");
        }
        openssl(d, "ecparam -genkey -name prime256v1 -noout -out p256.pem");
        openssl(d, "pkcs8 -topk8 -in p256.pem -passout pass:secret -out encrypted.pem");
        let error = EcdsaKey::load(&d.join("encrypted.pem")).expect_err("encrypted");
        assert!(error.to_string().contains("openssl pkcs8 -topk8 -nocrypt"), "{error}");
        let certificate = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";
        assert_eq!(read(certificate).err(), Some(Unusable::NoKey));
    }
}
