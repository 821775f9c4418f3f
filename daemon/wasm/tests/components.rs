//! The host against real components: Nim built from games/nim-wasm/ with the registry
//! toolchain (tests/scripts/install-wasm-games.sh), played move for move against the
//! built-in Nim; the same sources built hostile (an endless loop, a memory bomb, a huge
//! answer, a trap, a state that does not parse), each contained; built slow, a call cut
//! off by the epoch deadline replayed the same on any machine, a move's and a timer's;
//! built to use a language
//! runtime's WASI (wasi-libc through the preview-1 adapter, and WASI's sockets directly),
//! each given nothing; and components in the text format that import what a game may not
//! have, or do not match the world.

use std::path::PathBuf;
use std::process::Command as Process;
use std::sync::OnceLock;

use spellbridge_core::dice::Dice;
use spellbridge_core::games::nim::NimPlugin;
use spellbridge_core::grammar::parse;
use spellbridge_core::plugin::{Action, GamePlugin, Refusal, Role, Seat, Table, TableSetup};
use spellbridge_core::{EventRecord, Language, PlayerId, RoomId, Timestamp};
use spellbridge_wasm::{Limits, LoadError, Loader, WasmGame};

/// Builds games/nim-wasm once per run: the plain game and each hostile kind.
fn built() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("wasm-games");
        let script = root.join("games/nim-wasm/build.sh");
        let hostile = root.join("games/nim-wasm/hostile");
        let compat = |world: &str| format!("-DWORLD={world} -include {}", hostile.join("world_compat.h").display());
        let kinds = [
            ("nim", String::new(), None),
            ("loop", "-DHOSTILE_LOOP".to_owned(), None),
            ("memory", "-DHOSTILE_MEMORY".to_owned(), None),
            ("huge", "-DHOSTILE_HUGE".to_owned(), None),
            ("trap", "-DHOSTILE_TRAP".to_owned(), None),
            ("slow", "-DHOSTILE_SLOW".to_owned(), None),
            ("slow-timer", "-DSLOW_TIMER".to_owned(), None),
            ("bad-state", "-DHOSTILE_BAD_STATE".to_owned(), None),
            ("echo", "-DECHO_SEED".to_owned(), None),
            ("wasi", "-DHOSTILE_WASI".to_owned(), None),
            ("clock", format!("-DHOSTILE_CLOCK {}", compat("clock_game")), Some((hostile.join("wit"), "clock-game"))),
            ("net", format!("-DHOSTILE_NET {}", compat("net_game")), Some((hostile.join("net-wit"), "net-game"))),
        ];
        for (name, flags, world) in kinds {
            let mut build = Process::new("bash");
            build.arg(&script).arg(&out).env("NIM_OUT_NAME", name).env("NIM_CFLAGS", flags);
            if let Some((wit, world)) = world {
                build.env("NIM_WIT", wit).env("NIM_WORLD", world);
            }
            let status = build.status().expect("bash runs");
            assert!(
                status.success(),
                "games/nim-wasm/build.sh failed for {name}: install the toolchain with tests/scripts/install-wasm-games.sh"
            );
        }
        out
    })
}

fn loader() -> Loader {
    Loader::new(None, Limits::default()).expect("an engine")
}

fn load(loader: &Loader, name: &str) -> WasmGame {
    loader
        .load_file(&built().join(format!("{name}.wasm")))
        .unwrap_or_else(|e| panic!("{name}.wasm loads: {e}"))
}

fn player(name: &str) -> PlayerId {
    PlayerId::new(format!("{name}@irc"))
}

fn open(game: &dyn GamePlugin, opener: &str) -> Box<dyn Table> {
    let setup = TableSetup {
        room: RoomId::new("#nim@irc"),
        seats: vec![Seat { player: player(opener), choice: None }],
        now: Timestamp(1_700_000_000),
    };
    game.open(&setup).unwrap_or_else(|e| panic!("opens: {e}"))
}

/// Plays `typed` (without the prefix) as `who`; `Ok(())` or the refusal's English text.
fn play(
    game: &dyn GamePlugin,
    table: &mut dyn Table,
    who: &str,
    typed: &str,
    role: Role,
) -> Result<(), String> {
    let words: Vec<&str> = typed.split_whitespace().collect();
    let command = game.commands().iter().find(|c| c.is_called(words[0])).expect("a command of the game");
    let parsed = parse(command, &words).map_err(|e| format!("parse: {e:?}"))?;
    let actor = player(who);
    let action = Action {
        actor: &actor,
        command: &parsed,
        typed,
        private: false,
        now: Timestamp(1_700_000_100),
        role,
    };
    let mut dice = Dice::from_seed(7);
    table.act(&action, &mut dice).map(|_| ()).map_err(|refusal| match refusal {
        Refusal::UnknownCommand(word) => format!("unknown {word}"),
        other => other.text(Language::En).map(|t| t.plain()).unwrap_or_default(),
    })
}

/// tests/scenarios/nim_complete.txt's moves (its lobby commands and the take of a pile
/// `d`, which the grammar refuses before any table, left out).
const GAME: &[(&str, &str)] = &[
    ("alice", "take 1 a"),
    ("bob", "join"),
    ("carol", "join"),
    ("bob", "take 1 a"),
    ("alice", "take 4 a"),
    ("alice", "status"),
    ("alice", "take 3 a"),
    ("bob", "take 1 a"),
    ("bob", "take 3 c"),
    ("alice", "take 3 c"),
    ("bob", "take 1 c"),
    ("alice", "take 2 b"),
    ("bob", "status"),
    ("bob", "take 3 b"),
    ("alice", "take 1 b"),
];

#[test]
fn nim_as_a_component_plays_the_scenario_as_the_built_in_nim_does() {
    let loader = loader();
    let wasm = load(&loader, "nim");
    assert_eq!(wasm.name(), "nim-wasm");
    let mut component = open(&wasm, "alice");
    let mut built_in = open(&NimPlugin, "alice");
    for (who, typed) in GAME {
        let a = play(&wasm, component.as_mut(), who, typed, Role::Player);
        let b = play(&NimPlugin, built_in.as_mut(), who, typed, Role::Player);
        assert_eq!(a.is_ok(), b.is_ok(), "{who}: !{typed}: component {a:?}, built in {b:?}");
        if let (Err(a), Err(b)) = (&a, &b) {
            assert_eq!(
                a.replace(['\u{2068}', '\u{2069}'], ""),
                b.replace(['\u{2068}', '\u{2069}'], ""),
                "{who}: !{typed}"
            );
        }
    }
    assert!(component.is_finished() && built_in.is_finished());
    let (a, b) = (component.ending().expect("an ending"), built_in.ending().expect("an ending"));
    assert_eq!(a.winners(), b.winners());
    assert_eq!(a.winners(), vec![&player("bob")]);
    assert_eq!(component.players(), built_in.players());
    // A snapshot restores to the same table; the public view shows the empty piles.
    let restored = wasm.restore(&component.snapshot()).expect("restores");
    assert!(restored.is_finished());
    let view = wasm.public_view(&component.snapshot()).expect("a public view");
    assert_eq!(view["piles"], serde_json::json!([0, 0, 0]));
}

#[test]
fn the_component_words_its_news_in_both_languages() {
    let loader = loader();
    let wasm = load(&loader, "nim");
    let table = open(&wasm, "alice");
    let opening = table.opening();
    let en = wasm.render(&opening, &spellbridge_core::Presentation::default());
    let zh = wasm.render(&opening, &spellbridge_core::Presentation::default().in_language(Language::ZhCn));
    assert!(en[0].text.plain().contains("opens a game of Nim"), "{en:?}");
    assert!(
        !zh[0].text.plain().contains("opens a game of Nim") && zh[0].text.plain().contains("alice@irc"),
        "{zh:?}"
    );
    assert_eq!(
        wasm.help_in("take", Language::En).as_deref().map(|h| h.starts_with("On your turn")),
        Some(true)
    );
}

#[test]
fn a_name_that_reverses_text_is_shown_escaped() {
    let loader = loader();
    let wasm = load(&loader, "nim");
    let table = open(&wasm, "ev\u{202e}il");
    let said = wasm.render(&table.opening(), &spellbridge_core::Presentation::default());
    let text = said[0].text.plain();
    assert!(!text.contains('\u{202e}') && text.contains("\\u{202e}"), "{text:?}");
}

/// What `who`'s `typed` tells, in English: each announcement's plain text with its
/// audience (`None`: the table), or the refusal's text.
fn told_to(
    game: &dyn GamePlugin,
    table: &mut dyn Table,
    who: &str,
    typed: &str,
    private: bool,
) -> Result<Vec<(Option<PlayerId>, String)>, String> {
    let words: Vec<&str> = typed.split_whitespace().collect();
    let command = game.commands().iter().find(|c| c.is_called(words[0])).expect("a command of the game");
    let parsed = parse(command, &words).map_err(|e| format!("parse: {e:?}"))?;
    let actor = player(who);
    let now = Timestamp(1_700_000_100);
    let action = Action { actor: &actor, command: &parsed, typed, private, now, role: Role::Player };
    let events = table.act(&action, &mut Dice::from_seed(7)).map_err(|refusal| {
        refusal
            .text(Language::En)
            .map(|t| t.plain())
            .unwrap_or_default()
            .replace(['\u{2068}', '\u{2069}'], "")
    })?;
    Ok(game
        .render(&events, &spellbridge_core::Presentation::default())
        .into_iter()
        .map(|said| {
            let to = match said.to {
                spellbridge_core::plugin::Audience::Table => None,
                spellbridge_core::plugin::Audience::Player(player) => Some(player),
            };
            (to, said.text.plain().replace(['\u{2068}', '\u{2069}'], ""))
        })
        .collect())
}

/// The table's state bytes (base64), without the host's pause.
fn state_of(table: &dyn Table) -> serde_json::Value {
    table.snapshot()["state"].clone()
}

/// A hostile build: `take` misbehaves; the move is not played and the table is told
/// `expected`, the table keeps its state and is paused until a game master's `resume`
/// (also once restored from its snapshot, as after a restart), and a Nim table of the
/// plain build goes on.
fn contained(kind: &str, expected: &str) {
    let loader = loader();
    let hostile = load(&loader, kind);
    let honest = load(&loader, "nim");
    let mut table = open(&hostile, "alice");
    play(&hostile, table.as_mut(), "bob", "join", Role::Player).expect("bob joins");
    let before = state_of(table.as_ref());
    let told = told_to(&hostile, table.as_mut(), "alice", "take 1 a", false).expect("a pause, journaled");
    let [(None, failed)] = &told[..] else { panic!("{kind}: the table is told the game failed: {told:?}") };
    assert!(failed.contains(expected), "{kind}: {failed}");
    assert!(failed.contains("Nothing changed") && failed.contains("paused"), "{kind}: {failed}");
    assert_eq!(state_of(table.as_ref()), before, "{kind}: the state is unchanged");
    // Paused for its game master: a player's move is refused until a `resume`, also at
    // the table restored from its snapshot (a restart).
    let paused = play(&hostile, table.as_mut(), "alice", "status", Role::Player).expect_err("paused");
    assert!(paused.contains("is paused") && paused.contains(expected), "{kind}: {paused}");
    let mut table = hostile.restore(&table.snapshot()).expect("restores");
    let paused = play(&hostile, table.as_mut(), "alice", "status", Role::Player).expect_err("still paused");
    assert!(paused.contains("is paused") && paused.contains(expected), "{kind}: {paused}");
    let refused = play(&hostile, table.as_mut(), "bob", "resume", Role::Player).expect_err("not a player's");
    assert!(refused.contains("Only a game master"), "{kind}: {refused}");
    play(&hostile, table.as_mut(), "gm", "resume", Role::GameMaster).expect("a game master resumes it");
    play(&hostile, table.as_mut(), "alice", "status", Role::Player).expect("the same table answers again");
    assert!(table.snapshot().get("paused").is_none(), "{kind}: resumed: {}", table.snapshot());
    let mut other = open(&honest, "carol");
    play(&honest, other.as_mut(), "dave", "join", Role::Player).expect("dave joins");
    play(&honest, other.as_mut(), "carol", "take 1 a", Role::Player).expect("another table goes on");
}

#[test]
fn a_player_asks_for_their_private_view_and_only_they_are_told() {
    let loader = loader();
    let wasm = load(&loader, "nim");
    let mut table = open(&wasm, "alice");
    let waiting = told_to(&wasm, table.as_mut(), "alice", "view", true).expect("a view");
    assert_eq!(
        waiting,
        vec![(
            Some(player("alice")),
            "Nim: you wait for an opponent to `!join`. Piles: a 3 · b 5 · c 7.".to_owned()
        )]
    );
    play(&wasm, table.as_mut(), "bob", "join", Role::Player).expect("bob joins");
    let before = table.snapshot();
    // Asked in a room too, the view is the asker's alone (the router sends it privately).
    for private in [true, false] {
        let alice = told_to(&wasm, table.as_mut(), "alice", "view", private).expect("a view");
        assert_eq!(
            alice,
            vec![(
                Some(player("alice")),
                "Your turn at Nim: take 1 to 3 stones from one pile, e.g. `!take 3 a`. Piles: a 3 · b 5 · c 7."
                    .to_owned()
            )]
        );
    }
    let bob = told_to(&wasm, table.as_mut(), "bob", "查看", true).expect("a view, by its alias");
    assert_eq!(
        bob,
        vec![(
            Some(player("bob")),
            "Nim: it is alice@irc's turn; yours comes next. Piles: a 3 · b 5 · c 7.".to_owned()
        )]
    );
    let carol = told_to(&wasm, table.as_mut(), "carol", "view", true).expect("a view");
    assert!(
        carol[0].0 == Some(player("carol")) && carol[0].1.starts_with("You are not playing"),
        "{carol:?}"
    );
    assert_eq!(table.snapshot(), before, "a view changes nothing");
    // The view is a question (never journaled); in Chinese, the component's own words.
    let view = wasm.commands().iter().find(|c| c.name == "view").expect("the host's view");
    assert_eq!(view.query, spellbridge_core::grammar::Query::Yes);
    let words = ["view"];
    let parsed = parse(view, &words).expect("parses");
    let actor = player("alice");
    let action = Action {
        actor: &actor,
        command: &parsed,
        typed: "view",
        private: true,
        now: Timestamp(1),
        role: Role::Player,
    };
    let events = table.act(&action, &mut Dice::from_seed(1)).expect("a view");
    let zh = wasm.render(&events, &spellbridge_core::Presentation::default().in_language(Language::ZhCn));
    assert!(zh[0].text.plain().starts_with("轮到你了"), "{zh:?}");
    assert!(wasm.help_in("view", Language::En).is_some_and(|h| h.contains("privately")));
}

#[test]
fn the_options_set_the_piles_and_a_bad_option_refuses_the_open_saying_what_to_write() {
    let loader = loader();
    let wasm = load(&loader, "nim").with_options("piles = [1, 2, 10]\n");
    let table = open(&wasm, "alice");
    let opening = wasm.render(&table.opening(), &spellbridge_core::Presentation::default());
    assert!(opening[0].text.plain().contains("a 1 · b 2 · c 10"), "{opening:?}");
    assert_eq!(wasm.public_view(&table.snapshot()).expect("a view")["piles"], serde_json::json!([1, 2, 10]));
    let setup = TableSetup {
        room: RoomId::new("#nim@irc"),
        seats: vec![Seat { player: player("alice"), choice: None }],
        now: Timestamp(1_700_000_000),
    };
    for (options, said) in [
        (
            "piles = [3, 5]\n",
            "option `piles = [3, 5]` is not three piles of 1 to 10 stones: write `piles = [3, 5, 7]`",
        ),
        ("piles = [0, 5, 7]\n", "is not three piles of 1 to 10 stones"),
        ("piles = [3, 5, 11]\n", "is not three piles of 1 to 10 stones"),
        ("piles = \"many\"\n", "is not three piles"),
        (
            "seats = 3\n",
            "options name `seats`, which it does not know: its one option is `piles = [3, 5, 7]`",
        ),
    ] {
        let refused = match wasm.with_options(options).open(&setup) {
            Ok(_) => panic!("{options:?} opens"),
            Err(refusal) => {
                refusal.text(Language::En).expect("words").plain().replace(['\u{2068}', '\u{2069}'], "")
            }
        };
        assert!(refused.contains(said), "{options:?}: {refused}");
    }
}

#[test]
fn open_gets_the_seed_of_the_dice_it_is_given() {
    let loader = loader();
    let wasm = load(&loader, "echo");
    let setup = TableSetup {
        room: RoomId::new("#nim@irc"),
        seats: vec![Seat { player: player("alice"), choice: None }],
        now: Timestamp(1_700_000_000),
    };
    let key = spellbridge_core::dice::DiceKey::from_bytes([7; 32]);
    let mut dice = Dice::keyed(&key, spellbridge_core::plugin::OPENING_DRAW);
    let seed = dice.seed();
    let seed_told = |table: &dyn Table| {
        let opened = table.opening()[0].record().event;
        let args = opened["args"].as_array().expect("args").clone();
        args.iter().find(|a| a[0] == "seed").map(|a| a[1].as_str().unwrap_or_default().to_owned())
    };
    let table = wasm.open_with_dice(&setup, &mut dice).expect("opens");
    assert_eq!(seed_told(table.as_ref()), Some(seed.to_string()));
    let again = wasm
        .open_with_dice(&setup, &mut Dice::keyed(&key, spellbridge_core::plugin::OPENING_DRAW))
        .expect("opens");
    assert_eq!(again.snapshot(), table.snapshot(), "the same dice, the same opening");
    assert_eq!(
        seed_told(wasm.restore(&table.snapshot()).expect("restores").as_ref()),
        Some(seed.to_string())
    );
}

#[test]
fn an_endless_loop_runs_out_of_fuel() {
    contained("loop", "budget of 50000000 instructions");
}

#[test]
fn a_memory_bomb_hits_the_memory_cap() {
    contained("memory", "more than 16777216 bytes of memory");
}

#[test]
fn a_huge_answer_is_refused() {
    contained("huge", "10000 news (at most 64)");
}

#[test]
fn a_trap_refuses_the_move() {
    contained("trap", "stopped with an error: wasm trap: wasm `unreachable` instruction executed)");
}

#[test]
fn a_state_the_game_cannot_read_back_is_refused() {
    contained("bad-state", "cannot read the state it was given");
}

#[test]
fn an_import_that_is_neither_the_worlds_nor_wasi_is_refused_by_name() {
    let loader = loader();
    for import in [
        "wasi:http/outgoing-handler@0.2.0",
        "wasi:keyvalue/store@0.2.0-draft",
        "wasi:filesystem/types@0.3.0",
        // WASI 0.2, but not given: unstable in wasmtime-wasi.
        "wasi:clocks/timezone@0.2.12",
        "spellbridge:host/secrets@1.0.0",
        "env",
    ] {
        let text = format!("(component (import \"{import}\" (instance (export \"f\" (func)))))");
        match loader.load(text.as_bytes()) {
            Err(error @ LoadError::Import(_)) => {
                let said = error.to_string();
                assert!(
                    said.contains(&format!("`{import}`")) && said.contains("rebuild it without"),
                    "{said}"
                )
            }
            Err(other) => panic!("{import}: refused for another reason: {other}"),
            Ok(_) => panic!("{import}: loaded"),
        }
    }
    // A WASI 0.2 import is given (this one's component then fails for not being a game).
    let error =
        loader.load(b"(component (import \"wasi:filesystem/types@0.2.0\" (instance)))").expect_err("no game");
    assert!(matches!(error, LoadError::World(_)), "{error}");
}

/// The amount `alice`'s `!take 1 a` tells at a table of `game` opened and played at `now`:
/// what the hostile builds put there.
fn told(game: &WasmGame, now: i64) -> String {
    let mut table = open(game, "alice");
    play(game, table.as_mut(), "bob", "join", Role::Player).expect("bob joins");
    let words = ["take", "1", "a"];
    let command = game.commands().iter().find(|c| c.name == "take").expect("take");
    let parsed = parse(command, &words).expect("parses");
    let actor = player("alice");
    let action = Action {
        actor: &actor,
        command: &parsed,
        typed: "take 1 a",
        private: false,
        now: Timestamp(now),
        role: Role::Player,
    };
    let events = table.act(&action, &mut Dice::from_seed(1)).expect("the take is played");
    events[0].record().event["args"][1][1].as_str().expect("the amount is text").to_owned()
}

/// [`told`] (the component loaded first), on a thread of its own, failing the test if the
/// move has not answered in 60 s (a call that waits on the host's real clock would wait
/// an hour).
fn told_soon(kind: &'static str, now: i64) -> String {
    let game = load(&loader(), kind);
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(told(&game, now));
    });
    match receive.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(told) => told,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{kind}: the move did not answer in 60 s (a sleep waited on the real clock?)")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{kind}: the move failed (see above)"),
    }
}

#[test]
fn a_runtime_that_needs_wasi_gets_an_empty_one_and_the_same_answer_at_two_times() {
    let loader = loader();
    let game = load(&loader, "wasi");
    for import in ["wasi:filesystem/preopens@0.2.12", "wasi:cli/environment@0.2.12", "wasi:cli/stdout@0.2.12"]
    {
        assert!(game.imports().iter().any(|i| i == import), "{import} in {:?}", game.imports());
    }
    let first = told_soon("wasi", 1_700_000_000);
    // No file (absolute or relative), no folder, no environment; four MiB written to
    // stdout taken and dropped; an hour's sleep over at once; both clocks at 0.
    assert!(first.starts_with("file=no dir=no env=no out=ok slept=yes wall=0 mono=0 random="), "{first}");
    // The same bytes of random at another time: a replay is the same game.
    assert_eq!(told_soon("wasi", 1_900_000_000), first);
}

#[test]
fn a_wasi_component_plays_on_a_thread_of_the_daemons_async_runtime() {
    // The daemon calls games from its Tokio runtime; wasmtime-wasi's blocking writes and
    // polls start a runtime of their own, which must not happen on the daemon's thread.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let told = runtime.block_on(async {
        let loader = loader();
        told(&load(&loader, "wasi"), 1_700_000_000)
    });
    assert!(told.starts_with("file=no dir=no env=no out=ok slept=yes"), "{told}");
}

#[test]
fn a_component_that_reaches_for_the_network_is_denied() {
    // WASI's error-codes 1, access-denied (no TCP socket is made), and 20,
    // permanent-resolver-failure (no name is looked up).
    assert_eq!(told_soon("net", 1_700_000_000), "tcp=1 lookup=20");
}

#[test]
fn a_component_that_does_not_match_the_world_is_refused() {
    let error = loader().load(b"(component)").expect_err("refused");
    assert!(error.to_string().contains("does not match the world spellbridge:game@1.0.0"), "{error}");
    let error = loader().load(b"not wasm at all").expect_err("refused");
    assert!(error.to_string().contains("not a WebAssembly component"), "{error}");
}

#[test]
fn a_compiled_component_is_cached_by_hash_and_a_damaged_cache_is_compiled_again() {
    let cache = tempfile::tempdir().expect("a folder");
    let loader = Loader::new(Some(cache.path().to_owned()), Limits::default()).expect("an engine");
    let game = load(&loader, "nim");
    let compiled = cache.path().join(format!("{}.cwasm", game.hash()));
    assert!(compiled.exists(), "the compiled component is cached");
    let again = load(&loader, "nim");
    assert_eq!(again.hash(), game.hash());
    std::fs::write(&compiled, b"damaged").expect("writes");
    let third = load(&loader, "nim");
    let mut table = open(&third, "alice");
    play(&third, table.as_mut(), "bob", "join", Role::Player).expect("plays after a damaged cache");
}

#[test]
fn a_game_that_reads_the_clock_reads_the_fixed_one_so_a_replay_is_the_same_game() {
    let loader = loader();
    let game = load(&loader, "clock");
    let seen = [told(&game, 1_700_000_000), told(&game, 1_800_000_000)];
    assert_eq!(seen, ["0", "0"], "the clock reads 1970 every time");
}

#[test]
fn game_check_names_the_imports_and_commands_and_refuses_an_unknown_import() {
    let report = spellbridge_wasm::check::check(&built().join("clock.wasm")).expect("the clock game checks");
    assert!(report.contains("game `nim-wasm`"), "{report}");
    assert!(report.contains("  wasi:clocks/wall-clock@0.2.0 (empty WASI 0.2)\n"), "{report}");
    assert!(report.contains("!take <amount> <a|b|c> (also 取, 拿)"), "{report}");
    assert!(report.contains("opening a table:") && report.ends_with("ok\n"), "{report}");
    let report = spellbridge_wasm::check::check(&built().join("wasi.wasm")).expect("the WASI game checks");
    for import in
        ["wasi:filesystem/preopens@0.2.12", "wasi:cli/environment@0.2.12", "spellbridge:game/types@1.0.0"]
    {
        assert!(report.contains(&format!("  {import} (")), "{import}: {report}");
    }
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("http.wat");
    std::fs::write(&file, "(component (import \"wasi:http/outgoing-handler@0.2.0\" (instance)))")
        .expect("writes");
    let refused = spellbridge_wasm::check::check(&file).expect_err("refused");
    assert!(refused.contains("refused: it imports `wasi:http/outgoing-handler@0.2.0`"), "{refused}");
}

#[test]
fn game_check_plays_the_shipped_transcript_with_the_fuel_each_step_used() {
    let report = spellbridge_wasm::check::check(&built().join("nim.wasm")).expect("nim checks");
    assert!(report.contains("nim.transcript (15 steps):"), "{report}");
    assert!(report.contains("  7. alice !take 3 a -> ok nim-took ("), "{report}");
    assert!(report.contains("  14. bob !take 3 b -> ok nim-took-last nim-won ("), "{report}");
    assert!(report.contains("transcript: every step as expected"), "{report}");
    let usage = report.lines().find(|l| l.starts_with("fuel per call: at most ")).expect("the fuel line");
    assert!(usage.contains("on average") && usage.contains("KiB in one instance"), "{usage}");
    assert!(report.ends_with("ok\n"), "{report}");
}

/// nim.wasm copied into a folder of its own, with `transcript` beside it.
fn with_transcript(transcript: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("nim.wasm");
    std::fs::copy(built().join("nim.wasm"), &file).expect("copies");
    std::fs::write(dir.path().join("nim.transcript"), transcript).expect("writes");
    (dir, file)
}

#[test]
fn game_check_fails_naming_the_transcript_step_that_differs() {
    let shipped = std::fs::read_to_string(built().join("nim.transcript")).expect("the transcript");
    let (_dir, file) =
        with_transcript(&shipped.replace("alice !take 3 a -> ok nim-took", "alice !take 3 a -> refused"));
    let failed = spellbridge_wasm::check::check(&file).expect_err("the step differs");
    assert!(
        failed.contains(
            "problem: transcript: step 7 (line 12) `alice !take 3 a`: expected refused, got ok nim-took"
        ),
        "{failed}"
    );
    let (_dir, file) = with_transcript(&shipped.replace("winners bob", "winners alice"));
    let failed = spellbridge_wasm::check::check(&file).expect_err("the winner differs");
    assert!(failed.contains("ends with `winners alice`, but the game was won by `bob@check`"), "{failed}");
    // A transcript that does not read says which line, and what to write.
    for (text, said) in [
        ("open alice\nbob !join -> maybe\n", "line 2: after `->` write `ok` or `refused`, not `maybe`"),
        ("open alice\nbob join -> ok\n", "line 2: a step is"),
        ("bob !join -> ok\n", "line 1: the first line must be `open PLAYER`"),
        ("", "the transcript is empty"),
    ] {
        let (_dir, file) = with_transcript(text);
        let failed = spellbridge_wasm::check::check(&file).expect_err("does not read");
        assert!(failed.contains(said), "{text:?}: {failed}");
    }
}

/// `who`'s `typed` at `table`, live ([`Table::act`]) or, given what the journal
/// `recorded` for it, as a replay applies it ([`Table::replay_act`]): the events as the
/// journal keeps them, or the refusal's English text.
fn recorded(
    game: &dyn GamePlugin,
    table: &mut dyn Table,
    who: &str,
    typed: &str,
    replayed: Option<&[EventRecord]>,
) -> Result<Vec<EventRecord>, String> {
    let words: Vec<&str> = typed.split_whitespace().collect();
    let command = game.commands().iter().find(|c| c.is_called(words[0])).expect("a command of the game");
    let parsed = parse(command, &words).map_err(|e| format!("parse: {e:?}"))?;
    let actor = player(who);
    let now = Timestamp(1_700_000_100);
    let action = Action { actor: &actor, command: &parsed, typed, private: false, now, role: Role::Player };
    let mut dice = Dice::from_seed(7);
    let events = match replayed {
        None => table.act(&action, &mut dice),
        Some(journal) => table.replay_act(&action, &mut dice, journal),
    };
    let events =
        events.map_err(|refusal| refusal.text(Language::En).map(|t| t.plain()).unwrap_or_default())?;
    Ok(events.iter().map(spellbridge_core::Event::record).collect())
}

/// Issue 33, item 3: a call cut off by the epoch deadline (wall clock, which a replay
/// cannot repeat) is journaled as a pause marked `deadline`. A replay of the journal
/// pauses there again without calling the component, even where the call would now
/// finish; and a move that finished replays as that move even where the live deadline
/// cuts it off (a replay's call has no deadline; fuel still bounds it). The `slow` build
/// counts to 2^30 before each `take`: seconds of wall clock, within this test's fuel.
#[test]
fn a_deadline_pause_replays_as_a_pause_and_a_finished_move_as_that_move() {
    // The same build with time to finish, and with a tenth of a second per call.
    let fuel = 100_000_000_000;
    let roomy = Loader::new(None, Limits { fuel, ticks: 100_000, ..Limits::default() }).expect("an engine");
    let hurried = Loader::new(None, Limits { fuel, ticks: 10, ..Limits::default() }).expect("an engine");
    let (patient, rushed) = (load(&roomy, "slow"), load(&hurried, "slow"));
    let mut table = open(&patient, "alice");
    play(&patient, table.as_mut(), "bob", "join", Role::Player).expect("bob joins");
    let before = table.snapshot();

    // Live: the patient call finishes; the rushed one pauses at its deadline.
    let finished = recorded(&patient, table.as_mut(), "alice", "take 1 a", None).expect("alice takes");
    assert!(finished[0].event.to_string().contains("nim-took"), "{finished:?}");
    let after = table.snapshot();
    let mut rushed_table = rushed.restore(&before).expect("restores");
    let paused = recorded(&rushed, rushed_table.as_mut(), "alice", "take 1 a", None).expect("a pause");
    let [record] = &paused[..] else { panic!("one pause: {paused:?}") };
    assert_eq!(record.event["deadline"], true, "marked as the deadline's: {paused:?}");
    assert_eq!(record.event["paused"], "it ran for longer than 100 ms", "{paused:?}");
    assert_eq!(state_of(rushed_table.as_ref()), before["state"], "nothing played");

    // Replayed where the deadline cuts it off: the move that finished is that move.
    let mut replayed = rushed.restore(&before).expect("restores");
    let told = recorded(&rushed, replayed.as_mut(), "alice", "take 1 a", Some(&finished)).expect("replays");
    assert_eq!(told, finished, "the same events");
    assert_eq!(replayed.snapshot(), after, "the same table");

    // Replayed where the call finishes: the deadline's pause is a pause again, and the
    // component is not called (the patient runner's count of calls that answered).
    let mut replayed = patient.restore(&before).expect("restores");
    let calls = patient.runner().usage().calls;
    let told = recorded(&patient, replayed.as_mut(), "alice", "take 1 a", Some(&paused)).expect("replays");
    assert_eq!(told, paused, "the same pause");
    assert_eq!(patient.runner().usage().calls, calls, "no call");
    assert_eq!(replayed.snapshot(), rushed_table.snapshot(), "paused, its state unchanged");
    let refused = recorded(&patient, replayed.as_mut(), "bob", "status", None).expect_err("paused");
    assert!(refused.contains("is paused"), "{refused}");

    // A pause that is the game's own (a trap, an exhausted fuel budget: the same on every
    // machine) is not taken on trust: replayed, the call is made.
    let mut trapped = paused.clone();
    trapped[0].event = serde_json::json!({"paused": "it stopped with an error: wasm trap"});
    let mut replayed = patient.restore(&before).expect("restores");
    let told = recorded(&patient, replayed.as_mut(), "alice", "take 1 a", Some(&trapped)).expect("replays");
    assert_eq!(told, finished, "the call was made, and played the move");
}

/// Issue 33: a timer is a call as a move is. Cut off by the epoch deadline, it pauses the
/// table marked as the deadline's (and is not fired again); a replay of that pause pauses
/// again without calling, and a timer that finished replays as that timer even where the
/// live deadline cuts it off. The `slow-timer` build has a timer due once two play, which
/// counts to 2^30 and then stops the game.
#[test]
fn a_timer_cut_off_by_the_deadline_replays_as_a_pause_and_a_finished_timer_as_that_timer() {
    let fuel = 100_000_000_000;
    let roomy = Loader::new(None, Limits { fuel, ticks: 100_000, ..Limits::default() }).expect("an engine");
    let hurried = Loader::new(None, Limits { fuel, ticks: 10, ..Limits::default() }).expect("an engine");
    let (patient, rushed) = (load(&roomy, "slow-timer"), load(&hurried, "slow-timer"));
    let mut table = open(&patient, "alice");
    play(&patient, table.as_mut(), "bob", "join", Role::Player).expect("bob joins");
    let at = table.next_timer().expect("a timer is due once two play");
    let before = table.snapshot();
    let fire = |table: &mut dyn Table, replayed: Option<&[EventRecord]>| -> Vec<EventRecord> {
        let mut dice = Dice::from_seed(7);
        let events = match replayed {
            None => table.fire_timer(at, &mut dice),
            Some(journal) => table.replay_fire_timer(at, &mut dice, journal),
        };
        events.iter().map(spellbridge_core::Event::record).collect()
    };

    // Live: the patient timer finishes and stops the game; the rushed one pauses.
    let finished = fire(table.as_mut(), None);
    assert!(finished.iter().any(|r| r.event.to_string().contains("nim-stopped")), "{finished:?}");
    assert!(table.is_finished(), "the timer stopped the game");
    let after = table.snapshot();
    let mut rushed_table = rushed.restore(&before).expect("restores");
    let paused = fire(rushed_table.as_mut(), None);
    let [record] = &paused[..] else { panic!("one pause: {paused:?}") };
    assert_eq!(record.event["deadline"], true, "marked as the deadline's: {paused:?}");
    assert_eq!(record.event["paused"], "it ran for longer than 100 ms", "{paused:?}");
    assert_eq!(state_of(rushed_table.as_ref()), before["state"], "nothing changed");
    assert_eq!(rushed_table.next_timer(), None, "not fired again at every tick");
    let refused = recorded(&rushed, rushed_table.as_mut(), "alice", "take 1 a", None).expect_err("paused");
    assert!(refused.contains("is paused"), "{refused}");
    // Paused, its timer waits for the game master, after a restart too; `!resume` gives it back.
    let mut restarted = rushed.restore(&rushed_table.snapshot()).expect("restores paused");
    assert_eq!(restarted.next_timer(), None, "a restarted paused table fires no timer");
    play(&rushed, restarted.as_mut(), "alice", "resume", Role::GameMaster).expect("resumed");
    assert_eq!(restarted.next_timer(), Some(at), "the timer is due again once resumed");

    // Replayed where the deadline cuts it off: the timer that finished is that timer.
    let mut replayed = rushed.restore(&before).expect("restores");
    assert_eq!(fire(replayed.as_mut(), Some(&finished)), finished, "the same events");
    assert_eq!(replayed.snapshot(), after, "the same table");

    // Replayed where the call finishes: the deadline's pause is a pause again, uncalled.
    let mut replayed = patient.restore(&before).expect("restores");
    let calls = patient.runner().usage().calls;
    assert_eq!(fire(replayed.as_mut(), Some(&paused)), paused, "the same pause");
    assert_eq!(patient.runner().usage().calls, calls, "no call");
    assert_eq!(replayed.snapshot(), rushed_table.snapshot(), "paused, its state unchanged");
}
