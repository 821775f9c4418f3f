//! Logging in with SASL (<https://ircv3.net/specs/extensions/sasl-3.1>), without I/O:
//! which mechanism to try (the configured order, or the strongest the config allows,
//! narrowed to what the server lists), and each `AUTHENTICATE` exchange: EXTERNAL (the
//! TLS client certificate), ECDSA-NIST256P-CHALLENGE (a key file, [`ecdsa`](super::ecdsa)),
//! SCRAM-SHA-256 ([`scram`](super::scram)) and PLAIN.
//! Payloads are base64 in chunks of at most 400 bytes, an exact multiple ending with `+`.

use std::collections::VecDeque;
use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::ecdsa::{EcdsaError, EcdsaKey};
use super::scram::{Scram, ScramError};

/// A SASL mechanism spellbridge speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// The TLS client certificate (CertFP).
    External,
    /// Atheme's ECDSA-NIST256P-CHALLENGE: a signature with a P-256 key file.
    EcdsaNist256pChallenge,
    /// SCRAM-SHA-256: the password never crosses the wire.
    ScramSha256,
    /// The password in the clear (inside TLS).
    Plain,
}

impl Mechanism {
    /// Every mechanism, strongest first.
    pub const ALL: [Mechanism; 4] =
        [Mechanism::External, Mechanism::EcdsaNist256pChallenge, Mechanism::ScramSha256, Mechanism::Plain];

    /// Its name on the wire and in the config.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::External => "EXTERNAL",
            Mechanism::EcdsaNist256pChallenge => "ECDSA-NIST256P-CHALLENGE",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::Plain => "PLAIN",
        }
    }

    /// The mechanism called `name` (any case).
    pub fn parse(name: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

/// How the bot logs in with SASL on one network.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslOptions {
    /// The services account.
    pub account: String,
    /// Its password (for SCRAM-SHA-256 and PLAIN).
    pub password: Option<String>,
    /// The P-256 key (PEM) for ECDSA-NIST256P-CHALLENGE, read at each login.
    pub ecdsa_key: Option<PathBuf>,
    /// The mechanisms to try, in order; empty: the strongest the config allows
    /// (EXTERNAL with a client certificate, ECDSA-NIST256P-CHALLENGE with a key, then
    /// SCRAM-SHA-256 and PLAIN with a password).
    pub mechanisms: Vec<Mechanism>,
}

impl SaslOptions {
    /// The mechanisms to try, in order, when a client certificate is (or is not) set.
    pub fn candidates(&self, client_certificate: bool) -> Vec<Mechanism> {
        if !self.mechanisms.is_empty() {
            return self.mechanisms.clone();
        }
        Mechanism::ALL
            .into_iter()
            .filter(|m| match m {
                Mechanism::External => client_certificate,
                Mechanism::EcdsaNist256pChallenge => self.ecdsa_key.is_some(),
                Mechanism::ScramSha256 | Mechanism::Plain => self.password.is_some(),
            })
            .collect()
    }
}

/// Why a login did not happen.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SaslError {
    /// None of the mechanisms to try is offered (or all failed).
    #[error(
        "no SASL mechanism left to try: spellbridge tried {tried}; the server offers {offered}. \
         To use one of those, configure what it needs (EXTERNAL: the network's client_cert and \
         client_key; ECDSA-NIST256P-CHALLENGE: sasl.ecdsa_key; SCRAM-SHA-256 or PLAIN: \
         sasl.password) and list it in sasl.mechanisms if you set that"
    )]
    Exhausted {
        /// What was tried, comma-separated.
        tried: String,
        /// What the server lists.
        offered: String,
    },
    /// The SCRAM exchange went wrong.
    #[error(transparent)]
    Scram(#[from] ScramError),
    /// The ECDSA key or the server's challenge cannot be used.
    #[error(transparent)]
    Ecdsa(#[from] EcdsaError),
    /// The server said "logged in" without proving it knows the account's key.
    #[error("the server reported a SCRAM login without proving it holds the account's key; login abandoned")]
    Unproven,
}

/// The exchange under way.
enum Exchange {
    External,
    Plain,
    Scram(Option<Scram>),
    /// Whether the account name was sent (then the next data is the challenge).
    Ecdsa(bool),
}

/// One connection's login.
pub struct Login {
    options: SaslOptions,
    /// Still to try, in order.
    queue: VecDeque<Mechanism>,
    tried: Vec<Mechanism>,
    /// What the server lists (`sasl=` value or 908), if it said.
    offered: Option<Vec<String>>,
    current: Option<Exchange>,
    /// A challenge read so far (chunks of 400 bytes).
    buffer: String,
}

impl Login {
    /// A login trying `candidates`, narrowed to `offered` (the `sasl` capability's value).
    pub fn new(options: SaslOptions, candidates: Vec<Mechanism>, offered: Option<&str>) -> Login {
        let mut login = Login {
            options,
            queue: candidates.into(),
            tried: Vec::new(),
            offered: None,
            current: None,
            buffer: String::new(),
        };
        if let Some(list) = offered.filter(|l| !l.is_empty()) {
            login.listed(list);
        }
        login
    }

    /// The server lists its mechanisms (`sasl=` value, or `908` after a failure).
    pub fn listed(&mut self, list: &str) {
        let names: Vec<String> =
            list.split([',', ' ']).filter(|n| !n.is_empty()).map(str::to_uppercase).collect();
        self.queue.retain(|m| names.iter().any(|n| n == m.name()));
        self.offered = Some(names);
    }

    /// The next mechanism to start (`AUTHENTICATE <name>`), or why there is none.
    pub fn next_mechanism(&mut self) -> Result<Mechanism, SaslError> {
        self.buffer.clear();
        let Some(mechanism) = self.queue.pop_front() else {
            let names = |list: Vec<&str>| if list.is_empty() { "none".to_owned() } else { list.join(", ") };
            return Err(SaslError::Exhausted {
                tried: names(self.tried.iter().map(|m| m.name()).collect()),
                offered: self.offered.as_ref().map_or_else(
                    || "an unknown list".to_owned(),
                    |o| names(o.iter().map(String::as_str).collect()),
                ),
            });
        };
        self.tried.push(mechanism);
        self.current = Some(match mechanism {
            Mechanism::External => Exchange::External,
            Mechanism::Plain => Exchange::Plain,
            Mechanism::ScramSha256 => Exchange::Scram(None),
            Mechanism::EcdsaNist256pChallenge => Exchange::Ecdsa(false),
        });
        Ok(mechanism)
    }

    /// Reads one `AUTHENTICATE` line from the server; returns the lines to answer with
    /// (empty while a long challenge is still arriving).
    pub fn challenge(&mut self, chunk: &str) -> Result<Vec<String>, SaslError> {
        if chunk != "+" {
            self.buffer.push_str(chunk);
            if chunk.len() == 400 {
                return Ok(Vec::new());
            }
        }
        let data = BASE64.decode(std::mem::take(&mut self.buffer)).unwrap_or_default();
        let account = &self.options.account;
        let password = self.options.password.as_deref().unwrap_or_default();
        let answer: Vec<u8> = match &mut self.current {
            None => return Ok(Vec::new()),
            // No authorization identity: the certificate names the account. (Atheme 7.2
            // reads a given one past its end, and then refuses the login for some names.)
            Some(Exchange::External) => Vec::new(),
            Some(Exchange::Plain) => format!("{account}\0{account}\0{password}").into_bytes(),
            // The account (Atheme's authcid), then the signature of the challenge.
            Some(Exchange::Ecdsa(named)) if !*named => {
                *named = true;
                account.as_bytes().to_vec()
            }
            Some(Exchange::Ecdsa(_)) => {
                let path = self.options.ecdsa_key.clone().unwrap_or_default();
                EcdsaKey::load(&path)?.sign(&data)?
            }
            Some(Exchange::Scram(scram)) => match scram {
                None => {
                    let (started, first) = Scram::start(account, password);
                    *scram = Some(started);
                    first.into_bytes()
                }
                Some(exchange) => exchange.step(&String::from_utf8_lossy(&data))?.into_bytes(),
            },
        };
        Ok(encode(&answer))
    }

    /// The server said the login succeeded (903): a SCRAM login must have been proven.
    pub fn succeeded(&self) -> Result<(), SaslError> {
        match &self.current {
            Some(Exchange::Scram(scram)) if !scram.as_ref().is_some_and(Scram::verified) => {
                Err(SaslError::Unproven)
            }
            _ => Ok(()),
        }
    }

    /// The mechanism under way.
    pub fn current(&self) -> Option<Mechanism> {
        self.tried.last().copied().filter(|_| self.current.is_some())
    }
}

/// `data` as `AUTHENTICATE` arguments: base64 in 400-byte chunks, `+` for nothing or
/// after an exact multiple of 400.
pub fn encode(data: &[u8]) -> Vec<String> {
    let encoded = BASE64.encode(data);
    let mut lines: Vec<String> =
        encoded.as_bytes().chunks(400).map(|c| String::from_utf8_lossy(c).into_owned()).collect();
    if encoded.len().is_multiple_of(400) {
        lines.push("+".to_owned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(mechanisms: Vec<Mechanism>) -> SaslOptions {
        SaslOptions {
            account: "bot".to_owned(),
            password: Some("pw".to_owned()),
            ecdsa_key: None,
            mechanisms,
        }
    }

    #[test]
    fn the_strongest_the_config_allows_and_the_server_lists_goes_first() {
        assert_eq!(options(vec![]).candidates(false), [Mechanism::ScramSha256, Mechanism::Plain]);
        assert_eq!(
            options(vec![]).candidates(true),
            [Mechanism::External, Mechanism::ScramSha256, Mechanism::Plain]
        );
        let keyed = SaslOptions { ecdsa_key: Some("bot.pem".into()), password: None, ..options(vec![]) };
        assert_eq!(keyed.candidates(false), [Mechanism::EcdsaNist256pChallenge]);
        let mut login = Login::new(options(vec![]), options(vec![]).candidates(true), Some("PLAIN,EXTERNAL"));
        assert_eq!(login.next_mechanism(), Ok(Mechanism::External));
        assert_eq!(login.next_mechanism(), Ok(Mechanism::Plain));
        assert!(matches!(login.next_mechanism(), Err(SaslError::Exhausted { .. })));
    }

    #[test]
    fn external_only_with_a_password_config_is_no_login() {
        let mut login = Login::new(options(vec![]), options(vec![]).candidates(false), Some("EXTERNAL"));
        let error = login.next_mechanism().expect_err("nothing to try");
        assert_eq!(
            error.to_string(),
            "no SASL mechanism left to try: spellbridge tried none; the server offers EXTERNAL. \
             To use one of those, configure what it needs (EXTERNAL: the network's client_cert and \
             client_key; ECDSA-NIST256P-CHALLENGE: sasl.ecdsa_key; SCRAM-SHA-256 or PLAIN: \
             sasl.password) and list it in sasl.mechanisms if you set that"
        );
    }

    #[test]
    fn plain_and_external_answer_the_empty_challenge() {
        let mut login = Login::new(options(vec![Mechanism::Plain]), vec![Mechanism::Plain], None);
        login.next_mechanism().expect("plain");
        assert_eq!(login.challenge("+"), Ok(vec![BASE64.encode("bot\0bot\0pw")]));
        let mut login = Login::new(options(vec![]), vec![Mechanism::External], None);
        login.next_mechanism().expect("external");
        assert_eq!(login.challenge("+"), Ok(vec!["+".to_owned()]), "an empty authorization identity");
    }

    #[test]
    fn long_payloads_are_chunked() {
        assert_eq!(encode(&[]), ["+"]);
        let lines = encode(&[b'x'; 300]);
        assert_eq!((lines.len(), lines[0].len(), lines[1].as_str()), (2, 400, "+"));
    }

    #[test]
    fn a_scram_success_without_the_server_proof_is_refused() {
        let mut login = Login::new(options(vec![]), vec![Mechanism::ScramSha256], None);
        login.next_mechanism().expect("scram");
        login.challenge("+").expect("client-first");
        assert_eq!(login.succeeded(), Err(SaslError::Unproven));
    }
}
