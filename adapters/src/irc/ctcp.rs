//! CTCP requests (`\x01VERSION\x01`, `\x01PING 123\x01`, …) and the bot's answers, with
//! no I/O. The `irc` crate's own CTCP answering is off (its `ctcp` feature): it answered
//! every request at once, outside the bot's token bucket, so a few hundred requests made
//! the server disconnect the bot for flooding (issue 13). The transport answers through
//! the bucket instead, at most [`PER_USER`] answers per user per [`WINDOW`], and not at
//! all with `ctcp = false` in the network's config.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Answers one user gets per [`WINDOW`]; more requests are ignored.
pub const PER_USER: usize = 2;

/// The window of [`PER_USER`].
pub const WINDOW: Duration = Duration::from_secs(10);

/// The longest PING token echoed back (a client's is a timestamp; longer ones are cut).
const MAX_PING_TOKEN: usize = 32;

/// A CTCP message `\x01COMMAND text\x01` as (command, text); the closing `\x01` may be
/// missing (some clients drop it). `None` for an ordinary message.
pub fn parse(body: &str) -> Option<(&str, &str)> {
    let inner = body.strip_prefix('\u{1}')?;
    let inner = inner.strip_suffix('\u{1}').unwrap_or(inner);
    Some(inner.split_once(' ').unwrap_or((inner, "")))
}

/// The answer to a CTCP request (to be sent as a NOTICE, `\x01` included), or `None` for
/// a request the bot does not answer. `version` is what VERSION answers.
pub fn answer(command: &str, text: &str, version: &str) -> Option<String> {
    let reply = if command.eq_ignore_ascii_case("VERSION") {
        format!("VERSION {version}")
    } else if command.eq_ignore_ascii_case("PING") {
        let token: String = text
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_PING_TOKEN)
            .collect::<String>()
            .trim()
            .to_owned();
        if token.is_empty() {
            return None;
        }
        format!("PING {token}")
    } else if command.eq_ignore_ascii_case("CLIENTINFO") {
        "CLIENTINFO ACTION CLIENTINFO PING VERSION".to_owned()
    } else {
        return None;
    };
    Some(format!("\u{1}{reply}\u{1}"))
}

/// Who was answered when: at most [`PER_USER`] answers per user in any [`WINDOW`] (a
/// sliding window). It takes the time from the caller and reads no clock.
#[derive(Debug, Default)]
pub struct Answered {
    users: HashMap<String, VecDeque<Instant>>,
}

/// The map is pruned of users answered longer than a window ago once it is this big.
const PRUNE_AT: usize = 256;

impl Answered {
    /// True (and counted) when `user` may have an answer at `now`.
    pub fn allow(&mut self, user: &str, now: Instant) -> bool {
        let recent = |t: &Instant| now.saturating_duration_since(*t) < WINDOW;
        if self.users.len() >= PRUNE_AT {
            self.users.retain(|_, times| times.iter().any(recent));
        }
        let times = self.users.entry(user.to_owned()).or_default();
        times.retain(recent);
        if times.len() >= PER_USER {
            return false;
        }
        times.push_back(now);
        true
    }

    /// How many users are remembered.
    pub fn remembered(&self) -> usize {
        self.users.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_gets_a_few_answers_per_window() {
        let t0 = Instant::now();
        let mut answered = Answered::default();
        let alice: Vec<bool> = (0..5).map(|_| answered.allow("alice", t0)).collect();
        assert_eq!(alice, [true, true, false, false, false]);
        assert!(answered.allow("bob", t0), "another user is not affected");
        assert!(!answered.allow("alice", t0 + WINDOW - Duration::from_millis(1)));
        assert!(answered.allow("alice", t0 + WINDOW), "the window has passed");
    }

    #[test]
    fn users_answered_long_ago_are_forgotten() {
        let t0 = Instant::now();
        let mut answered = Answered::default();
        for user in 0..PRUNE_AT {
            answered.allow(&user.to_string(), t0);
        }
        assert!(answered.allow("late", t0 + WINDOW));
        assert_eq!(answered.remembered(), 1);
    }

    #[test]
    fn parse_splits_command_and_text() {
        assert_eq!(parse("\u{1}ACTION waves at \x02bob\x02\u{1}"), Some(("ACTION", "waves at \x02bob\x02")));
        assert_eq!(parse("\u{1}ACTION no closing"), Some(("ACTION", "no closing")));
        assert_eq!(parse("\u{1}VERSION\u{1}"), Some(("VERSION", "")));
        assert_eq!(parse("\u{1}"), Some(("", "")));
        assert_eq!(parse("plain \u{1}text"), None);
    }

    #[test]
    fn version_ping_and_clientinfo_are_answered_and_nothing_else() {
        let version = "spellbridge 0.1.0";
        assert_eq!(answer("VERSION", "", version).as_deref(), Some("\u{1}VERSION spellbridge 0.1.0\u{1}"));
        assert_eq!(answer("version", "", version).as_deref(), Some("\u{1}VERSION spellbridge 0.1.0\u{1}"));
        assert_eq!(answer("PING", "1767225600", version).as_deref(), Some("\u{1}PING 1767225600\u{1}"));
        assert_eq!(
            answer("CLIENTINFO", "", version).as_deref(),
            Some("\u{1}CLIENTINFO ACTION CLIENTINFO PING VERSION\u{1}")
        );
        for unanswered in ["TIME", "FINGER", "USERINFO", "SOURCE", "DCC", ""] {
            assert_eq!(answer(unanswered, "x", version), None, "{unanswered}");
        }
        assert_eq!(answer("PING", "", version), None, "a PING without a token");
    }

    #[test]
    fn a_ping_token_is_echoed_short_and_without_control_characters() {
        let long = "9".repeat(400);
        let echoed = answer("PING", &long, "v").unwrap_or_default();
        assert_eq!(echoed, format!("\u{1}PING {}\u{1}", "9".repeat(MAX_PING_TOKEN)));
        let sneaky = answer("PING", "1\r\nQUIT :bye\u{1}", "v").unwrap_or_default();
        assert_eq!(sneaky, "\u{1}PING 1QUIT :bye\u{1}");
    }
}
