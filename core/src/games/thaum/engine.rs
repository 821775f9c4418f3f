//! The Thaum rules as pure functions: [`open`] a table, [`apply`] a player's command,
//! [`end_phase`] when the schedule or a game master says so. No clock, no I/O: time and
//! dice come in as arguments.
//!
//! [`apply`] makes its checks in this order, and makes every check before any change, so
//! an `Err` leaves the state exactly as it was:
//! 1. the table is stopped (only `!status` still answers);
//! 2. a game-master command from someone who may not use it (see [`may_use`]: a game
//!    master of the table, anyone the daemon made a game master of every table, and for
//!    `!stop` also the room's operator);
//! 3. the actor must be a player (or, for `!join`, must not be one);
//! 4. a named player must be at the table, and must not be the caster where the spell
//!    needs another player;
//! 5. once-per-phase spells already cast this phase;
//! 6. Alchemy naming one Thaum twice;
//! 7. spending more Mana than held (RULES T-9).

use crate::dice::Dice;
use crate::ids::PlayerId;
use crate::plugin::Role;
use crate::time::Timestamp;
use crate::words::{self, Adjustment, MAX_AMOUNT};

use super::ThaumOptions;
use super::command::{ThaumCommand, Verb};
use super::error::{Result, ThaumError};
use super::events::ThaumEvent;
use super::spells;
use super::state::{LOOP_LIMIT, PlayerSheet, SeasonEnd, SeasonRecord, Thaum, ThaumState, Thaums};

/// Opens a table at `now`: season 1, Phase I, `creator` its game master and first player,
/// holding Phase I's 1 Mana (RULES T-1, T-4).
pub fn open(creator: &PlayerId, options: &ThaumOptions, now: Timestamp) -> (ThaumState, Vec<ThaumEvent>) {
    let mut state = ThaumState::new(creator, now);
    grant_phase_mana(&mut state);
    let next_phase = options.schedule.next_boundary_after(now);
    (state, vec![ThaumEvent::Opened { game_master: creator.clone(), next_phase }])
}

/// True when `actor`, whom the daemon judged to have `role`, may use `command` here:
/// anyone may use a player's command or ask a question; a game-master command needs a game
/// master of this table or [`Role::GameMaster`] (a game master of every table), except
/// `!stop`, which the room's operator ([`Role::Operator`]) may also use.
pub fn may_use(state: &ThaumState, actor: &PlayerId, role: Role, command: &ThaumCommand) -> bool {
    if !command.game_master_only() {
        return true;
    }
    match role {
        Role::GameMaster => true,
        Role::Operator if *command == ThaumCommand::Stop => true,
        Role::Operator | Role::Player => state.is_game_master(actor),
    }
}

/// Applies `command` by `actor`, whom the daemon judged to have `role`, at `now`. On
/// `Err` nothing changed.
pub fn apply(
    state: &mut ThaumState,
    options: &ThaumOptions,
    actor: &PlayerId,
    role: Role,
    command: &ThaumCommand,
    now: Timestamp,
    dice: &mut Dice,
) -> Result<Vec<ThaumEvent>> {
    if state.finished && !command.is_query() {
        return Err(ThaumError::TableStopped);
    }
    if !may_use(state, actor, role, command) {
        return Err(ThaumError::NotGameMaster {
            player: actor.clone(),
            verb: command.verb(),
            game_masters: state.game_masters.clone(),
        });
    }
    match command {
        ThaumCommand::Join => join(state, actor, None),
        ThaumCommand::Add { player } => add(state, actor, player),
        ThaumCommand::Gather { mana, thaum } => gather(state, actor, *mana, *thaum),
        ThaumCommand::Blood { amount, thaum } => blood_magic(state, actor, *amount, *thaum),
        ThaumCommand::Alchemy { mana, first, second } => {
            alchemy(state, options, actor, *mana, *first, *second)
        }
        ThaumCommand::Bend { mana, defender } => bending(state, actor, *mana, defender),
        ThaumCommand::Summon { mana, partner } => summoning(state, options, actor, *mana, partner),
        ThaumCommand::Tornado { mana, target } => tornado(state, actor, *mana, target, dice),
        ThaumCommand::Status { player } => status(state, options, actor, player.as_ref()),
        ThaumCommand::PhaseNext => {
            let mut events = vec![ThaumEvent::PhaseForced { by: actor.clone() }];
            events.extend(end_phase(state, options, now));
            Ok(events)
        }
        ThaumCommand::Instability(change) => Ok(vec![adjust_instability(state, actor, *change)]),
        ThaumCommand::Coins { player, change } => adjust_coins(state, options, actor, player, *change),
        ThaumCommand::GmAdd { player } => add_game_master(state, actor, player),
        ThaumCommand::GmRemove { player } => remove_game_master(state, actor, player),
        ThaumCommand::GmList => {
            Ok(vec![ThaumEvent::GameMasters { game_masters: state.game_masters.clone() }])
        }
        ThaumCommand::Stop => Ok(vec![stop(state, actor)]),
    }
}

/// Ends the current phase at `at` (RULES T-2, T-3, T-1). The schedule's timer and a game
/// master's `!phase next` both come here.
///
/// Loop Instability rises by 1; if it is then 9 or more, the loop ends: the standings are
/// archived and a new season opens at Phase I with instability 0 and every sheet at 0.
/// Otherwise the phase number rises. Either way the new phase grants every player 1 Mana
/// and resets the once-per-phase flags, and begins at `at`.
pub fn end_phase(state: &mut ThaumState, options: &ThaumOptions, at: Timestamp) -> Vec<ThaumEvent> {
    let mut events = Vec::with_capacity(4);
    let instability_before = state.loop_instability;
    state.loop_instability = instability_before.saturating_add(1);
    events.push(ThaumEvent::PhaseEnded {
        season: state.season,
        phase: state.phase,
        instability_before,
        instability_after: state.loop_instability,
    });
    if state.loop_instability >= LOOP_LIMIT {
        let standings = state.standings();
        state.seasons.push(SeasonRecord {
            season: state.season,
            standings: standings.clone(),
            ended: SeasonEnd::LoopEnded,
        });
        events.push(ThaumEvent::LoopEnded { season: state.season, standings });
        state.season = state.season.saturating_add(1);
        state.phase = 1;
        state.loop_instability = 0;
        for sheet in state.players.values_mut() {
            *sheet = PlayerSheet::default();
        }
        events.push(ThaumEvent::SeasonBegan { season: state.season });
    } else {
        state.phase = state.phase.saturating_add(1);
    }
    grant_phase_mana(state);
    state.phase_started_at = at;
    events.push(ThaumEvent::PhaseBegan {
        season: state.season,
        phase: state.phase,
        players: state.players.len(),
        next_phase: options.schedule.next_boundary_after(at),
    });
    events
}

/// RULES T-1: every player gains 1 Mana and may cast the once-per-phase spells again.
fn grant_phase_mana(state: &mut ThaumState) {
    for sheet in state.players.values_mut() {
        sheet.mana = sheet.mana.saturating_add(1);
        sheet.blood_magic_used = false;
        sheet.tornado_used = false;
    }
}

/// The actor's sheet, or why they cannot act.
fn sheet_of(state: &ThaumState, player: &PlayerId) -> Result<PlayerSheet> {
    state.players.get(player).copied().ok_or_else(|| ThaumError::NotAPlayer { player: player.clone() })
}

/// The player a typed name means, with their sheet.
fn named(state: &ThaumState, typed: &PlayerId, verb: Verb) -> Result<(PlayerId, PlayerSheet)> {
    match state.resolve_player(typed.as_str()) {
        Some(id) => Ok((id.clone(), state.players.get(id).copied().unwrap_or_default())),
        None => Err(unknown_player(state, typed.as_str(), verb)),
    }
}

fn unknown_player(state: &ThaumState, typed: &str, verb: Verb) -> ThaumError {
    ThaumError::UnknownPlayer {
        typed: typed.to_owned(),
        suggestion: nearest_player(state, typed),
        players: state.players.keys().cloned().collect(),
        verb,
    }
}

/// The player whose name a typed one looks like a typo of.
fn nearest_player(state: &ThaumState, typed: &str) -> Option<PlayerId> {
    let lower: Vec<String> = state.players.keys().map(|p| p.as_str().to_lowercase()).collect();
    words::nearest(typed, lower.iter().map(String::as_str))
        .and_then(|near| state.players.keys().find(|p| p.as_str().to_lowercase() == near))
        .cloned()
}

/// The Mana left after spending `wanted`, or the T-9 refusal, whose example repeats the
/// command (`args` are its words after the amount) spending what is held.
fn spend(sheet: &PlayerSheet, verb: Verb, wanted: u32, args: &str) -> Result<u32> {
    sheet.mana.checked_sub(wanted).ok_or_else(|| ThaumError::NotEnoughMana {
        verb,
        held: sheet.mana,
        wanted,
        args: args.to_owned(),
    })
}

fn store(state: &mut ThaumState, player: &PlayerId, sheet: PlayerSheet) {
    if let Some(slot) = state.players.get_mut(player) {
        *slot = sheet;
    }
}

/// RULES T-4: registers `player` holding this phase's 1 Mana.
fn join(state: &mut ThaumState, player: &PlayerId, added_by: Option<&PlayerId>) -> Result<Vec<ThaumEvent>> {
    if state.players.contains_key(player) {
        return Err(ThaumError::AlreadyJoined { player: player.clone() });
    }
    let sheet = PlayerSheet { mana: 1, ..PlayerSheet::default() };
    state.players.insert(player.clone(), sheet);
    Ok(vec![ThaumEvent::Joined { player: player.clone(), added_by: added_by.cloned(), mana: sheet.mana }])
}

fn add(state: &mut ThaumState, game_master: &PlayerId, typed: &PlayerId) -> Result<Vec<ThaumEvent>> {
    let name = typed.as_str().trim_end_matches([':', ',', '：', '，']);
    if name.is_empty() || name.starts_with('!') {
        return Err(ThaumError::BadName { typed: typed.to_string() });
    }
    if let Some(existing) = state.resolve_player(name) {
        return Err(ThaumError::AlreadyPlaying { player: existing.clone() });
    }
    join(state, &PlayerId::new(name), Some(game_master))
}

fn gather(state: &mut ThaumState, actor: &PlayerId, mana: u32, thaum: Thaum) -> Result<Vec<ThaumEvent>> {
    let mut sheet = sheet_of(state, actor)?;
    let mana_left = spend(&sheet, Verb::Gather, mana, thaum.key())?;
    let before = sheet.thaums.get(thaum);
    let after = sheet.thaums.add(thaum, i64::from(mana));
    sheet.mana = mana_left;
    store(state, actor, sheet);
    Ok(vec![ThaumEvent::Gathered {
        player: actor.clone(),
        thaum,
        mana_spent: mana,
        mana_left,
        before,
        after,
    }])
}

/// Blood Magic, once per phase (RULES T-5: the amount is a whole number ≥ 0 by type).
fn blood_magic(
    state: &mut ThaumState,
    actor: &PlayerId,
    amount: u32,
    thaum: Thaum,
) -> Result<Vec<ThaumEvent>> {
    let mut sheet = sheet_of(state, actor)?;
    if sheet.blood_magic_used {
        return Err(ThaumError::BloodMagicUsed);
    }
    let before = sheet.thaums.get(thaum);
    let after = sheet.thaums.add(thaum, -i64::from(amount));
    // after ≤ before and both are in [-10, 10], so the decrease is 0 to 20.
    let mana_granted = u32::try_from(i32::from(before) - i32::from(after)).unwrap_or(0);
    sheet.mana = sheet.mana.saturating_add(mana_granted);
    sheet.blood_magic_used = true;
    store(state, actor, sheet);
    Ok(vec![ThaumEvent::BloodMagic {
        player: actor.clone(),
        thaum,
        amount,
        before,
        after,
        mana_granted,
        mana_left: sheet.mana,
    }])
}

fn alchemy(
    state: &mut ThaumState,
    options: &ThaumOptions,
    actor: &PlayerId,
    mana: u32,
    first: Thaum,
    second: Thaum,
) -> Result<Vec<ThaumEvent>> {
    let mut sheet = sheet_of(state, actor)?;
    if first == second {
        return Err(ThaumError::SameThaum { thaum: first, mana });
    }
    let mana_left = spend(&sheet, Verb::Alchemy, mana, &format!("{} {}", first.key(), second.key()))?;
    let (x, y) = (sheet.thaums.get(first), sheet.thaums.get(second));
    let n = spells::alchemy_coins(mana, x, y);
    sheet.mana = mana_left;
    let coins = sheet.change_coins(i128::from(n), options.coin_debt);
    sheet.thaums.set(first, 0);
    sheet.thaums.set(second, 0);
    store(state, actor, sheet);
    Ok(vec![ThaumEvent::Alchemy {
        player: actor.clone(),
        first: (first, x),
        second: (second, y),
        mana_spent: mana,
        mana_left,
        n,
        coins,
    }])
}

/// Bending (RULES T-6). The defender may be the caster: the attack is added first and the
/// caster zeroed last, so a self-bend leaves all four at 0.
fn bending(state: &mut ThaumState, actor: &PlayerId, mana: u32, typed: &PlayerId) -> Result<Vec<ThaumEvent>> {
    let mut caster = sheet_of(state, actor)?;
    let (defender_id, mut defender) = named(state, typed, Verb::Bend)?;
    let mana_left = spend(&caster, Verb::Bend, mana, defender_id.as_str())?;
    let (attack, defender_after) = spells::bending(&caster.thaums, &defender.thaums, mana);
    let defender_before = defender.thaums;
    if defender_id == *actor {
        caster.thaums = Thaums::ZERO;
    } else {
        defender.thaums = defender_after;
        store(state, &defender_id, defender);
        caster.thaums = Thaums::ZERO;
    }
    caster.mana = mana_left;
    store(state, actor, caster);
    Ok(vec![ThaumEvent::Bending {
        caster: actor.clone(),
        defender: defender_id,
        mana_spent: mana,
        mana_left,
        attack,
        defender_before,
        defender_after,
    }])
}

/// Summoning (RULES T-7: the Mana is revoked but scales N only with the option on).
fn summoning(
    state: &mut ThaumState,
    options: &ThaumOptions,
    actor: &PlayerId,
    mana: u32,
    typed: &PlayerId,
) -> Result<Vec<ThaumEvent>> {
    let mut caster = sheet_of(state, actor)?;
    let (partner_id, mut partner) = named(state, typed, Verb::Summon)?;
    if partner_id == *actor {
        return Err(ThaumError::SelfTarget { verb: Verb::Summon });
    }
    let mana_left = spend(&caster, Verb::Summon, mana, partner_id.as_str())?;
    let base = spells::summoning_coins(&caster.thaums, &partner.thaums);
    // |base| ≤ 800 and mana ≤ u32::MAX, so the product fits an i64.
    let n = if options.summoning_scales_with_mana { base * i64::from(mana) } else { base };
    caster.mana = mana_left;
    let caster_coins = caster.change_coins(i128::from(n), options.coin_debt);
    let partner_coins = partner.change_coins(i128::from(n), options.coin_debt);
    caster.thaums = Thaums::ZERO;
    partner.thaums = Thaums::ZERO;
    store(state, actor, caster);
    store(state, &partner_id, partner);
    Ok(vec![ThaumEvent::Summoning {
        caster: actor.clone(),
        partner: partner_id,
        mana_spent: mana,
        mana_left,
        n,
        caster_coins,
        partner_coins,
    }])
}

/// Tornado, once per phase (RULES T-8, T-10).
fn tornado(
    state: &mut ThaumState,
    actor: &PlayerId,
    mana: u32,
    typed: &PlayerId,
    dice: &mut Dice,
) -> Result<Vec<ThaumEvent>> {
    let mut caster = sheet_of(state, actor)?;
    let (target_id, mut target) = named(state, typed, Verb::Tornado)?;
    if target_id == *actor {
        return Err(ThaumError::SelfTarget { verb: Verb::Tornado });
    }
    if caster.tornado_used {
        return Err(ThaumError::TornadoUsed);
    }
    let mana_left = spend(&caster, Verb::Tornado, mana, target_id.as_str())?;
    let seed = (mana > 0).then(|| dice.seed());
    let outcome = spells::tornado(caster.thaums, target.thaums, mana, dice);
    caster.thaums = outcome.caster;
    caster.mana = mana_left;
    caster.tornado_used = true;
    target.thaums = outcome.target;
    store(state, actor, caster);
    store(state, &target_id, target);
    Ok(vec![ThaumEvent::Tornado {
        caster: actor.clone(),
        target: target_id,
        mana_spent: mana,
        mana_left,
        seed,
        rolls: outcome.rolls,
        caster_after: outcome.caster,
        target_after: outcome.target,
    }])
}

/// `!status`: the actor's sheet, a named player's, or the whole table (for `table`/`all`,
/// or when the actor is not a player and names nobody).
fn status(
    state: &ThaumState,
    options: &ThaumOptions,
    actor: &PlayerId,
    named_player: Option<&PlayerId>,
) -> Result<Vec<ThaumEvent>> {
    let whose = match named_player {
        None => state.players.contains_key(actor).then(|| actor.clone()),
        Some(typed) => match state.resolve_player(typed.as_str()) {
            Some(id) => Some(id.clone()),
            None if ["table", "all", "全桌"].iter().any(|w| typed.as_str().eq_ignore_ascii_case(w)) => None,
            None => return Err(unknown_player(state, typed.as_str(), Verb::Status)),
        },
    };
    let event = match whose {
        Some(player) => ThaumEvent::Sheet {
            sheet: state.players.get(&player).copied().unwrap_or_default(),
            player,
            season: state.season,
            phase: state.phase,
            instability: state.loop_instability,
        },
        None => ThaumEvent::Summary {
            season: state.season,
            phase: state.phase,
            instability: state.loop_instability,
            game_masters: state.game_masters.clone(),
            players: state.players.iter().map(|(p, s)| (p.clone(), *s)).collect(),
            next_phase: if state.finished {
                None
            } else {
                options.schedule.next_boundary_after(state.phase_started_at)
            },
            finished: state.finished,
        },
    };
    Ok(vec![event])
}

/// `!instability n|+n|-n` (RULES T-3): saturating at 0, capped at [`MAX_AMOUNT`]. Checked
/// only at the phase's end.
fn adjust_instability(state: &mut ThaumState, by: &PlayerId, change: Adjustment) -> ThaumEvent {
    let before = state.loop_instability;
    let after = match change {
        Adjustment::Set(n) => n,
        Adjustment::Add(n) => before.saturating_add(n),
        Adjustment::Take(n) => before.saturating_sub(n),
    };
    state.loop_instability = after.min(MAX_AMOUNT.max(before));
    ThaumEvent::InstabilityAdjusted { by: by.clone(), change, before, after: state.loop_instability }
}

fn adjust_coins(
    state: &mut ThaumState,
    options: &ThaumOptions,
    by: &PlayerId,
    typed: &PlayerId,
    change: Adjustment,
) -> Result<Vec<ThaumEvent>> {
    let (player, mut sheet) = named(state, typed, Verb::Coins)?;
    let coin_change = match change {
        Adjustment::Set(n) => sheet.set_coins(u64::from(n)),
        Adjustment::Add(n) => sheet.change_coins(i128::from(n), options.coin_debt),
        Adjustment::Take(n) => sheet.change_coins(-i128::from(n), options.coin_debt),
    };
    store(state, &player, sheet);
    Ok(vec![ThaumEvent::CoinsAdjusted { by: by.clone(), player, change: coin_change }])
}

/// `!gm add`: a player at the table becomes a game master (last in the list).
fn add_game_master(state: &mut ThaumState, by: &PlayerId, typed: &PlayerId) -> Result<Vec<ThaumEvent>> {
    let Some(player) = state.resolve_player(typed.as_str()).cloned() else {
        let suggestion = nearest_player(state, typed.as_str());
        return Err(ThaumError::NotSeated { typed: typed.to_string(), suggestion });
    };
    if state.is_game_master(&player) {
        return Err(ThaumError::AlreadyGameMaster { player, game_masters: state.game_masters.clone() });
    }
    state.game_masters.push(player.clone());
    Ok(vec![ThaumEvent::GameMasterAdded { by: by.clone(), player, game_masters: state.game_masters.clone() }])
}

/// `!gm remove`: a game master is one no longer; the last one stays.
fn remove_game_master(state: &mut ThaumState, by: &PlayerId, typed: &PlayerId) -> Result<Vec<ThaumEvent>> {
    // Named like any player; a game master who is not (or no longer) a player, by exact id.
    let named = state
        .resolve_player(typed.as_str())
        .filter(|id| state.is_game_master(id))
        .or_else(|| state.game_masters.iter().find(|gm| *gm == typed))
        .cloned();
    let Some(player) = named else {
        return Err(ThaumError::NotAmongGameMasters {
            typed: typed.to_string(),
            game_masters: state.game_masters.clone(),
        });
    };
    if state.game_masters.len() <= 1 {
        return Err(ThaumError::LastGameMaster { player });
    }
    state.game_masters.retain(|gm| *gm != player);
    Ok(vec![ThaumEvent::GameMasterRemoved {
        by: by.clone(),
        player,
        game_masters: state.game_masters.clone(),
    }])
}

/// `!stop`: the table takes no more commands; the standings are archived and announced.
fn stop(state: &mut ThaumState, by: &PlayerId) -> ThaumEvent {
    state.finished = true;
    let standings = state.standings();
    state.seasons.push(SeasonRecord {
        season: state.season,
        standings: standings.clone(),
        ended: SeasonEnd::Stopped,
    });
    ThaumEvent::Stopped { by: by.clone(), season: state.season, standings }
}
