//! IRCv3 capability negotiation (<https://ircv3.net/specs/extensions/capability-negotiation>),
//! without I/O: the connection shows it each `CAP` message and does what it answers.
//!
//! The whole `CAP LS 302` reply is read first (a server may split it over lines, each
//! but the last marked `*`), with each capability's value (`sasl=PLAIN,EXTERNAL`,
//! `sts=port=6697`). Then only what the server offers and the bot wants is requested, one
//! capability per `REQ` so that a server refusing one (`NAK`) refuses only that one.
//! `CAP END` is sent exactly once: when every request is answered and the login (if any)
//! is over. `cap-notify` (`NEW`/`DEL`, implied by 302) is followed after registration.

use std::collections::{BTreeMap, BTreeSet};

use irc::proto::CapSubCommand;

/// The capabilities the bot uses when offered. Not echo-message or labeled-response:
/// with them InspIRCd's small unflushed writes meet the client's delayed ACK and every
/// exchange stalls ~40 ms (SERVERS.md), and the bot does not need them.
pub const WANTED: [&str; 8] = [
    "message-tags",
    "server-time",
    "account-tag",
    "account-notify",
    "extended-join",
    "multi-prefix",
    "cap-notify",
    "away-notify",
];

/// What the connection should do after a `CAP` message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send `CAP REQ :<capability>`.
    Request(String),
    /// The `LS` reply is complete: the offer is known ([`Caps::offered`]).
    Listed,
    /// The server enabled this capability.
    Enabled(String),
    /// The server refused this capability.
    Refused(String),
    /// The server offers these now (`NEW`): request those wanted with [`Step::Request`]s
    /// that follow this one.
    New(Vec<String>),
    /// The server no longer offers these (`DEL`); they are disabled.
    Deleted(Vec<String>),
}

/// The state of one connection's negotiation.
#[derive(Debug, Default)]
pub struct Caps {
    /// The capabilities the bot would like, if offered.
    wanted: BTreeSet<String>,
    /// What the server offers, with values, as read so far.
    offered: BTreeMap<String, Option<String>>,
    /// The `LS` reply is complete.
    listed: bool,
    /// Requested, not yet answered.
    pending: BTreeSet<String>,
    /// Enabled now.
    enabled: BTreeSet<String>,
    /// `CAP END` was sent.
    ended: bool,
}

impl Caps {
    /// Negotiation for a bot that wants [`WANTED`], plus `sasl` when it logs in with SASL.
    pub fn new(sasl: bool) -> Caps {
        let mut wanted: BTreeSet<String> = WANTED.iter().map(|c| (*c).to_owned()).collect();
        if sasl {
            wanted.insert("sasl".to_owned());
        }
        Caps { wanted, ..Caps::default() }
    }

    /// Reads one `CAP` message: its subcommand and the parameters after it.
    pub fn read(&mut self, sub: &CapSubCommand, params: &[&str]) -> Vec<Step> {
        // `LS`/`NEW`/`DEL`/`ACK`/`NAK`: the last parameter is the list; a `*` before it
        // (only in LS and LIST) means more lines follow.
        let (more, list) = match params {
            [] => (false, ""),
            [list] => (false, *list),
            [.., star, list] => (*star == "*", *list),
        };
        let caps = || list.split_whitespace();
        match sub {
            CapSubCommand::LS if !self.listed => {
                for cap in caps() {
                    let (name, value) = match cap.split_once('=') {
                        Some((name, value)) => (name, Some(value.to_owned())),
                        None => (cap, None),
                    };
                    self.offered.insert(name.to_owned(), value);
                }
                if more {
                    return Vec::new();
                }
                self.listed = true;
                let mut steps = vec![Step::Listed];
                steps.extend(self.requests(self.offered.keys().cloned().collect()));
                steps
            }
            CapSubCommand::ACK => {
                let mut steps = Vec::new();
                for cap in caps() {
                    // `-name` in an ACK confirms a disable.
                    if let Some(name) = cap.strip_prefix('-') {
                        self.pending.remove(name);
                        self.enabled.remove(name);
                        continue;
                    }
                    self.pending.remove(cap);
                    self.enabled.insert(cap.to_owned());
                    steps.push(Step::Enabled(cap.to_owned()));
                }
                steps
            }
            CapSubCommand::NAK => caps()
                .map(|cap| {
                    self.pending.remove(cap);
                    Step::Refused(cap.to_owned())
                })
                .collect(),
            CapSubCommand::NEW => {
                let mut fresh = Vec::new();
                for cap in caps() {
                    let (name, value) = match cap.split_once('=') {
                        Some((name, value)) => (name, Some(value.to_owned())),
                        None => (cap, None),
                    };
                    self.offered.insert(name.to_owned(), value);
                    fresh.push(name.to_owned());
                }
                let mut steps = vec![Step::New(fresh.clone())];
                steps.extend(self.requests(fresh));
                steps
            }
            CapSubCommand::DEL => {
                let gone: Vec<String> = caps().map(str::to_owned).collect();
                for cap in &gone {
                    self.offered.remove(cap);
                    self.enabled.remove(cap);
                    self.pending.remove(cap);
                }
                vec![Step::Deleted(gone)]
            }
            _ => Vec::new(),
        }
    }

    /// Requests for those of `caps` that are wanted and neither enabled nor pending.
    fn requests(&mut self, caps: Vec<String>) -> Vec<Step> {
        caps.into_iter()
            .filter(|cap| {
                self.wanted.contains(cap) && !self.enabled.contains(cap) && self.pending.insert(cap.clone())
            })
            .map(Step::Request)
            .collect()
    }

    /// The `LS` reply is complete and every request is answered.
    pub fn settled(&self) -> bool {
        self.listed && self.pending.is_empty()
    }

    /// True the first time only: the caller sends `CAP END` then.
    pub fn end(&mut self) -> bool {
        !std::mem::replace(&mut self.ended, true)
    }

    /// Whether the server offers `cap` (listed, or announced by `NEW`, not deleted).
    pub fn offers(&self, cap: &str) -> bool {
        self.offered.contains_key(cap)
    }

    /// The value the server lists with `cap` (`PLAIN,EXTERNAL` for `sasl=PLAIN,EXTERNAL`).
    pub fn value(&self, cap: &str) -> Option<&str> {
        self.offered.get(cap).and_then(|v| v.as_deref())
    }

    /// Whether `cap` is enabled on this connection.
    pub fn enabled(&self, cap: &str) -> bool {
        self.enabled.contains(cap)
    }
}

/// The parameters of a `CAP` command after its subcommand, as the `irc` crate parsed it.
pub fn params<'a>(third: &'a Option<String>, fourth: &'a Option<String>) -> Vec<&'a str> {
    [third, fourth].into_iter().flatten().map(String::as_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests(steps: &[Step]) -> Vec<&str> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Request(cap) => Some(cap.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_split_ls_is_read_whole_before_anything_is_requested() {
        let mut caps = Caps::new(true);
        assert!(caps.read(&CapSubCommand::LS, &["*", "multi-prefix sts=port=6697,duration=300"]).is_empty());
        let steps = caps.read(&CapSubCommand::LS, &["account-tag sasl=PLAIN,EXTERNAL echo-message"]);
        assert_eq!(steps[0], Step::Listed);
        assert_eq!(requests(&steps), ["account-tag", "multi-prefix", "sasl"]);
        assert_eq!(caps.value("sasl"), Some("PLAIN,EXTERNAL"));
        assert_eq!(caps.value("sts"), Some("port=6697,duration=300"));
        assert!(!caps.settled());
        caps.read(&CapSubCommand::ACK, &["account-tag"]);
        caps.read(&CapSubCommand::NAK, &["multi-prefix"]);
        assert!(!caps.settled());
        assert_eq!(caps.read(&CapSubCommand::ACK, &["sasl"]), [Step::Enabled("sasl".to_owned())]);
        assert!(caps.settled());
        assert!(caps.enabled("sasl") && !caps.enabled("multi-prefix"));
        assert!(caps.end() && !caps.end(), "CAP END once");
    }

    #[test]
    fn nothing_unoffered_is_requested_and_sasl_only_when_configured() {
        let mut caps = Caps::new(false);
        let steps = caps.read(&CapSubCommand::LS, &["sasl message-tags"]);
        assert_eq!(requests(&steps), ["message-tags"]);
        let mut caps = Caps::new(true);
        let steps = caps.read(&CapSubCommand::LS, &[""]);
        assert!(requests(&steps).is_empty());
        assert!(caps.settled());
    }

    #[test]
    fn cap_notify_adds_and_removes() {
        let mut caps = Caps::new(true);
        caps.read(&CapSubCommand::LS, &["cap-notify"]);
        caps.read(&CapSubCommand::ACK, &["cap-notify"]);
        let steps = caps.read(&CapSubCommand::NEW, &["sasl=PLAIN"]);
        assert_eq!(steps, [Step::New(vec!["sasl".to_owned()]), Step::Request("sasl".to_owned())]);
        caps.read(&CapSubCommand::ACK, &["sasl"]);
        assert_eq!(caps.read(&CapSubCommand::DEL, &["sasl"]), [Step::Deleted(vec!["sasl".to_owned()])]);
        assert!(!caps.offers("sasl") && !caps.enabled("sasl"));
    }
}
