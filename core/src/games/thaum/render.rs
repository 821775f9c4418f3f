//! Thaum events and errors as chat text: short sentences, Thaum names in their colours
//! (Fire red, Water blue, Earth brown, Air green), players as mentions, commands as code
//! written with the table's prefix. One action's events become one message per audience.
//! Events are rendered at delivery ([`crate::GamePlugin::render`]); Thaum says the same
//! to every destination (it has no compact form: an action is one message already).

use crate::event::Event;
use crate::ids::PlayerId;
use crate::plugin::Announcement;
use crate::text::{Hue, RichText};
use crate::time::Timestamp;
use crate::words::Adjustment;

use super::command::Verb;
use super::error::ThaumError;
use super::events::ThaumEvent;
use super::spells::{Side, TornadoRoll};
use super::state::{CoinChange, LOOP_LIMIT, PlayerSheet, STRENGTH, Standing, Thaum, Thaums};

/// At most this many Tornado repetitions are spelled out; the rest are in the history.
const ROLLS_SHOWN: usize = 12;

/// A phase number in Roman numerals (`IX`); past 3999, in digits.
pub fn roman(n: u32) -> String {
    if n == 0 || n > 3999 {
        return n.to_string();
    }
    const PARTS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut rest = n;
    let mut out = String::new();
    for (value, letters) in PARTS {
        while rest >= value {
            out.push_str(letters);
            rest -= value;
        }
    }
    out
}

/// The colour of a Thaum's name.
pub fn hue(thaum: Thaum) -> Hue {
    match thaum {
        Thaum::Fire => Hue::Red,
        Thaum::Water => Hue::Blue,
        Thaum::Earth => Hue::Brown,
        Thaum::Air => Hue::Green,
    }
}

/// Text with `backtick` spans as code; a code span's leading `!` becomes `prefix`.
pub fn marked(text: &str, prefix: &str) -> RichText {
    Writer::new(prefix).say(text).done()
}

/// A refusal from the engine, as a message; a usage example in it names `example_player`
/// (see [`Verb::example_naming`]).
pub fn error(err: &ThaumError, prefix: &str, example_player: &str) -> RichText {
    let text = match err {
        ThaumError::BadName { .. } => Verb::Add.renaming_example(&err.to_string(), example_player),
        _ => err.to_string(),
    };
    marked(&capitalised(&text), prefix)
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One action's events as messages, each to its event's audience (a status answer to
/// whoever asked, the rest to the table); consecutive sentences for the same audience
/// are joined into one message. A text event is said as it is.
pub fn announcements(events: &[Event], prefix: &str) -> Vec<Announcement> {
    let mut out: Vec<Announcement> = Vec::new();
    for told in events {
        let text = match (told.get::<ThaumEvent>(), told.get::<RichText>()) {
            (Some(thaum), _) => self::event(thaum, prefix),
            (None, Some(text)) => text.clone(),
            (None, None) => continue,
        };
        match out.last_mut() {
            Some(last) if last.to == told.to => {
                let joined = std::mem::take(&mut last.text).text(" ").append(text);
                last.text = joined;
            }
            _ => out.push(Announcement::to(told.to.clone(), text)),
        }
    }
    out
}

/// One event as a sentence or two.
pub fn event(event: &ThaumEvent, prefix: &str) -> RichText {
    let w = Writer::new(prefix);
    match event {
        ThaumEvent::Opened { game_master, next_phase } => w
            .who(game_master)
            .say(" opens a Thaum table and is its game master. Season 1, Phase I begins: ")
            .who(game_master)
            .say(" holds 1 Mana; the phase ends ")
            .say(&ends(*next_phase))
            .say(". Type `!join` to play and `!status` to see where you stand.")
            .done(),
        ThaumEvent::Joined { player, added_by: None, mana } => {
            w.who(player).say(&format!(" joins the Thaum table with {mana} Mana.")).done()
        }
        ThaumEvent::Joined { player, added_by: Some(gm), mana } => w
            .who(gm)
            .say(" adds ")
            .who(player)
            .say(&format!(" to the Thaum table, with {mana} Mana."))
            .done(),
        ThaumEvent::Gathered { player, thaum, mana_spent, mana_left, before, after } => {
            let gained = u32::try_from(i32::from(*after) - i32::from(*before)).unwrap_or(0);
            let lost = mana_spent.saturating_sub(gained);
            w.who(player)
                .say(&format!(" gathers {mana_spent} Mana into "))
                .thaum(*thaum)
                .say(": ")
                .change(*thaum, *before, *after)
                .say_if(lost > 0, &format!(" ({lost} Mana lost to the cap of 10)"))
                .say(&format!("; {mana_left} Mana left."))
                .done()
        }
        ThaumEvent::BloodMagic { player, thaum, before, after, mana_granted, mana_left, .. } => w
            .who(player)
            .say(" casts Blood Magic on ")
            .thaum(*thaum)
            .say(": ")
            .change(*thaum, *before, *after)
            .say(&format!(", +{mana_granted} Mana ({mana_left} now)."))
            .done(),
        ThaumEvent::Alchemy { player, first, second, mana_spent, mana_left, n, coins } => w
            .who(player)
            .say(&format!(" casts Alchemy with {mana_spent} Mana on "))
            .thaum(first.0)
            .say(&format!(" {} and ", first.1))
            .thaum(second.0)
            .say(&format!(" {}: N = {mana_spent} × {} × {} = {n}. Coins ", second.1, first.1, second.1))
            .coins(coins)
            .say(". ")
            .thaum(first.0)
            .say(" and ")
            .thaum(second.0)
            .say(&format!(" are now 0; {mana_left} Mana left."))
            .done(),
        ThaumEvent::Bending { caster, defender, mana_spent, mana_left, attack, defender_after, .. } => {
            let w = w.who(caster);
            let w = if defender == caster {
                w.say(" bends their own Thaums")
            } else {
                w.say(" bends ").who(defender)
            };
            let w = w.say(&format!(" with {mana_spent} Mana: attack ")).vector(attack).say(" × ");
            let w = w.say(&format!("{mana_spent}"));
            if defender == caster {
                w.say(&format!("; their Thaums take it, then all become 0; {mana_left} Mana left.")).done()
            } else {
                w.say("; ")
                    .who(defender)
                    .say(" now has ")
                    .thaums(defender_after)
                    .say(". ")
                    .who(caster)
                    .say(&format!("'s Thaums are now 0; {mana_left} Mana left."))
                    .done()
            }
        }
        ThaumEvent::Summoning { caster, partner, mana_spent, mana_left, n, caster_coins, partner_coins } => w
            .who(caster)
            .say(" summons with ")
            .who(partner)
            .say(&format!(" ({mana_spent} Mana): N = {n}. "))
            .who(caster)
            .say(": coins ")
            .coins(caster_coins)
            .say("; ")
            .who(partner)
            .say(": coins ")
            .coins(partner_coins)
            .say(". Both players' Thaums are now 0; ")
            .who(caster)
            .say(&format!(" has {mana_left} Mana left."))
            .done(),
        ThaumEvent::Tornado { caster, target, mana_spent, seed, rolls, caster_after, target_after, .. } => {
            let mut w = w.who(caster).say(" casts Tornado on ").who(target);
            w = w.say(&format!(" with {mana_spent} Mana"));
            w = match seed {
                Some(seed) => w.say(&format!(" (dice seed {seed}): ")),
                None => w.say(": nothing is drawn"),
            };
            for (i, roll) in rolls.iter().take(ROLLS_SHOWN).enumerate() {
                let player = match roll.side {
                    Side::Caster => caster,
                    Side::Target => target,
                };
                w = w.say_if(i > 0, "; ").roll(player, roll);
            }
            if rolls.len() > ROLLS_SHOWN {
                w = w.say(&format!("; … and {} more (all in the history)", rolls.len() - ROLLS_SHOWN));
            }
            w.say(". ")
                .who(caster)
                .say(" now has ")
                .thaums(caster_after)
                .say("; ")
                .who(target)
                .say(" has ")
                .thaums(target_after)
                .say(".")
                .done()
        }
        ThaumEvent::PhaseForced { by } => w.who(by).say(" ends the phase.").done(),
        ThaumEvent::PhaseEnded { season, phase, instability_before, instability_after } => w
            .say(&format!(
                "Phase {} of season {season} ends: Loop Instability {instability_before} → {instability_after}.",
                roman(*phase)
            ))
            .done(),
        ThaumEvent::LoopEnded { season, standings } => w
            .say(&format!(
                "Loop Instability is {LOOP_LIMIT} or more, so the loop ends and season {season} closes. Final standings: "
            ))
            .standings(standings)
            .say(".")
            .done(),
        ThaumEvent::SeasonBegan { season } => w
            .say(&format!("Season {season} opens: every player's Mana, Coins and Thaums are back to 0."))
            .done(),
        ThaumEvent::PhaseBegan { phase, next_phase, .. } => w
            .say(&format!("Phase {} begins: every player gains 1 Mana; it ends {}.", roman(*phase), ends(*next_phase)))
            .done(),
        ThaumEvent::InstabilityAdjusted { by, change, before, after } => {
            let what = match change {
                Adjustment::Set(_) => format!(" sets Loop Instability {before} → {after}"),
                Adjustment::Add(_) => format!(" raises Loop Instability from {before} to {after}"),
                Adjustment::Take(n) if *n > *before => {
                    format!(" lowers Loop Instability from {before} to {after}, as it stops at 0")
                }
                Adjustment::Take(_) => format!(" lowers Loop Instability from {before} to {after}"),
            };
            w.who(by)
                .say(&what)
                .say(&format!(" (at a phase's end, {LOOP_LIMIT} or more ends the loop)."))
                .done()
        }
        ThaumEvent::CoinsAdjusted { by, player, change } => {
            w.who(by).say(" changes ").who(player).say("'s coins: ").coins(change).say(".").done()
        }
        ThaumEvent::GameMasterAdded { by, player, game_masters } => w
            .who(by)
            .say(" makes ")
            .who(player)
            .say(" a game master of this table; the game masters are now ")
            .players(game_masters)
            .say(".")
            .done(),
        ThaumEvent::GameMasterRemoved { by, player, game_masters } => {
            let w = if by == player {
                w.who(by).say(" steps down as a game master")
            } else {
                w.who(by).say(" removes ").who(player).say(" as a game master")
            };
            w.say(" of this table; the game masters are now ").players(game_masters).say(".").done()
        }
        ThaumEvent::GameMasters { game_masters } => w
            .say("The game masters here are ")
            .players(game_masters)
            .say(". A game master adds one with `!gm add <player>` and removes one with `!gm remove <player>`.")
            .done(),
        ThaumEvent::Sheet { player, sheet, season, phase, instability } => w
            .who(player)
            .say("'s sheet")
            .sheet(sheet)
            .say(&format!(" (Season {season}, Phase {}, Loop Instability {instability}.)", roman(*phase)))
            .done(),
        ThaumEvent::Summary { season, phase, instability, game_masters, players, next_phase, finished } => {
            let mut w = w.say(&format!(
                "Thaum season {season}, Phase {}, Loop Instability {instability} (at a phase's end, {LOOP_LIMIT} or more ends the loop). ",
                roman(*phase)
            ));
            w = w.say(&format!("Game master: {}. Players: ", super::error::list(game_masters)));
            for (i, (player, sheet)) in players.iter().enumerate() {
                w = w
                    .say_if(i > 0, ", ")
                    .who(player)
                    .say(&format!(" (Mana {}, Coins {})", sheet.mana, sheet.balance()));
            }
            w = if *finished {
                w.say(". The table is stopped. ")
            } else {
                w.say(&format!(". This phase ends {}. ", ends(*next_phase)))
            };
            w.strength().done()
        }
        ThaumEvent::Stopped { by, season, standings } => w
            .who(by)
            .say(&format!(" stops the Thaum table. Final standings of season {season}: "))
            .standings(standings)
            .say(". The room is free for a new table (`!new thaum`).")
            .done(),
    }
}

/// "at Wednesday 2026-01-07 00:00 UTC" or "when a game master types `!phase next`".
fn ends(next_phase: Option<Timestamp>) -> String {
    match next_phase {
        Some(t) => {
            const DAYS: [&str; 7] =
                ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
            let iso = t.to_string();
            let day = DAYS.get(usize::try_from(t.weekday()).unwrap_or(0)).copied().unwrap_or("");
            let date = iso.get(..10).unwrap_or(&iso);
            let time = iso.get(11..16).unwrap_or("");
            format!("at {day} {date} {time} UTC")
        }
        None => "when a game master types `!phase next`".to_owned(),
    }
}

/// Builds one message.
struct Writer<'p> {
    text: RichText,
    prefix: &'p str,
}

impl<'p> Writer<'p> {
    fn new(prefix: &'p str) -> Self {
        Writer { text: RichText::new(), prefix }
    }

    fn done(self) -> RichText {
        self.text
    }

    /// Plain text with `code` spans.
    fn say(mut self, text: &str) -> Self {
        for (i, part) in text.split('`').enumerate() {
            self.text = if i % 2 == 1 {
                match part.strip_prefix('!') {
                    Some(rest) => self.text.code(format!("{}{rest}", self.prefix)),
                    None => self.text.code(part),
                }
            } else {
                self.text.text(part)
            };
        }
        self
    }

    fn say_if(self, condition: bool, text: &str) -> Self {
        if condition { self.say(text) } else { self }
    }

    fn who(mut self, player: &PlayerId) -> Self {
        self.text = self.text.mention(player);
        self
    }

    /// "alice, bob and carol", each a mention.
    fn players(mut self, players: &[PlayerId]) -> Self {
        if players.is_empty() {
            return self.say("nobody");
        }
        for (i, player) in players.iter().enumerate() {
            let joiner = if i + 1 == players.len() { " and " } else { ", " };
            self = self.say_if(i > 0, joiner).who(player);
        }
        self
    }

    fn thaum(mut self, thaum: Thaum) -> Self {
        self.text = self.text.coloured(thaum.name(), hue(thaum));
        self
    }

    fn change(self, thaum: Thaum, before: i8, after: i8) -> Self {
        self.thaum(thaum).say(&format!(" {before} → {after}"))
    }

    /// "Fire 1, Water 0, Earth -2, Air 3".
    fn thaums(self, thaums: &Thaums) -> Self {
        self.vector(&thaums.values().map(i64::from))
    }

    fn vector(mut self, values: &[i64; 4]) -> Self {
        for thaum in Thaum::ALL {
            self = self
                .say_if(thaum != Thaum::Fire, ", ")
                .thaum(thaum)
                .say(&format!(" {}", values[thaum.index()]));
        }
        self
    }

    /// "30 → 6 (14 could not be taken: coins stop at 0, T-9)".
    fn coins(self, change: &CoinChange) -> Self {
        let w = self.say(&format!("{} → {}", change.before, change.after));
        w.say_if(
            change.not_taken > 0,
            &format!(" ({} could not be taken: coins stop at 0, T-9)", change.not_taken),
        )
    }

    /// "bob's Earth +3 (0 → 3)": the move is K × Air, `±0` when Air is 0.
    fn roll(self, player: &PlayerId, roll: &TornadoRoll) -> Self {
        let step = i16::from(roll.k) * i16::from(roll.air);
        let step = if step == 0 { "±0".to_owned() } else { format!("{step:+}") };
        self.who(player)
            .say("'s ")
            .thaum(roll.thaum)
            .say(&format!(" {step} ({} → {})", roll.before, roll.after))
    }

    /// ": Mana 3, Coins 10; Fire 2, …; Blood Magic used this phase, Tornado ready."
    fn sheet(self, sheet: &PlayerSheet) -> Self {
        let used = |u: bool| if u { "used this phase" } else { "ready" };
        self.say(&format!(": Mana {}, Coins {}; ", sheet.mana, sheet.balance())).thaums(&sheet.thaums).say(
            &format!("; Blood Magic {}, Tornado {}.", used(sheet.blood_magic_used), used(sheet.tornado_used)),
        )
    }

    /// "1. bob 9 coins, 2. alice 5 coins, 2. carol 5 coins" (ties share a place).
    fn standings(mut self, standings: &[Standing]) -> Self {
        if standings.is_empty() {
            return self.say("no players");
        }
        let mut place = 0;
        for (i, standing) in standings.iter().enumerate() {
            let tied =
                i > 0 && standings[i - 1].coins == standing.coins && standings[i - 1].debt == standing.debt;
            if !tied {
                place = i + 1;
            }
            let net = i128::from(standing.coins) - i128::from(standing.debt);
            self = self
                .say_if(i > 0, ", ")
                .say(&format!("{place}. "))
                .who(&standing.player)
                .say(&format!(" {net} coins"));
        }
        self
    }

    /// The strength matrix and what defeats what (RULES: shown in help/status).
    fn strength(mut self) -> Self {
        self = self.say("Strength, attacking row against defending Fire, Water, Earth, Air: ");
        for attacker in Thaum::ALL {
            let row = STRENGTH[attacker.index()].map(|v| v.to_string()).join(" ");
            self = self.say_if(attacker != Thaum::Fire, ", ").thaum(attacker).say(&format!(" [{row}]"));
        }
        self = self.say(". ");
        for attacker in Thaum::ALL {
            self = self
                .say_if(attacker != Thaum::Fire, ", ")
                .thaum(attacker)
                .say(" defeats ")
                .thaum(attacker.defeats());
        }
        self.say(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_roman() {
        let shown: Vec<String> = [1, 4, 9, 10, 14, 40, 1994].into_iter().map(roman).collect();
        assert_eq!(shown, ["I", "IV", "IX", "X", "XIV", "XL", "MCMXCIV"]);
        assert_eq!(roman(0), "0");
        assert_eq!(roman(4000), "4000");
    }

    #[test]
    fn code_spans_take_the_tables_prefix() {
        let text = marked("type `!join` first", ".");
        assert_eq!(text.plain(), "type `.join` first");
        assert_eq!(
            text.segments()[1],
            crate::text::Segment::Text { text: ".join".into(), style: crate::text::Style::Code }
        );
    }

    #[test]
    fn thaum_names_are_coloured() {
        let text = Writer::new("!").thaum(Thaum::Earth).done();
        assert!(matches!(&text.segments()[0], crate::text::Segment::Coloured { hue: Hue::Brown, .. }));
    }

    #[test]
    fn phase_ends_are_given_as_weekday_and_time() {
        assert_eq!(ends(Some(Timestamp::CONSOLE_EPOCH)), "at Sunday 2026-01-04 00:00 UTC");
    }
}
