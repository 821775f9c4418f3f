//! SASL `ECDSA-NIST256P-CHALLENGE`, Atheme's public-key mechanism (Libera offers it):
//! the bot proves it holds the private key whose public half the account registered
//! with `/msg NickServ SET PUBKEY <key>` ([`EcdsaKey::public_key`]).
//!
//! The exchange, as Atheme's `modules/saslserv/ecdsa-nist256p-challenge.c` implements it
//! (atheme/atheme, read for this module):
//! 1. the client sends the account name (`authcid`, or `authcid\0authzid`);
//! 2. the server answers with a random challenge of 32 bytes (`CHALLENGE_LENGTH`, the
//!    size of a SHA-256 digest);
//! 3. the client answers with the DER ECDSA signature over P-256 of the challenge; the
//!    server checks it with `ECDSA_verify(0, challenge, 32, signature, …, pubkey)`, which
//!    takes the challenge as the digest itself: it is signed as a prehash, not hashed
//!    again.
//!
//! The key is a PEM file as operators make it ([`super::ecdsa_pem`]): PKCS#8
//! (`BEGIN PRIVATE KEY`, `openssl genpkey`) or SEC1 (`BEGIN EC PRIVATE KEY`, `openssl
//! ecparam -genkey`, with or without its `EC PARAMETERS` block); a key on another curve
//! is refused by name. Signatures are deterministic (RFC 6979): no random number is drawn.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use p256::ecdsa::{DerSignature, SigningKey};

use super::ecdsa_pem::{self, Unusable};

/// Why the key cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EcdsaError {
    /// The file cannot be read.
    #[error("cannot read the ECDSA key {path}: {detail}; check sasl.ecdsa_key")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        detail: String,
    },
    /// The file holds no P-256 private key.
    #[error(
        "{path} is not a PEM P-256 private key (BEGIN PRIVATE KEY or BEGIN EC PRIVATE KEY); make one with \
         `openssl ecparam -name prime256v1 -genkey -noout -out {path}`"
    )]
    NotAKey {
        /// The file.
        path: PathBuf,
    },
    /// The file holds a private key of another curve or kind.
    #[error(
        "{path} holds a {found} key, but ECDSA-NIST256P-CHALLENGE needs a P-256 (prime256v1) key; make one \
         with `openssl ecparam -name prime256v1 -genkey -noout -out bot.pem` and register its public key \
         with NickServ again"
    )]
    WrongCurve {
        /// The file.
        path: PathBuf,
        /// The curve or kind found, as openssl names it.
        found: String,
    },
    /// The file holds an encrypted key.
    #[error(
        "{path} is an encrypted key (BEGIN ENCRYPTED PRIVATE KEY); the bot cannot ask for its passphrase: \
         write it unencrypted with `openssl pkcs8 -topk8 -nocrypt -in {path} -out bot.pem` and keep that \
         file readable only by the bot"
    )]
    Encrypted {
        /// The file.
        path: PathBuf,
    },
    /// The server's challenge is not the 32 bytes Atheme sends.
    #[error("the server's ECDSA challenge is {0} bytes, not 32")]
    Challenge(usize),
    /// Signing failed.
    #[error("signing the server's ECDSA challenge failed: {0}")]
    Sign(String),
}

/// A P-256 private key for `ECDSA-NIST256P-CHALLENGE`.
pub struct EcdsaKey(SigningKey);

impl std::fmt::Debug for EcdsaKey {
    /// The public key only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EcdsaKey").field(&self.public_key()).finish()
    }
}

impl EcdsaKey {
    /// Reads the PEM key at `path`.
    pub fn load(path: &Path) -> Result<EcdsaKey, EcdsaError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EcdsaError::Read { path: path.to_owned(), detail: e.to_string() })?;
        let path = path.to_owned();
        match ecdsa_pem::read(&text) {
            Ok(secret) => Ok(EcdsaKey(SigningKey::from(secret))),
            Err(Unusable::NoKey) => Err(EcdsaError::NotAKey { path }),
            Err(Unusable::Other(found)) => Err(EcdsaError::WrongCurve { path, found }),
            Err(Unusable::Encrypted) => Err(EcdsaError::Encrypted { path }),
        }
    }

    /// The key in a PEM text (PKCS#8 or SEC1, see [`ecdsa_pem`]).
    pub fn from_pem(text: &str) -> Option<EcdsaKey> {
        ecdsa_pem::read(text).ok().map(|secret| EcdsaKey(SigningKey::from(secret)))
    }

    /// The public key as NickServ `SET PUBKEY` takes it: base64 of the compressed point.
    pub fn public_key(&self) -> String {
        BASE64.encode(self.0.verifying_key().to_encoded_point(true).as_bytes())
    }

    /// The DER signature of the server's 32-byte `challenge`, signed as a prehash.
    pub fn sign(&self, challenge: &[u8]) -> Result<Vec<u8>, EcdsaError> {
        if challenge.len() != 32 {
            return Err(EcdsaError::Challenge(challenge.len()));
        }
        let signature: DerSignature =
            self.0.sign_prehash(challenge).map_err(|e| EcdsaError::Sign(e.to_string()))?;
        Ok(signature.as_bytes().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
    use p256::ecdsa::{Signature, VerifyingKey};

    use super::*;

    /// A fixed key, as SEC1 PEM.
    fn key_pem() -> String {
        let secret = p256::SecretKey::from_slice(&[0x42; 32]).expect("a valid scalar");
        secret.to_sec1_pem(Default::default()).expect("pem").to_string()
    }

    #[test]
    fn the_signature_verifies_against_the_registered_public_key() {
        let key = EcdsaKey::from_pem(&key_pem()).expect("sec1 pem");
        let challenge = [9u8; 32];
        let der = key.sign(&challenge).expect("signed");
        let public = BASE64.decode(key.public_key()).expect("base64");
        assert_eq!(public.len(), 33, "a compressed point");
        let verifying = VerifyingKey::from_sec1_bytes(&public).expect("point");
        let signature = Signature::from_der(&der).expect("DER");
        assert!(verifying.verify_prehash(&challenge, &signature).is_ok());
        assert!(verifying.verify_prehash(&[8u8; 32], &signature).is_err(), "another challenge fails");
    }

    #[test]
    fn a_wrong_file_or_challenge_says_what_is_wrong() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("bot.pem");
        std::fs::write(&path, "not a key").expect("write");
        let error = EcdsaKey::load(&path).expect_err("no key");
        assert!(error.to_string().contains("openssl ecparam -name prime256v1"), "{error}");
        assert!(matches!(EcdsaKey::load(&dir.path().join("none.pem")), Err(EcdsaError::Read { .. })));
        let key = EcdsaKey::from_pem(&key_pem()).expect("key");
        assert_eq!(key.sign(&[1, 2, 3]), Err(EcdsaError::Challenge(3)));
    }
}
