//! The replies the scale bench asks for most, as a table's events: a Duel wizard's private
//! `!status` sheet, a Thaum `!status` and a Thaum `!coins <me> +1`. Shared by the
//! rendering bench (`core/benches/render.rs`) and the IRC line bench
//! (`adapters/benches/irc_lines.rs`), which include this file by path.

use spellbridge_core::games::duel::DuelPlugin;
use spellbridge_core::games::thaum::ThaumPlugin;
use spellbridge_core::grammar::read_for;
use spellbridge_core::{Action, Dice, Event, GamePlugin, PlayerId, Role, Seat, Table, TableSetup, Timestamp};

const T0: Timestamp = Timestamp::CONSOLE_EPOCH;

/// `typed` (with its `!`) by `who` at `table`: the events it makes.
fn act(table: &mut dyn Table, who: &str, typed: &str, private: bool, sequence: u64) -> Vec<Event> {
    let actor = PlayerId::new(who);
    let command = read_for(table, &actor, typed.trim_start_matches('!')).expect("the command reads");
    let action =
        Action { actor: &actor, command: &command, typed, private, now: T0.plus(60), role: Role::Player };
    table.act(&action, &mut Dice::for_action(7, sequence)).expect("the command is accepted")
}

fn seat(player: &str, choice: Option<&str>) -> Seat {
    Seat { player: PlayerId::new(player), choice: choice.map(str::to_owned) }
}

/// A Duel in its second round, a step revealed, alice's own queue waiting: her private
/// `!status`.
pub fn duel_status() -> Vec<Event> {
    let setup = TableSetup {
        room: "#duel".into(),
        seats: vec![seat("alice", Some("pyromancer")), seat("bob", None)],
        now: T0,
    };
    let mut table = DuelPlugin::default().open(&setup).expect("a Duel opens");
    for (i, (who, typed)) in [
        ("alice", "!cast surge fire fire end"),
        ("bob", "!cast counter water end"),
        ("alice", "!cast focus wind water"),
        ("bob", "!cast overspeed thunder"),
    ]
    .into_iter()
    .enumerate()
    {
        act(&mut *table, who, typed, true, i as u64);
    }
    act(&mut *table, "alice", "!status", true, 9)
}

/// A Thaum table of two, alice its game master: bob's `!status` and alice's
/// `!coins alice +1`.
pub fn thaum_events() -> (Vec<Event>, Vec<Event>) {
    let setup = TableSetup { room: "#thaum".into(), seats: vec![seat("alice", None)], now: T0 };
    let mut table = ThaumPlugin::default().open(&setup).expect("a Thaum table opens");
    act(&mut *table, "bob", "!join", false, 1);
    act(&mut *table, "alice", "!coins bob 5", false, 2);
    let status = act(&mut *table, "bob", "!status", false, 3);
    let coins = act(&mut *table, "alice", "!coins alice +1", false, 4);
    (status, coins)
}
