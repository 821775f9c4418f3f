//! Every Duel and Thaum event and refusal, rendered in Simplified Chinese, holds no
//! English: no Latin word outside player names, commands (code), ids and numbers
//! (issue 19). Each kind of event and error is made once here; the exhaustive matches
//! below stop compiling when a new kind is added without a sample.

use super::duel::engine::{Finish, FinishReason, SpellRecord};
use super::duel::news::{DuelNews, DuelView, Revealed, RoundView, Settled};
use super::duel::round::Check;
use super::duel::settle::SpellOutcome;
use super::duel::{DuelError, Element, Pool, Preconditioning, Seal, Token, Wizard, render as duel_render};
use super::thaum::command::Verb;
use super::thaum::error::ThaumError;
use super::thaum::events::ThaumEvent;
use super::thaum::render as thaum_render;
use super::thaum::spells::{Side, TornadoRoll};
use super::thaum::state::{CoinChange, PlayerSheet, Standing, Thaum, Thaums};
use crate::event::{Event, Presentation};
use crate::grammar::{self, Problem};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::plugin::Form;
use crate::text::{RichText, Segment, Style};
use crate::time::Timestamp;
use crate::words::Adjustment;

/// Names of players and wizards the samples use: words that may stay Latin.
const NAMES: &[&str] =
    &["alice", "bob", "carol", "Apprentice", "Pyromancer", "Stormcaller", "Geomancer", "UTC"];

/// The Latin words of `text` outside names, code, ids and numbers.
fn latin_words(text: &RichText) -> Vec<String> {
    let mut found = Vec::new();
    for segment in text.segments() {
        let words = match segment {
            Segment::Text { style: Style::Code, .. }
            | Segment::Mention(_)
            | Segment::Name(_)
            | Segment::Bot => continue,
            Segment::Text { text, .. }
            | Segment::Coloured { text, .. }
            | Segment::Separator(text)
            | Segment::Link { text, .. } => text,
        };
        let tokens = words.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':' || c == '_'));
        for token in tokens {
            let has_letter = token.chars().any(|c| c.is_ascii_alphabetic());
            // A token with a digit is a number, a rule id (D-9) or a timestamp.
            let is_id = token.chars().any(|c| c.is_ascii_digit());
            if has_letter && !is_id && !NAMES.contains(&token) {
                found.push(token.to_owned());
            }
        }
    }
    found
}

fn p(name: &str) -> PlayerId {
    PlayerId::new(name)
}

fn view(finish: Option<Finish>) -> DuelView {
    DuelView {
        players: [p("alice"), p("bob")],
        wizards: ["Apprentice".into(), "Pyromancer".into()],
        track: -7,
        pools: [Pool::even(8, 4), Pool::even(0, 0)],
        seals: [Seal { positions: 2, elements: vec![Element::Water, Element::Fire] }, Seal::none()],
        finish,
        step_timeout_secs: 300,
    }
}

fn spell(tokens: Vec<Token>, outcome: SpellOutcome) -> SpellRecord {
    SpellRecord { tokens, checks: Vec::new(), interrupted: true, discarded: None, timeouts: 0, outcome }
}

fn duel_samples() -> Vec<DuelNews> {
    let surge = Token::Preconditioning(Preconditioning::Surge);
    let counter = Token::Preconditioning(Preconditioning::Counter);
    let fire = Token::Element(Element::Fire);
    let void = Token::Element(Element::Void);
    let revealed = |tokens: Vec<Token>, passed: bool| Revealed {
        tokens,
        timed_out: true,
        check: Some(Check { roll: 3, need: 4, passed }),
    };
    let outcome = SpellOutcome {
        removed: vec![0, 1],
        level: 2,
        base: 4,
        boost: 2,
        explosion: 9,
        attribute: vec![Element::Fire, Element::Wind],
        favour: 1,
        power: 16,
        ..SpellOutcome::default()
    };
    let countered = SpellOutcome { countered: true, ..SpellOutcome::default() };
    let settled = Settled {
        number: 3,
        spells: [
            spell(vec![counter, Token::Element(Element::Water), Token::End], outcome.clone()),
            spell(vec![surge, fire, void, Token::End], countered),
        ],
        track_after: 12,
    };
    let won = Finish { winner: Some(0), reason: FinishReason::Track };
    let mut out = vec![
        DuelNews::Opened { view: view(None) },
        DuelNews::Queued { round: 1, spell: vec![surge, fire, Token::End] },
        DuelNews::Queued { round: 1, spell: vec![surge, fire] },
        DuelNews::Step {
            round: 1,
            step: 2,
            players: [p("alice"), p("bob")],
            placements: [revealed(vec![fire], true), revealed(Vec::new(), false)],
        },
        DuelNews::Dropped { interrupted: true, tokens: vec![fire] },
        DuelNews::Dropped { interrupted: false, tokens: Vec::new() },
        DuelNews::Settled { round: Box::new(settled.clone()), view: view(None) },
        DuelNews::RoundStarted {
            round: 4,
            deadline: Timestamp::CONSOLE_EPOCH,
            current: true,
            view: view(None),
        },
        DuelNews::Stopped { by: p("carol"), view: view(None) },
        DuelNews::Status {
            view: view(None),
            round: RoundView {
                number: 2,
                step: 1,
                placed: [vec![surge], Vec::new()],
                complete: [true, false],
                waiting: [false, true],
                deadline: Some(Timestamp::CONSOLE_EPOCH),
            },
        },
        DuelNews::Queue { tokens: vec![fire, Token::End] },
    ];
    for reason in [
        FinishReason::Track,
        FinishReason::PoolEmpty,
        FinishReason::Conceded,
        FinishReason::Abandoned,
        FinishReason::Stopped,
    ] {
        for winner in [Some(0), None] {
            let finish = Finish { winner, reason };
            out.push(DuelNews::Finished { finish, view: view(Some(finish)) });
        }
    }
    out.push(DuelNews::Status {
        view: view(Some(won)),
        round: RoundView {
            number: 2,
            step: 0,
            placed: [Vec::new(), Vec::new()],
            complete: [false, false],
            waiting: [false, false],
            deadline: None,
        },
    });
    out
}

/// Which kind of news this is (exhaustive: a new kind needs a sample).
fn duel_kind(news: &DuelNews) -> usize {
    match news {
        DuelNews::Opened { .. } => 0,
        DuelNews::Queued { .. } => 1,
        DuelNews::Step { .. } => 2,
        DuelNews::Dropped { .. } => 3,
        DuelNews::Settled { .. } => 4,
        DuelNews::RoundStarted { .. } => 5,
        DuelNews::Finished { .. } => 6,
        DuelNews::Stopped { .. } => 7,
        DuelNews::Status { .. } => 8,
        DuelNews::Queue { .. } => 9,
    }
}

fn duel_errors() -> Vec<DuelError> {
    let seal = Seal { positions: 1, elements: vec![Element::Thunder] };
    vec![
        DuelError::UnknownCommand("frob".into()),
        DuelError::PublicCast,
        DuelError::NoTokens,
        DuelError::UnknownToken { word: "fier".into(), suggestion: Some("fire".into()) },
        DuelError::NotAPlayer { actor: p("carol"), players: [p("alice"), p("bob")] },
        DuelError::MayNotStop { actor: p("carol") },
        DuelError::Over { result: String::new() },
        DuelError::MissingPreconditioning { token: Token::Element(Element::Fire) },
        DuelError::SecondPreconditioning { first: Preconditioning::Surge, second: Preconditioning::Focus },
        DuelError::OverspeedNeedsElement,
        DuelError::Conflict { before: Element::Water, element: Element::Fire, position: 1 },
        DuelError::Sealed { element: Element::Thunder, position: 0, seal },
        DuelError::PoolEmpty { element: Element::Void, in_pool: 0, queued: 2 },
        DuelError::AfterEnd { extra: vec![Token::Element(Element::Fire)] },
        DuelError::SpellComplete { interrupted: true },
        DuelError::SpellComplete { interrupted: false },
        DuelError::Seats { count: 3 },
        DuelError::SamePlayer(p("alice")),
        DuelError::UnknownWizard {
            name: "Pyro".into(),
            suggestion: Some("Pyromancer".into()),
            known: vec!["Apprentice".into(), "Pyromancer".into()],
        },
        super::duel::command::parse("concede now").expect_err("refused"),
    ]
}

/// Which kind of error this is (exhaustive).
fn duel_error_kind(error: &DuelError) -> Option<usize> {
    Some(match error {
        DuelError::UnknownCommand(_) => 0,
        DuelError::PublicCast => 1,
        DuelError::NoTokens => 2,
        DuelError::UnknownToken { .. } => 3,
        DuelError::Unread(_) => 18,
        DuelError::NotAPlayer { .. } => 4,
        DuelError::MayNotStop { .. } => 5,
        DuelError::Over { .. } => 6,
        DuelError::MissingPreconditioning { .. } => 7,
        DuelError::SecondPreconditioning { .. } => 8,
        DuelError::OverspeedNeedsElement => 9,
        DuelError::Conflict { .. } => 10,
        DuelError::Sealed { .. } => 11,
        DuelError::PoolEmpty { .. } => 12,
        DuelError::AfterEnd { .. } => 13,
        DuelError::SpellComplete { .. } => 14,
        DuelError::Seats { .. } => 15,
        DuelError::SamePlayer(_) => 16,
        DuelError::UnknownWizard { .. } => 17,
    })
}

fn sheet() -> PlayerSheet {
    PlayerSheet { mana: 3, coins: 10, debt: 2, blood_magic_used: true, ..PlayerSheet::default() }
}

fn coins() -> CoinChange {
    CoinChange { requested: -20, before: 6, after: 0, not_taken: 14 }
}

fn thaum_samples() -> Vec<ThaumEvent> {
    let standings = vec![
        Standing { player: p("bob"), coins: 9, debt: 0 },
        Standing { player: p("alice"), coins: 5, debt: 0 },
        Standing { player: p("carol"), coins: 5, debt: 0 },
    ];
    let roll = |side, k| TornadoRoll { thaum: Thaum::Earth, side, k, air: 2, before: 0, after: 3 };
    vec![
        ThaumEvent::Opened { game_master: p("alice"), next_phase: Some(Timestamp::CONSOLE_EPOCH) },
        ThaumEvent::Joined { player: p("bob"), added_by: None, mana: 1 },
        ThaumEvent::Joined { player: p("bob"), added_by: Some(p("alice")), mana: 1 },
        ThaumEvent::Gathered {
            player: p("bob"),
            thaum: Thaum::Fire,
            mana_spent: 5,
            mana_left: 0,
            before: 8,
            after: 10,
        },
        ThaumEvent::BloodMagic {
            player: p("bob"),
            thaum: Thaum::Air,
            amount: 3,
            before: 2,
            after: -1,
            mana_granted: 3,
            mana_left: 4,
        },
        ThaumEvent::Alchemy {
            player: p("bob"),
            first: (Thaum::Fire, 3),
            second: (Thaum::Air, -4),
            mana_spent: 2,
            mana_left: 0,
            n: -24,
            coins: coins(),
        },
        ThaumEvent::Bending {
            caster: p("bob"),
            defender: p("bob"),
            mana_spent: 1,
            mana_left: 0,
            attack: [1, 2, 3, 4],
            defender_before: Thaums::ZERO,
            defender_after: Thaums::ZERO,
        },
        ThaumEvent::Bending {
            caster: p("bob"),
            defender: p("carol"),
            mana_spent: 1,
            mana_left: 0,
            attack: [1, 2, 3, 4],
            defender_before: Thaums::ZERO,
            defender_after: Thaums::ZERO,
        },
        ThaumEvent::Summoning {
            caster: p("bob"),
            partner: p("carol"),
            mana_spent: 2,
            mana_left: 1,
            n: 7,
            caster_coins: coins(),
            partner_coins: coins(),
        },
        ThaumEvent::Tornado {
            caster: p("bob"),
            target: p("carol"),
            mana_spent: 14,
            mana_left: 0,
            seed: Some(42),
            rolls: (0..14).map(|i| roll(if i % 2 == 0 { Side::Caster } else { Side::Target }, 1)).collect(),
            caster_after: Thaums::ZERO,
            target_after: Thaums::ZERO,
        },
        ThaumEvent::Tornado {
            caster: p("bob"),
            target: p("carol"),
            mana_spent: 0,
            mana_left: 0,
            seed: None,
            rolls: Vec::new(),
            caster_after: Thaums::ZERO,
            target_after: Thaums::ZERO,
        },
        ThaumEvent::PhaseForced { by: p("alice") },
        ThaumEvent::PhaseEnded { season: 1, phase: 9, instability_before: 8, instability_after: 9 },
        ThaumEvent::LoopEnded { season: 1, standings: standings.clone() },
        ThaumEvent::SeasonBegan { season: 2 },
        ThaumEvent::PhaseBegan { season: 2, phase: 1, players: 3, next_phase: None },
        ThaumEvent::InstabilityAdjusted { by: p("alice"), change: Adjustment::Set(3), before: 1, after: 3 },
        ThaumEvent::InstabilityAdjusted { by: p("alice"), change: Adjustment::Add(3), before: 1, after: 4 },
        ThaumEvent::InstabilityAdjusted { by: p("alice"), change: Adjustment::Take(3), before: 1, after: 0 },
        ThaumEvent::InstabilityAdjusted { by: p("alice"), change: Adjustment::Take(1), before: 3, after: 2 },
        ThaumEvent::CoinsAdjusted { by: p("alice"), player: p("bob"), change: coins() },
        ThaumEvent::GameMasterAdded {
            by: p("alice"),
            player: p("bob"),
            game_masters: vec![p("alice"), p("bob")],
        },
        ThaumEvent::GameMasterRemoved { by: p("bob"), player: p("bob"), game_masters: vec![p("alice")] },
        ThaumEvent::GameMasterRemoved { by: p("alice"), player: p("bob"), game_masters: vec![p("alice")] },
        ThaumEvent::GameMasters { game_masters: Vec::new() },
        ThaumEvent::Sheet { player: p("bob"), sheet: sheet(), season: 1, phase: 4, instability: 3 },
        ThaumEvent::Summary {
            season: 1,
            phase: 4,
            instability: 3,
            game_masters: vec![p("alice"), p("bob"), p("carol")],
            players: vec![(p("bob"), sheet()), (p("carol"), sheet())],
            next_phase: Some(Timestamp::CONSOLE_EPOCH),
            finished: false,
        },
        ThaumEvent::Summary {
            season: 1,
            phase: 4,
            instability: 3,
            game_masters: Vec::new(),
            players: Vec::new(),
            next_phase: None,
            finished: true,
        },
        ThaumEvent::Stopped { by: p("alice"), season: 1, standings },
        ThaumEvent::Stopped { by: p("alice"), season: 1, standings: Vec::new() },
    ]
}

/// Which kind of event this is (exhaustive: a new kind needs a sample).
fn thaum_kind(event: &ThaumEvent) -> usize {
    match event {
        ThaumEvent::Opened { .. } => 0,
        ThaumEvent::Joined { .. } => 1,
        ThaumEvent::Gathered { .. } => 2,
        ThaumEvent::BloodMagic { .. } => 3,
        ThaumEvent::Alchemy { .. } => 4,
        ThaumEvent::Bending { .. } => 5,
        ThaumEvent::Summoning { .. } => 6,
        ThaumEvent::Tornado { .. } => 7,
        ThaumEvent::PhaseForced { .. } => 8,
        ThaumEvent::PhaseEnded { .. } => 9,
        ThaumEvent::LoopEnded { .. } => 10,
        ThaumEvent::SeasonBegan { .. } => 11,
        ThaumEvent::PhaseBegan { .. } => 12,
        ThaumEvent::InstabilityAdjusted { .. } => 13,
        ThaumEvent::CoinsAdjusted { .. } => 14,
        ThaumEvent::GameMasterAdded { .. } => 15,
        ThaumEvent::GameMasterRemoved { .. } => 16,
        ThaumEvent::GameMasters { .. } => 17,
        ThaumEvent::Sheet { .. } => 18,
        ThaumEvent::Summary { .. } => 19,
        ThaumEvent::Stopped { .. } => 20,
    }
}

fn thaum_errors() -> Vec<ThaumError> {
    let names = vec![p("alice"), p("bob")];
    vec![
        ThaumError::TableStopped,
        ThaumError::NotAPlayer { player: p("carol") },
        ThaumError::AlreadyJoined { player: p("bob") },
        ThaumError::AlreadyPlaying { player: p("bob") },
        ThaumError::BadName { typed: "b o b".into() },
        ThaumError::UnknownPlayer {
            typed: "bbo".into(),
            suggestion: Some(p("bob")),
            players: names.clone(),
            verb: Verb::Tornado,
        },
        ThaumError::NotGameMaster { player: p("bob"), verb: Verb::Add, game_masters: names.clone() },
        ThaumError::NotSeated { typed: "dave".into(), suggestion: None },
        ThaumError::AlreadyGameMaster { player: p("alice"), game_masters: names.clone() },
        ThaumError::NotAmongGameMasters { typed: "carol".into(), game_masters: names },
        ThaumError::LastGameMaster { player: p("alice") },
        ThaumError::NotEnoughMana { verb: Verb::Tornado, held: 1, wanted: 2, args: "carol".into() },
        ThaumError::BloodMagicUsed,
        ThaumError::TornadoUsed,
        ThaumError::SameThaum { thaum: Thaum::Fire, mana: 2 },
        ThaumError::SelfTarget { verb: Verb::Summon },
        ThaumError::SelfTarget { verb: Verb::Bend },
    ]
}

/// Which kind of error this is (exhaustive).
fn thaum_error_kind(error: &ThaumError) -> usize {
    match error {
        ThaumError::TableStopped => 0,
        ThaumError::NotAPlayer { .. } => 1,
        ThaumError::AlreadyJoined { .. } => 2,
        ThaumError::AlreadyPlaying { .. } => 3,
        ThaumError::BadName { .. } => 4,
        ThaumError::UnknownPlayer { .. } => 5,
        ThaumError::NotGameMaster { .. } => 6,
        ThaumError::NotSeated { .. } => 7,
        ThaumError::AlreadyGameMaster { .. } => 8,
        ThaumError::NotAmongGameMasters { .. } => 9,
        ThaumError::LastGameMaster { .. } => 10,
        ThaumError::NotEnoughMana { .. } => 11,
        ThaumError::BloodMagicUsed => 12,
        ThaumError::TornadoUsed => 13,
        ThaumError::SameThaum { .. } => 14,
        ThaumError::SelfTarget { .. } => 15,
    }
}

/// Fails with every line that has Latin words, and checks every kind was said.
fn check(said: Vec<(String, RichText)>) {
    let bad: Vec<String> = said
        .iter()
        .filter_map(|(what, text)| {
            let words = latin_words(text);
            (!words.is_empty()).then(|| format!("{what}: {words:?} in {}", text.plain()))
        })
        .collect();
    assert!(bad.is_empty(), "English left in zh-CN:\n{}", bad.join("\n"));
}

fn all_seen(seen: &[usize], kinds: usize, what: &str) {
    for kind in 0..kinds {
        assert!(seen.contains(&kind), "no sample of {what} kind {kind}");
    }
}

#[test]
fn every_duel_event_and_refusal_is_chinese() {
    let zh = Language::ZhCn;
    let samples = duel_samples();
    all_seen(&samples.iter().map(duel_kind).collect::<Vec<_>>(), 10, "DuelNews");
    let mut said = Vec::new();
    for form in [Form::Full, Form::Compact] {
        let presentation = Presentation::of(form).in_language(zh);
        for news in &samples {
            let events = [Event::table(news.clone())];
            for announcement in duel_render::events(&events, &presentation) {
                said.push((format!("{news:?}"), announcement.text));
            }
        }
    }
    let errors = duel_errors();
    all_seen(&errors.iter().filter_map(duel_error_kind).collect::<Vec<_>>(), 19, "DuelError");
    for error in &errors {
        said.push((format!("{error:?}"), duel_render::refusal(error).get(zh).clone()));
        said.push((format!("{error:?}"), duel_render::refusal_in(&view(None), error).get(zh).clone()));
    }
    // The shipped wizards (config/wizards.toml) each have a Chinese description.
    let wizards = super::duel::Wizards::from_toml(super::duel::wizard::DEFAULT_WIZARDS_TOML)
        .expect("the shipped wizards");
    said.push(("wizards".into(), duel_render::wizard_list(zh, &wizards)));
    let english = duel_render::wizard_list(Language::En, &wizards).plain();
    assert!(english.contains("Fire-heavy pool"), "{english}");
    // A wizard the config describes only in English is described in English.
    let plain = super::duel::Wizards::new(vec![Wizard::apprentice()]).expect("valid");
    let told = duel_render::wizard_list(zh, &plain).plain();
    assert!(told.contains(&Wizard::apprentice().description), "{told}");
    check(said);
}

#[test]
fn every_thaum_event_and_refusal_is_chinese() {
    let zh = Language::ZhCn;
    let samples = thaum_samples();
    all_seen(&samples.iter().map(thaum_kind).collect::<Vec<_>>(), 21, "ThaumEvent");
    let mut said: Vec<(String, RichText)> =
        samples.iter().map(|e| (format!("{e:?}"), thaum_render::event_in(zh, e))).collect();
    let errors = thaum_errors();
    all_seen(&errors.iter().map(thaum_error_kind).collect::<Vec<_>>(), 16, "ThaumError");
    for error in &errors {
        said.push((format!("{error:?}"), thaum_render::refusal(error, "carol").get(zh).clone()));
    }
    check(said);
}

#[test]
fn the_check_finds_english() {
    let text = RichText::new().text("第 1 回合 wins, D-9 ").code("!cast fire").name(&p("alice"));
    assert_eq!(latin_words(&text), ["wins"]);
}

/// `!help`: each game's catalogue says in English exactly what its commands declare, and
/// in Chinese has no English.
#[test]
fn help_is_the_declarations_in_english_and_chinese_in_zh_cn() {
    let zh = Language::ZhCn;
    for game in crate::plugin::Registry::standard().iter() {
        assert_eq!(game.summary_in(Language::En), game.summary());
        let mut said = vec![(game.name().to_owned(), RichText::from(game.summary_in(zh)))];
        for command in game.commands() {
            let english = game.help_in(command.name, Language::En);
            assert_eq!(english.as_deref(), Some(command.summary), "{} {}", game.name(), command.name);
            let chinese = game.help_in(command.name, zh).unwrap_or_default();
            said.push((format!("{} {}", game.name(), command.name), RichText::from(chinese)));
        }
        check(said);
    }
}

/// Which kind of problem a parse error is (exhaustive: a new kind needs a sample).
fn problem_kind(problem: &Problem) -> usize {
    match problem {
        Problem::Missing { clause: None } => 0,
        Problem::Missing { clause: Some(_) } => 1,
        Problem::Extra(_) => 2,
        Problem::BadNumber { .. } => 3,
        Problem::NotOne { suggestion: None, .. } => 4,
        Problem::NotOne { suggestion: Some(_), .. } => 5,
        Problem::Expected(_) => 6,
    }
}

/// Every command of both games read wrongly in every way the grammar refuses: in Chinese
/// each refusal has no English, names the command by its Chinese name, and shows the
/// usage and example in Chinese; in English it is the declaration's own words.
#[test]
fn every_parse_error_is_chinese() {
    let zh = Language::ZhCn;
    let tries: &[&[&str]] = &[
        &[],
        &["x"],
        &["1"],
        &["-1"],
        &["99999999999"],
        &["1", "fier"],
        &["1", "zzz"],
        &["1", "fire"],
        &["add"],
        &["remove"],
        &["bob", "++1"],
        &["a", "b", "c", "d", "e", "f"],
    ];
    let mut said = Vec::new();
    let mut seen = Vec::new();
    for game in crate::plugin::Registry::standard().iter() {
        assert!(
            grammar::untranslated(game.commands()).is_empty(),
            "{}: {:?}",
            game.name(),
            grammar::untranslated(game.commands())
        );
        for command in game.commands() {
            for words in tries {
                let line: Vec<&str> = std::iter::once(command.name).chain(words.iter().copied()).collect();
                let Err(error) = grammar::parse(command, &line) else { continue };
                seen.push(problem_kind(&error.problem));
                let chinese = error.render_in("!", None, zh);
                assert!(
                    chinese.plain().contains(&format!("!{}", command.name_in(zh))),
                    "{}",
                    chinese.plain()
                );
                said.push((line.join(" "), chinese));
                assert_eq!(error.message_in("!", "bob", Language::En), error.message("!", "bob"));
            }
        }
    }
    all_seen(&seen, 7, "grammar Problem");
    check(said);
}

/// Each phrase the grammar translates is, in the English catalogue, exactly the
/// declarations' English.
#[test]
fn every_phrase_is_the_declarations_in_english() {
    for (english, id) in grammar::PHRASES {
        assert_eq!(crate::locale::text(Language::En, id, &crate::locale::Args::new()), *english, "{id}");
        assert_eq!(grammar::phrase(Language::En, english), *english);
    }
}
