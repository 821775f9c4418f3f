//! What happened at a Thaum table: the engine's answer to an accepted command or a phase
//! boundary, with the numbers before and after so `render.rs` can announce it and tests
//! can check it without reading the text. These are the table's [`Event`](crate::Event)s
//! as they are: serialisable, journaled, rendered only at delivery.

use serde::{Deserialize, Serialize};

use crate::ids::PlayerId;
use crate::time::Timestamp;
use crate::words::Adjustment;

use super::spells::{Side, TornadoRoll};
use super::state::{CoinChange, PlayerSheet, Standing, Thaum, Thaums, TornadoDraw};

/// One thing that happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThaumEvent {
    /// A table opened: season 1, Phase I, the opener holds its 1 Mana.
    Opened {
        /// The opener, game master and first player.
        game_master: PlayerId,
        /// When Phase I ends by the schedule, if it does.
        next_phase: Option<Timestamp>,
    },
    /// A player joined (RULES T-4).
    Joined {
        /// The new player.
        player: PlayerId,
        /// The game master who added them, if they did not join themselves.
        added_by: Option<PlayerId>,
        /// Their Mana now (this phase's 1).
        mana: u32,
    },
    /// Gather Power.
    Gathered {
        /// The caster.
        player: PlayerId,
        /// The Thaum raised.
        thaum: Thaum,
        /// Mana spent.
        mana_spent: u32,
        /// Mana left.
        mana_left: u32,
        /// The Thaum before.
        before: i8,
        /// The Thaum after (clamped).
        after: i8,
    },
    /// Blood Magic (RULES T-5).
    BloodMagic {
        /// The caster.
        player: PlayerId,
        /// The Thaum lowered.
        thaum: Thaum,
        /// The amount asked.
        amount: u32,
        /// The Thaum before.
        before: i8,
        /// The Thaum after (clamped).
        after: i8,
        /// Mana granted: the actual decrease.
        mana_granted: u32,
        /// Mana now.
        mana_left: u32,
    },
    /// Alchemy.
    Alchemy {
        /// The caster.
        player: PlayerId,
        /// The first Thaum and its value before.
        first: (Thaum, i8),
        /// The second Thaum and its value before.
        second: (Thaum, i8),
        /// Mana spent.
        mana_spent: u32,
        /// Mana left.
        mana_left: u32,
        /// N = m · X · Y.
        n: i64,
        /// What happened to the caster's coins (RULES T-9).
        coins: CoinChange,
    },
    /// Bending (RULES T-6).
    Bending {
        /// The caster.
        caster: PlayerId,
        /// The defender (may be the caster).
        defender: PlayerId,
        /// Mana spent.
        mana_spent: u32,
        /// Mana left.
        mana_left: u32,
        /// The attack vector r = Sᵀa.
        attack: [i64; 4],
        /// The defender's Thaums before.
        defender_before: Thaums,
        /// The defender's Thaums after the attack was added (before the caster is zeroed,
        /// which matters only when they are the same player).
        defender_after: Thaums,
    },
    /// Summoning (RULES T-7).
    Summoning {
        /// The caster.
        caster: PlayerId,
        /// The other player.
        partner: PlayerId,
        /// Mana spent.
        mana_spent: u32,
        /// Mana left.
        mana_left: u32,
        /// N = aᵀSb (times the Mana with the `summoning_scales_with_mana` option).
        n: i64,
        /// The caster's coins.
        caster_coins: CoinChange,
        /// The partner's coins.
        partner_coins: CoinChange,
    },
    /// Tornado (RULES T-8, T-10).
    Tornado {
        /// The caster.
        caster: PlayerId,
        /// The other player.
        target: PlayerId,
        /// Mana spent (the number of repetitions).
        mana_spent: u32,
        /// Mana left.
        mana_left: u32,
        /// The dice seed, when any draw was made: `Dice::from_seed` replays it.
        seed: Option<u64>,
        /// Every repetition in order.
        rolls: Vec<TornadoRoll>,
        /// The caster's Thaums at the end (Air 0).
        caster_after: Thaums,
        /// The target's Thaums at the end.
        target_after: Thaums,
    },
    /// A game master ended the phase by command (RULES T-2); the phase events follow.
    PhaseForced {
        /// The game master.
        by: PlayerId,
    },
    /// A phase ended and Loop Instability rose (RULES T-3).
    PhaseEnded {
        /// The season.
        season: u32,
        /// The phase that ended.
        phase: u32,
        /// Loop Instability before.
        instability_before: u32,
        /// Loop Instability after.
        instability_after: u32,
    },
    /// The loop ended: the season's final standings (RULES T-3).
    LoopEnded {
        /// The season that closed.
        season: u32,
        /// Most coins first.
        standings: Vec<Standing>,
    },
    /// A new season opened with everything at 0.
    SeasonBegan {
        /// The new season.
        season: u32,
    },
    /// A phase began and every player gained 1 Mana (RULES T-1).
    PhaseBegan {
        /// The season.
        season: u32,
        /// The new phase.
        phase: u32,
        /// How many players gained Mana.
        players: usize,
        /// When it ends by the schedule, if it does.
        next_phase: Option<Timestamp>,
    },
    /// A game master changed Loop Instability.
    InstabilityAdjusted {
        /// The game master.
        by: PlayerId,
        /// As typed: set, raise or lower.
        change: Adjustment,
        /// Before.
        before: u32,
        /// After.
        after: u32,
    },
    /// A game master changed a player's coins.
    CoinsAdjusted {
        /// The game master.
        by: PlayerId,
        /// The player.
        player: PlayerId,
        /// What happened.
        change: CoinChange,
    },
    /// A game master made a player at the table a game master (`!gm add`).
    GameMasterAdded {
        /// Who did it.
        by: PlayerId,
        /// The new game master.
        player: PlayerId,
        /// Every game master now.
        game_masters: Vec<PlayerId>,
    },
    /// A game master removed a game master (`!gm remove`; never the last one).
    GameMasterRemoved {
        /// Who did it (may be `player`, stepping down).
        by: PlayerId,
        /// The game master no longer.
        player: PlayerId,
        /// Every game master now.
        game_masters: Vec<PlayerId>,
    },
    /// The game masters, for `!gm list`.
    GameMasters {
        /// Every game master.
        game_masters: Vec<PlayerId>,
    },
    /// A player's sheet, for `!status`.
    Sheet {
        /// The player.
        player: PlayerId,
        /// Their sheet.
        sheet: PlayerSheet,
        /// The season.
        season: u32,
        /// The phase.
        phase: u32,
        /// Loop Instability.
        instability: u32,
    },
    /// The whole table, for `!status` by a non-player or `!status table`.
    Summary {
        /// The season.
        season: u32,
        /// The phase.
        phase: u32,
        /// Loop Instability.
        instability: u32,
        /// The game masters.
        game_masters: Vec<PlayerId>,
        /// Every player's sheet, by name.
        players: Vec<(PlayerId, PlayerSheet)>,
        /// When this phase ends by the schedule, if it does.
        next_phase: Option<Timestamp>,
        /// True once the table was stopped.
        finished: bool,
    },
    /// A game master (or the room's operator) stopped the table; these are the final
    /// standings.
    Stopped {
        /// Who stopped it.
        by: PlayerId,
        /// The season that was running.
        season: u32,
        /// Most coins first.
        standings: Vec<Standing>,
    },
}

impl ThaumEvent {
    /// The random draws this event made, as recorded in the history (RULES T-10).
    pub fn draws(&self) -> Vec<TornadoDraw> {
        match self {
            ThaumEvent::Tornado { caster, target, rolls, .. } => rolls
                .iter()
                .map(|roll| TornadoDraw {
                    thaum: roll.thaum,
                    player: match roll.side {
                        Side::Caster => caster.clone(),
                        Side::Target => target.clone(),
                    },
                    k: roll.k,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// True for the answers to questions (`!status`, `!gm list`), which go only to whoever
    /// asked.
    pub fn is_reply(&self) -> bool {
        matches!(self, ThaumEvent::Sheet { .. } | ThaumEvent::Summary { .. } | ThaumEvent::GameMasters { .. })
    }
}
