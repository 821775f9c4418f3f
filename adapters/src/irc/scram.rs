//! SASL SCRAM-SHA-256 (RFC 7677 over RFC 5802), the client side: the password never
//! crosses the wire, and the server proves it knows the account's key. Channel binding
//! is not used (gs2 flag `n`). A server-final message whose signature does not match
//! ends the login with [`ScramError::ForgedServer`]: the connection talks to something
//! that does not hold the account's key.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The fewest PBKDF2 iterations accepted: RFC 7677 says at least 4096.
const MIN_ITERATIONS: u32 = 4096;
/// The most accepted: more is a server making the bot burn its CPU.
const MAX_ITERATIONS: u32 = 1_000_000;

/// Why a SCRAM exchange was abandoned.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScramError {
    /// The server's first message is not `r=…,s=…,i=…` or its nonce does not extend ours.
    #[error("the server's SCRAM challenge is malformed ({0})")]
    Malformed(&'static str),
    /// The iteration count is out of bounds.
    #[error("the server asks for {0} PBKDF2 iterations; spellbridge accepts 4096 to 1000000")]
    Iterations(u32),
    /// The server's signature is wrong: it does not know the account's key.
    #[error(
        "the server's SCRAM signature does not match: it does not hold this account's key (a forged or misconfigured server); login abandoned"
    )]
    ForgedServer,
    /// The server refused the proof (`e=…`).
    #[error("the server refused the SCRAM login: {0}")]
    Refused(String),
    /// A message arrived out of order.
    #[error("unexpected SCRAM message")]
    OutOfOrder,
}

/// Where an exchange stands.
enum Stage {
    /// `client-first` sent; waiting for `server-first`.
    First { bare: String },
    /// `client-final` sent; waiting for `server-final`, signed with the server key over
    /// the auth message.
    Final { server_key: Vec<u8>, auth_message: String },
    /// The server proved itself.
    Verified,
    /// The exchange failed; nothing more is read.
    Failed,
}

/// One SCRAM-SHA-256 login.
pub struct Scram {
    password: String,
    nonce: String,
    stage: Stage,
}

/// `=` and `,` escaped as SCRAM names need.
fn saslname(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length.
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

impl Scram {
    /// Starts a login as `account` with a nonce from the OS generator; returns the
    /// exchange and the `client-first` message.
    pub fn start(account: &str, password: &str) -> (Scram, String) {
        let mut bytes = [0u8; 18];
        getrandom::fill(&mut bytes).expect("the operating system's random generator failed");
        Scram::with_nonce(account, password, &BASE64.encode(bytes))
    }

    /// [`Scram::start`] with a given nonce (RFC 7677's test vector).
    pub fn with_nonce(account: &str, password: &str, nonce: &str) -> (Scram, String) {
        let bare = format!("n={},r={nonce}", saslname(account));
        let first = format!("n,,{bare}");
        (
            Scram { password: password.to_owned(), nonce: nonce.to_owned(), stage: Stage::First { bare } },
            first,
        )
    }

    /// Reads the server's message; returns what to answer (`client-final`, or the empty
    /// answer after a verified `server-final`).
    pub fn step(&mut self, server: &str) -> Result<String, ScramError> {
        match std::mem::replace(&mut self.stage, Stage::Failed) {
            Stage::First { bare } => self.answer(&bare, server),
            Stage::Final { server_key, auth_message } => {
                if let Some(error) = server.strip_prefix("e=") {
                    return Err(ScramError::Refused(error.to_owned()));
                }
                let signature = server
                    .split(',')
                    .find_map(|field| field.strip_prefix("v="))
                    .and_then(|v| BASE64.decode(v).ok())
                    .ok_or(ScramError::ForgedServer)?;
                // Checked in constant time, as any MAC.
                let mut mac =
                    HmacSha256::new_from_slice(&server_key).map_err(|_| ScramError::ForgedServer)?;
                mac.update(auth_message.as_bytes());
                mac.verify_slice(&signature).map_err(|_| ScramError::ForgedServer)?;
                self.stage = Stage::Verified;
                Ok(String::new())
            }
            Stage::Verified | Stage::Failed => Err(ScramError::OutOfOrder),
        }
    }

    fn answer(&mut self, bare: &str, server_first: &str) -> Result<String, ScramError> {
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for field in server_first.split(',') {
            match field.split_once('=') {
                Some(("r", value)) => nonce = Some(value),
                Some(("s", value)) => salt = Some(value),
                Some(("i", value)) => iterations = Some(value),
                Some(("m", _)) => {
                    return Err(ScramError::Malformed("it needs an extension spellbridge lacks"));
                }
                _ => {}
            }
        }
        let nonce = nonce.ok_or(ScramError::Malformed("no nonce"))?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err(ScramError::Malformed("its nonce does not extend the bot's"));
        }
        let salt = salt.and_then(|s| BASE64.decode(s).ok()).ok_or(ScramError::Malformed("no salt"))?;
        let iterations: u32 =
            iterations.and_then(|i| i.parse().ok()).ok_or(ScramError::Malformed("no iteration count"))?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(ScramError::Iterations(iterations));
        }
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(self.password.as_bytes(), &salt, iterations, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key = Sha256::digest(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{bare},{server_first},{without_proof}");
        let client_signature = hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(&client_signature).map(|(k, s)| k ^ s).collect();
        let server_key = hmac(&salted, b"Server Key");
        self.stage = Stage::Final { server_key, auth_message };
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)))
    }

    /// True once the server's signature was checked.
    pub fn verified(&self) -> bool {
        matches!(self.stage, Stage::Verified)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7677, section 3.
    const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const SERVER_FIRST: &str =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    const CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    const SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    #[test]
    fn rfc_7677_test_vector() {
        let (mut scram, first) = Scram::with_nonce("user", "pencil", NONCE);
        assert_eq!(first, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.step(SERVER_FIRST).as_deref(), Ok(CLIENT_FINAL));
        assert!(!scram.verified());
        assert_eq!(scram.step(SERVER_FINAL).as_deref(), Ok(""));
        assert!(scram.verified());
    }

    #[test]
    fn a_forged_server_final_is_refused() {
        let (mut scram, _) = Scram::with_nonce("user", "pencil", NONCE);
        scram.step(SERVER_FIRST).expect("client-final");
        let forged = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G5=";
        assert_eq!(scram.step(forged), Err(ScramError::ForgedServer));
        assert!(!scram.verified());
        let (mut scram, _) = Scram::with_nonce("user", "pencil", NONCE);
        scram.step(SERVER_FIRST).expect("client-final");
        assert_eq!(scram.step("x=nothing"), Err(ScramError::ForgedServer));
    }

    #[test]
    fn a_challenge_that_does_not_extend_the_nonce_or_is_too_cheap_is_refused() {
        let (mut scram, _) = Scram::with_nonce("user", "pencil", NONCE);
        assert!(matches!(
            scram.step("r=other,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
            Err(ScramError::Malformed(_))
        ));
        let (mut scram, _) = Scram::with_nonce("user", "pencil", NONCE);
        let cheap = "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1";
        assert_eq!(scram.step(cheap), Err(ScramError::Iterations(1)));
    }

    #[test]
    fn names_are_escaped() {
        let (_, first) = Scram::with_nonce("a=b,c", "pw", "n");
        assert_eq!(first, "n,,n=a=3Db=2Cc,r=n");
    }
}
