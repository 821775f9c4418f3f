//! The router's guards, kept in memory beside the tables: the per-player command limit's
//! counts ([`crate::limits`]), each speaker's relayed-chat bucket ([`crate::relay::rate`])
//! and the players a bot admin ignores, with the new nicks an ignore follows for a while
//! (see [`super::ignore`] for the commands and why a renamed nick is not journaled).
//! Players are counted by player id, so linked identities share one count.

use std::collections::BTreeMap;

use spellbridge_core::{PlayerId, Timestamp};

use crate::limits::{CommandLimit, CommandLimits, Verdict};
use crate::relay::rate::{Pace, SpeakerBuckets, SpeakerRate};

/// How long an ignore follows an ignored player's new nick: a day.
pub const RENAMED_IGNORE_SECS: i64 = 24 * 60 * 60;

/// The limits' counts and the ignored players.
#[derive(Default)]
pub struct Guards {
    /// Recent commands per player, for `RouterConfig::command_limits`.
    commands: CommandLimits<PlayerId>,
    /// Each speaker's relayed-chat bucket, for a bridge's `speaker_rate`.
    speakers: SpeakerBuckets<PlayerId>,
    /// Players a bot admin ignores, and whether they were told since the start.
    ignored: BTreeMap<PlayerId, bool>,
    /// New nicks of ignored players, ignored for a while.
    renamed: BTreeMap<PlayerId, Renamed>,
}

/// An ignored player's new nick.
#[derive(Clone, Debug)]
struct Renamed {
    /// The player the admin ignored.
    of: PlayerId,
    /// When the new nick stops being ignored.
    until: Timestamp,
    /// Whether they were told since the start.
    told: bool,
}

impl Guards {
    /// `before` is now called `now_called` (an IRC nick change): the command count goes
    /// with the new nick, and when `before` is ignored, so is the new nick, for a while.
    pub fn follow_nick(&mut self, before: &PlayerId, now_called: &PlayerId, now: Timestamp) {
        self.commands.carry_over(before, now_called);
        if before == now_called || self.ignored.contains_key(now_called) {
            return;
        }
        self.renamed.retain(|_, renamed| renamed.until > now);
        let followed = match (self.ignored.get(before), self.renamed.get(before)) {
            (Some(&told), _) => Renamed { of: before.clone(), until: now.plus(RENAMED_IGNORE_SECS), told },
            (None, Some(renamed)) => Renamed { until: now.plus(RENAMED_IGNORE_SECS), ..renamed.clone() },
            (None, None) => return,
        };
        self.renamed.insert(now_called.clone(), followed);
    }

    /// `Some` when `player` is ignored (or is an ignored player's new nick, still
    /// followed at `now`): whether they had been told already. Marks them told.
    pub fn ignored_told(&mut self, player: &PlayerId, now: Timestamp) -> Option<bool> {
        let told = match self.ignored.get_mut(player) {
            Some(told) => told,
            None => &mut self.renamed.get_mut(player).filter(|r| r.until > now)?.told,
        };
        Some(std::mem::replace(told, true))
    }

    /// True when no player and no new nick is ignored (the common case, checked first).
    pub fn ignores_nobody(&self) -> bool {
        self.ignored.is_empty() && self.renamed.is_empty()
    }

    /// The players ignored (not the nicks followed), in order.
    pub fn ignored(&self) -> impl Iterator<Item = &PlayerId> {
        self.ignored.keys()
    }

    /// Ignores `player` (untold); false when they already were.
    pub fn ignore(&mut self, player: &PlayerId) -> bool {
        if self.ignored.contains_key(player) {
            return false;
        }
        self.ignored.insert(player.clone(), false);
        true
    }

    /// Takes `player` back, with the new nicks their ignore followed: whether they were
    /// ignored, and whether `player` was itself a followed new nick.
    pub fn unignore(&mut self, player: &PlayerId) -> (bool, bool) {
        let renamed = self.renamed.remove(player).is_some();
        self.renamed.retain(|_, r| r.of != *player);
        (self.ignored.remove(player).is_some(), renamed)
    }

    /// Counts one command of `player` against `limit`.
    pub fn command(&mut self, player: &PlayerId, limit: CommandLimit, now: Timestamp) -> Verdict {
        self.commands.check(player, limit, now)
    }

    /// Counts one relayed line of `player` against a bridge's `rate`.
    pub fn speak(&mut self, player: &PlayerId, rate: SpeakerRate, now: Timestamp) -> Pace {
        self.speakers.check(player, rate, now)
    }
}
