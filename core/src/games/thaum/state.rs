//! The state of a Thaum table, as data: the four Thaums and the strength matrix, each
//! player's sheet (Mana, Coins, Thaums, once-per-phase flags), the season, phase and Loop
//! Instability, the history of accepted actions and the archive of finished seasons.
//!
//! Everything here serialises to the `--state-json` form of CONTRACT.md, and a snapshot
//! deserialises back into the same state (values outside the rules, such as a Thaum of
//! 11, are refused). The rules that change this state live in `engine.rs`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::PlayerId;
use crate::time::Timestamp;

/// The lowest value a Thaum can take.
pub const THAUM_MIN: i8 = -10;
/// The highest value a Thaum can take.
pub const THAUM_MAX: i8 = 10;
/// RULES T-3: when Loop Instability is this or more at a phase's end, the loop ends.
pub const LOOP_LIMIT: u32 = 9;

/// One of the four Thaums, in vector order [Fire, Water, Earth, Air].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thaum {
    /// Fire, index 0. Defeats Air.
    Fire,
    /// Water, index 1. Defeats Fire.
    Water,
    /// Earth, index 2. Defeats Water.
    Earth,
    /// Air, index 3. Defeats Earth; Tornado moves Thaums by the caster's Air.
    Air,
}

impl Thaum {
    /// The four Thaums in vector order.
    pub const ALL: [Thaum; 4] = [Thaum::Fire, Thaum::Water, Thaum::Earth, Thaum::Air];

    /// The Thaum's position in the vector (Fire 0 … Air 3).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The Thaum at position `index` of the vector, if any.
    pub fn from_index(index: usize) -> Option<Thaum> {
        Thaum::ALL.get(index).copied()
    }

    /// The name as shown to players (`Fire`).
    pub const fn name(self) -> &'static str {
        match self {
            Thaum::Fire => "Fire",
            Thaum::Water => "Water",
            Thaum::Earth => "Earth",
            Thaum::Air => "Air",
        }
    }

    /// The name as typed and as stored in JSON (`fire`).
    pub const fn key(self) -> &'static str {
        match self {
            Thaum::Fire => "fire",
            Thaum::Water => "water",
            Thaum::Earth => "earth",
            Thaum::Air => "air",
        }
    }

    /// The Thaum this one defeats (its cell in [`STRENGTH`] is 2). No spell reads it.
    pub const fn defeats(self) -> Thaum {
        match self {
            Thaum::Fire => Thaum::Air,
            Thaum::Water => Thaum::Fire,
            Thaum::Earth => Thaum::Water,
            Thaum::Air => Thaum::Earth,
        }
    }

    /// The strength of this Thaum attacking `defender`: `S[self][defender]`.
    pub const fn strength_against(self, defender: Thaum) -> i8 {
        STRENGTH[self.index()][defender.index()]
    }
}

impl fmt::Display for Thaum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The strength matrix S: row = attacking Thaum, column = defending Thaum.
pub const STRENGTH: [[i8; 4]; 4] = [
    [0, -1, 1, 2], // Fire
    [2, 0, -1, 1], // Water
    [1, 2, 0, -1], // Earth
    [-1, 1, 2, 0], // Air
];

/// Clamps any whole number into the Thaum range [-10, 10].
pub fn clamp_thaum(value: i64) -> i8 {
    // The clamp makes the value fit in an i8, so the cast cannot truncate.
    value.clamp(i64::from(THAUM_MIN), i64::from(THAUM_MAX)) as i8
}

/// A player's four Thaums, each kept in [-10, 10] by every way of changing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "ThaumsJson", into = "ThaumsJson")]
pub struct Thaums([i8; 4]);

impl Thaums {
    /// All four at 0.
    pub const ZERO: Thaums = Thaums([0; 4]);

    /// A vector from any four numbers, each clamped into [-10, 10].
    pub fn clamped(values: [i64; 4]) -> Thaums {
        Thaums(values.map(clamp_thaum))
    }

    /// The value of one Thaum.
    pub fn get(&self, thaum: Thaum) -> i8 {
        self.0[thaum.index()]
    }

    /// Sets one Thaum to `value` clamped into range; returns the value it now has.
    pub fn set(&mut self, thaum: Thaum, value: i64) -> i8 {
        let value = clamp_thaum(value);
        self.0[thaum.index()] = value;
        value
    }

    /// Adds `delta` to one Thaum, clamped into range; returns the value it now has.
    pub fn add(&mut self, thaum: Thaum, delta: i64) -> i8 {
        self.set(thaum, i64::from(self.get(thaum)).saturating_add(delta))
    }

    /// The values in vector order [Fire, Water, Earth, Air].
    pub fn values(&self) -> [i8; 4] {
        self.0
    }

    /// True when all four are 0.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    /// RULES T-6: the attack vector r = Sᵀa of these Thaums a, indexed by the defending
    /// Thaum: `r[j] = Σᵢ a[i] · S[i][j]`. Each entry is within ±40.
    pub fn attack(&self) -> [i64; 4] {
        let mut r = [0i64; 4];
        for (j, entry) in r.iter_mut().enumerate() {
            *entry = (0..4).map(|i| i64::from(self.0[i]) * i64::from(STRENGTH[i][j])).sum();
        }
        r
    }
}

/// The JSON form of [`Thaums`]: `{"fire": 0, "water": 0, "earth": 0, "air": 0}`.
#[derive(Serialize, Deserialize)]
struct ThaumsJson {
    fire: i8,
    water: i8,
    earth: i8,
    air: i8,
}

impl From<Thaums> for ThaumsJson {
    fn from(t: Thaums) -> Self {
        let [fire, water, earth, air] = t.0;
        ThaumsJson { fire, water, earth, air }
    }
}

impl TryFrom<ThaumsJson> for Thaums {
    type Error = String;

    fn try_from(j: ThaumsJson) -> Result<Self, Self::Error> {
        let values = [j.fire, j.water, j.earth, j.air];
        if let Some(bad) = values.iter().find(|v| !(THAUM_MIN..=THAUM_MAX).contains(*v)) {
            return Err(format!("a Thaum of {bad} is outside [-10, 10]"));
        }
        Ok(Thaums(values))
    }
}

/// What one change of a player's coins did (RULES T-9). Balances are net of any debt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoinChange {
    /// The change asked for (negative: a revoke).
    pub requested: i128,
    /// The balance before (negative only with the `coin_debt` option).
    pub before: i128,
    /// The balance after.
    pub after: i128,
    /// The part of a revoke that could not be taken because the balance hit 0.
    pub not_taken: u128,
}

/// One player's sheet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerSheet {
    /// Mana held (ephemeral; accumulates until the loop ends, RULES T-1).
    pub mana: u32,
    /// Coins held, never below 0 (RULES T-9).
    pub coins: u64,
    /// Coins owed, only with the `coin_debt` option; when it is above 0, `coins` is 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debt: u64,
    /// The four Thaums.
    pub thaums: Thaums,
    /// Has cast Blood Magic this phase.
    pub blood_magic_used: bool,
    /// Has cast Tornado this phase.
    pub tornado_used: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PlayerSheet {
    /// The balance net of debt.
    pub fn balance(&self) -> i128 {
        i128::from(self.coins) - i128::from(self.debt)
    }

    /// Grants (`delta` > 0) or revokes (`delta` < 0) coins. A revoke larger than the
    /// balance takes it to 0 and reports the rest as `not_taken`, or with `debt_allowed`
    /// records the rest as debt. Grants pay off debt first. Counts saturate, never wrap.
    pub fn change_coins(&mut self, delta: i128, debt_allowed: bool) -> CoinChange {
        let before = self.balance();
        let mut not_taken = 0u128;
        let size = delta.unsigned_abs();
        if delta >= 0 {
            let paid = size.min(u128::from(self.debt));
            self.debt -= paid as u64; // paid ≤ debt, so it fits
            self.coins = saturating_u64(u128::from(self.coins).saturating_add(size - paid));
        } else {
            let taken = size.min(u128::from(self.coins));
            self.coins -= taken as u64; // taken ≤ coins, so it fits
            let rest = size - taken;
            if debt_allowed {
                self.debt = saturating_u64(u128::from(self.debt).saturating_add(rest));
            } else {
                not_taken = rest;
            }
        }
        CoinChange { requested: delta, before, after: self.balance(), not_taken }
    }

    /// Sets the balance to exactly `coins` (a game master's `!coins <player> n`).
    pub fn set_coins(&mut self, coins: u64) -> CoinChange {
        let before = self.balance();
        self.coins = coins;
        self.debt = 0;
        CoinChange { requested: i128::from(coins) - before, before, after: self.balance(), not_taken: 0 }
    }
}

fn saturating_u64(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// One random draw of a Tornado repetition (RULES T-10), as recorded in the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TornadoDraw {
    /// The Thaum drawn.
    pub thaum: Thaum,
    /// The player drawn (the caster or the target).
    pub player: PlayerId,
    /// The sign drawn, −1 or +1.
    pub k: i8,
}

/// One accepted player action, in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Who acted.
    pub player: PlayerId,
    /// The command as typed, with its prefix (`!gather 1 fire`).
    pub command: String,
    /// Every random draw the action made, in order (only a Tornado draws).
    #[serde(default)]
    pub draws: Vec<TornadoDraw>,
    /// The dice seed, present when the action drew: `Dice::from_seed(seed)` replays it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A player's place in a season's final standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// The player.
    pub player: PlayerId,
    /// Their coins at the end.
    pub coins: u64,
    /// Their debt at the end (only with the `coin_debt` option).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debt: u64,
}

/// How a season came to its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeasonEnd {
    /// Loop Instability reached [`LOOP_LIMIT`] at a phase's end (RULES T-3).
    #[default]
    LoopEnded,
    /// A game master stopped the table.
    Stopped,
}

/// The archived final standings of one season.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonRecord {
    /// The season's number, from 1.
    pub season: u32,
    /// Most coins first; ties by name.
    pub standings: Vec<Standing>,
    /// Why it ended.
    #[serde(default)]
    pub ended: SeasonEnd,
}

/// The whole state of a Thaum table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThaumState {
    /// The season (one loop of the host nomic), from 1.
    pub season: u32,
    /// The phase within the season, from 1 (shown in Roman numerals).
    pub phase: u32,
    /// Loop Instability (RULES T-3).
    pub loop_instability: u32,
    /// Who may use the game-master commands; the table's opener first.
    pub game_masters: Vec<PlayerId>,
    /// Every registered player's sheet.
    pub players: BTreeMap<PlayerId, PlayerSheet>,
    /// Accepted player actions, in order.
    pub history: Vec<HistoryEntry>,
    /// Final standings of every finished season.
    #[serde(default)]
    pub seasons: Vec<SeasonRecord>,
    /// When the current phase began (the schedule's next boundary is counted from here).
    pub phase_started_at: Timestamp,
    /// True once a game master stopped the table.
    #[serde(default)]
    pub finished: bool,
}

impl ThaumState {
    /// Season 1, Phase I, begun at `now`, with `creator` as game master and only player
    /// (holding nothing yet: the engine grants Phase I's Mana).
    pub fn new(creator: &PlayerId, now: Timestamp) -> ThaumState {
        ThaumState {
            season: 1,
            phase: 1,
            loop_instability: 0,
            game_masters: vec![creator.clone()],
            players: BTreeMap::from([(creator.clone(), PlayerSheet::default())]),
            history: Vec::new(),
            seasons: Vec::new(),
            phase_started_at: now,
            finished: false,
        }
    }

    /// True when `player` is a game master of this table.
    pub fn is_game_master(&self, player: &PlayerId) -> bool {
        self.game_masters.contains(player)
    }

    /// The registered player a typed name means: the exact id, else the one id equal to
    /// it ignoring case, also after dropping a leading `@` or a trailing `:` or `,` (as
    /// chat clients add to nicks).
    pub fn resolve_player(&self, typed: &str) -> Option<&PlayerId> {
        let exact = |name: &str| self.players.get_key_value(&PlayerId::new(name)).map(|(id, _)| id);
        let folded = |name: &str| {
            let mut matches = self.players.keys().filter(|id| id.as_str().eq_ignore_ascii_case(name));
            match (matches.next(), matches.next()) {
                (Some(id), None) => Some(id),
                _ => None,
            }
        };
        let trimmed = typed.trim_end_matches([':', ',', '：', '，']);
        let bare = trimmed.strip_prefix('@').unwrap_or(trimmed);
        exact(typed)
            .or_else(|| folded(typed))
            .or_else(|| exact(trimmed))
            .or_else(|| folded(trimmed))
            .or_else(|| exact(bare))
            .or_else(|| folded(bare))
    }

    /// The current standings: most coins first (net of debt), ties by name.
    pub fn standings(&self) -> Vec<Standing> {
        let mut standings: Vec<Standing> = self
            .players
            .iter()
            .map(|(player, sheet)| Standing { player: player.clone(), coins: sheet.coins, debt: sheet.debt })
            .collect();
        // BTreeMap order is by name and the sort is stable, so ties stay by name.
        standings.sort_by(|a, b| b.coins.cmp(&a.coins).then(a.debt.cmp(&b.debt)));
        standings
    }

    /// Checks a state read from outside (a snapshot) keeps the invariants the engine relies on.
    pub fn validate(&self) -> Result<(), String> {
        if self.season == 0 || self.phase == 0 {
            return Err("season and phase count from 1".into());
        }
        if self.game_masters.is_empty() {
            return Err("a Thaum table needs a game master".into());
        }
        if let Some((player, _)) = self.players.iter().find(|(_, s)| s.coins > 0 && s.debt > 0) {
            return Err(format!("{player} has both coins and debt"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defeats_are_the_cells_worth_two() {
        for attacker in Thaum::ALL {
            for defender in Thaum::ALL {
                let is_two = attacker.strength_against(defender) == 2;
                assert_eq!(is_two, attacker.defeats() == defender, "{attacker} vs {defender}");
            }
        }
    }

    #[test]
    fn thaums_clamp_on_every_change() {
        let mut t = Thaums::ZERO;
        assert_eq!(t.add(Thaum::Fire, 1_000_000_000), 10);
        assert_eq!(t.add(Thaum::Water, i64::MIN), -10);
        assert_eq!(Thaums::clamped([11, -11, 3, 0]).values(), [10, -10, 3, 0]);
    }

    #[test]
    fn thaums_serialise_by_name_and_refuse_out_of_range() {
        let json = serde_json::to_value(Thaums::clamped([1, -2, 3, -4])).expect("serialises");
        assert_eq!(json, serde_json::json!({"fire": 1, "water": -2, "earth": 3, "air": -4}));
        let bad: Result<Thaums, _> =
            serde_json::from_value(serde_json::json!({"fire": 11, "water": 0, "earth": 0, "air": 0}));
        assert!(bad.is_err());
    }

    #[test]
    fn revokes_stop_at_zero_or_become_debt() {
        let mut sheet = PlayerSheet { coins: 10, ..PlayerSheet::default() };
        let change = sheet.change_coins(-24, false);
        assert_eq!((sheet.coins, change.not_taken, change.after), (0, 14, 0));

        let mut sheet = PlayerSheet { coins: 10, ..PlayerSheet::default() };
        let change = sheet.change_coins(-24, true);
        assert_eq!((sheet.coins, sheet.debt, change.after), (0, 14, -14));
        sheet.change_coins(20, true);
        assert_eq!((sheet.coins, sheet.debt), (6, 0));
    }

    #[test]
    fn coins_saturate_instead_of_wrapping() {
        let mut sheet = PlayerSheet { coins: u64::MAX - 1, ..PlayerSheet::default() };
        sheet.change_coins(1_000, false);
        assert_eq!(sheet.coins, u64::MAX);
    }

    #[test]
    fn players_are_found_ignoring_case_and_chat_decoration() {
        let mut state = ThaumState::new(&PlayerId::new("Alice"), Timestamp(0));
        state.players.insert(PlayerId::new("@bob:example.org"), PlayerSheet::default());
        assert_eq!(state.resolve_player("alice").map(PlayerId::as_str), Some("Alice"));
        assert_eq!(state.resolve_player("Alice:").map(PlayerId::as_str), Some("Alice"));
        assert_eq!(state.resolve_player("@bob:example.org").map(PlayerId::as_str), Some("@bob:example.org"));
        assert_eq!(state.resolve_player("carol"), None);
    }

    #[test]
    fn standings_put_most_coins_first_and_ties_by_name() {
        let mut state = ThaumState::new(&PlayerId::new("carol"), Timestamp(0));
        for (name, coins) in [("alice", 5), ("bob", 9), ("carol", 5)] {
            state.players.insert(PlayerId::new(name), PlayerSheet { coins, ..PlayerSheet::default() });
        }
        let standings = state.standings();
        let order: Vec<&str> = standings.iter().map(|s| s.player.as_str()).collect();
        assert_eq!(order, ["bob", "alice", "carol"]);
    }
}
