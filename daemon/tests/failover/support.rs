//! What the failover tests share: a real PostgreSQL, InspIRCd and Synapse started side by
//! side; two daemons with the same config on that database ([`Pair`]), the bot in two
//! bridges (`#magic` ↔ a Matrix room, the Thaum table; `#arena` ↔ another, the Duel
//! table); the people on each network with everything they received kept in order; and
//! the game played before and after the fault ([`World::before_fault`],
//! [`World::after_takeover`]) with the transcript checks ([`World::check_transcripts`]).

pub(super) use std::time::Duration;

pub(super) use spellbridge_adapters::irc::format::strip;
pub(super) use spellbridge_tests::harness::cut_proxy::CutProxy;
use spellbridge_tests::harness::inspircd::InspIrcd;
pub(super) use spellbridge_tests::harness::pair::{Pair, Role, Servers, beside_postgres, config_head};
pub(super) use spellbridge_tests::harness::postgres::Postgres;
use spellbridge_tests::harness::synapse::Synapse;
pub(super) use tokio::time::Instant;

pub(super) use super::people::STARTUP;
use super::people::{Irc, Mx};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
pub(super) const BOT: &str = "spellbridge";
const MAGIC: &str = "#magic";
const ARENA: &str = "#arena";
/// The lease in the tests' config: short, so a takeover comes within seconds.
pub(super) const LEASE: Duration = Duration::from_secs(2);

/// Where the active daemon's database connection goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum StoreLine {
    /// Both daemons connect to PostgreSQL directly.
    Direct,
    /// Daemon 0 connects through a [`CutProxy`], daemon 1 directly.
    ThroughProxy,
}

pub(super) fn matrix_id(localpart: &str) -> String {
    format!("@{localpart}:localhost")
}

pub(super) fn password(localpart: &str) -> String {
    format!("{localpart}-password")
}

/// The servers, the two daemons and the people.
pub(super) struct World {
    // Dropped in this order: the daemons first, then the servers.
    pub(super) pair: Pair,
    pub(super) proxy: Option<CutProxy>,
    pub(super) pg: Postgres,
    _irc: InspIrcd,
    _synapse: Synapse,
    thaum_room: String,
    duel_room: String,
    alice: Irc,
    bob: Irc,
    ircwatch: Irc,
    watcher: Mx,
    merlin: Mx,
    /// The nick the active daemon's bot answers as on IRC now.
    bot_nick: String,
    /// The coins each of alice and Merlin has been given so far (each `!coins` adds one).
    coins: u32,
    pub(super) started: Instant,
}

/// The config of daemon `which`: the same for both but the http port and, through the
/// proxy, daemon 0's database URL.
fn config(url: &str, http: u16, irc: u16, synapse: &str, thaum_room: &str, duel_room: &str) -> String {
    format!(
        r#"{head}
[thaum]
schedule = "manual"

[permissions]
game_masters = ["matrix/{merlin}"]

[[irc]]
name = "irc"
server = "127.0.0.1"
port = {irc}
tls = false
nick = "{BOT}"
require_account = false
reconnect_delay = "1s"

[irc.flood]
enabled = false

[irc.user_limit]
enabled = false

[[matrix]]
name = "matrix"
homeserver = "{synapse}"
user_id = "{bot}"
access_token = {{ file = "bot-token" }}
store = "matrix-store"
invite_allow = ["*:localhost"]
reconnect_delay = "1s"

[matrix.user_limit]
enabled = false

[[bridge]]
name = "magic"
rooms = [{{ network = "irc", room = "{MAGIC}" }}, {{ network = "matrix", room = "{thaum_room}" }}]
speaker_rate = false

[[bridge]]
name = "arena"
rooms = [{{ network = "irc", room = "{ARENA}" }}, {{ network = "matrix", room = "{duel_room}" }}]
speaker_rate = false
"#,
        head = config_head(url, LEASE, http),
        merlin = matrix_id("mage"),
        bot = matrix_id(BOT),
    )
}

impl World {
    /// Starts the servers, the people and the rooms, daemon 0 (waited for until it leads
    /// and answers on both networks), then daemon 1 (waited for until it is a standby).
    pub(super) async fn start(line: StoreLine) -> World {
        let started = Instant::now();
        let servers = tokio::task::block_in_place(Servers::start);
        let bot_token = servers.bot_token(BOT, &password(BOT));
        let Servers { irc, synapse, pg } = servers;
        let proxy = (line == StoreLine::ThroughProxy)
            .then(|| CutProxy::start(([127, 0, 0, 1], pg.port()).into()).unwrap_or_else(|e| panic!("{e}")));
        let mut watcher = Mx::new(&synapse, "watcher", "Watcher").await;
        let mut merlin = Mx::new(&synapse, "mage", "Merlin").await;
        let invite = [matrix_id(BOT), matrix_id("mage")];
        let thaum_room =
            watcher.client.create_room("magic", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
        let duel_room =
            watcher.client.create_room("arena", &invite, false).await.unwrap_or_else(|e| panic!("{e}"));
        for room in [&thaum_room, &duel_room] {
            merlin.client.accept_invite(room).await.unwrap_or_else(|e| panic!("{e}"));
        }
        let (alice, bob, ircwatch) = tokio::join!(
            Irc::connect(irc.port(), "alice", &[MAGIC, ARENA]),
            Irc::connect(irc.port(), "bob", &[ARENA]),
            Irc::connect(irc.port(), "ircwatch", &[MAGIC, ARENA]),
        );
        let url = pg.url();
        let proxied =
            proxy.as_ref().map(|p| url.replace(&format!(":{}/", pg.port()), &format!(":{}/", p.port())));
        let (irc_port, base_url) = (irc.port(), synapse.base_url());
        let pair = Pair::new(
            BIN,
            &[("bot-token", &bot_token)],
            "info,spellbridge=debug,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_crypto=error",
            |which, http| {
                let url = if which == 0 { proxied.as_deref().unwrap_or(&url) } else { &url };
                config(url, http, irc_port, &base_url, &thaum_room, &duel_room)
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut world = World {
            pg,
            proxy,
            pair,
            _irc: irc,
            _synapse: synapse,
            thaum_room,
            duel_room,
            alice,
            bob,
            ircwatch,
            watcher,
            merlin,
            bot_nick: BOT.to_owned(),
            coins: 0,
            started,
        };
        world.pair.start(0, Role::Active, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));
        world.bot_nick = world.until_bot_on_irc().await;
        let (thaum_room, duel_room) = (world.thaum_room.clone(), world.duel_room.clone());
        world.watcher.until_bot_in(&thaum_room).await;
        world.watcher.until_bot_in(&duel_room).await;
        world.pair.start(1, Role::Standby, STARTUP).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(world.pair.role(0).await, Role::Active, "daemon 0 still leads once daemon 1 is a standby");
        tokio::join!(world.alice.settle(), world.bob.settle(), world.ircwatch.settle());
        world.watcher.settle().await;
        world.merlin.settle().await;
        eprintln!("set up in {:?}", world.started.elapsed());
        world
    }

    /// alice says `!games` in `#magic` until a bot answers; the nick it answered as.
    async fn until_bot_on_irc(&mut self) -> String {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            self.alice.say(MAGIC, "!games").await;
            let until = Instant::now() + Duration::from_secs(3);
            while let Some(m) =
                self.alice.client.next_message(until.saturating_duration_since(Instant::now())).await
            {
                if m.from.starts_with(BOT) && m.target == MAGIC && strip(&m.text).contains("Games:") {
                    return m.from;
                }
            }
        }
        let roles = (self.pair.role(0).await, self.pair.role(1).await);
        panic!(
            "no bot answered `!games` in {MAGIC} within {STARTUP:?}; the daemons say they are {roles:?} \
             (their logs follow)"
        );
    }

    /// One `!coins` each way at the Thaum table, each seen once on both networks.
    async fn coins_each_way(&mut self) {
        let (before, after) = (self.coins, self.coins + 1);
        let room = self.thaum_room.clone();
        self.alice.say(MAGIC, "!coins Merlin +1").await;
        let line = format!("alice changes Merlin's coins: {before} → {after}");
        self.ircwatch.expect(MAGIC, &line).await;
        self.watcher.expect(&room, &line).await;
        self.merlin.say(&room, "!coins alice +1").await;
        let line = format!("Merlin changes alice's coins: {before} → {after}");
        self.ircwatch.expect(MAGIC, &line).await;
        self.watcher.expect(&room, &line).await;
        self.coins = after;
    }

    /// Merlin gives alice a coin from Matrix (while no daemon leads, say); see
    /// [`World::coin_from_matrix_answered`].
    pub(super) async fn coin_from_matrix(&mut self) {
        let room = self.thaum_room.clone();
        self.merlin.say(&room, "!coins alice +1").await;
    }

    /// Merlin's coin of [`World::coin_from_matrix`] was announced on both networks, then
    /// alice gives hers back from IRC (so each has had one more).
    pub(super) async fn coin_from_matrix_answered(&mut self) {
        let (before, after) = (self.coins, self.coins + 1);
        let room = self.thaum_room.clone();
        self.bot_nick = self.until_bot_on_irc().await;
        let line = format!("Merlin changes alice's coins: {before} → {after}");
        self.watcher.expect(&room, &line).await;
        self.ircwatch.expect(MAGIC, &line).await;
        self.alice.say(MAGIC, "!coins Merlin +1").await;
        let line = format!("alice changes Merlin's coins: {before} → {after}");
        self.ircwatch.expect(MAGIC, &line).await;
        self.watcher.expect(&room, &line).await;
        self.coins = after;
    }

    /// Merlin says `!games` in the Duel's Matrix room (no IRC probe says it there) and the
    /// bot answers; then a second passes, for the position after it to be kept.
    pub(super) async fn games_in_the_duel_room(&mut self) {
        let room = self.duel_room.clone();
        self.merlin.say(&room, "!games").await;
        self.watcher.expect(&room, "Games:").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    /// The `!games` of [`World::games_in_the_duel_room`] was answered once on Matrix: the
    /// new leader did not answer it again.
    pub(super) fn games_in_the_duel_room_answered_once(&self) {
        let answers = self.watcher.count(&self.duel_room, "Games:");
        assert_eq!(answers, 1, "Merlin's !games in the Duel's room answered {answers} times, not once");
    }

    /// The Thaum table opened in `#magic` (Merlin joins from Matrix) and a coin each way;
    /// the Duel in `#arena` (alice against bob) in round 1 with alice's spell queued (a
    /// hidden move acknowledged to her alone): the game mid-round.
    pub(super) async fn before_fault(&mut self) {
        let (thaum_room, duel_room) = (self.thaum_room.clone(), self.duel_room.clone());
        self.alice.say(MAGIC, "!new thaum").await;
        self.watcher.expect(&thaum_room, "alice opens a Thaum table").await;
        self.merlin.say(&thaum_room, "!join").await;
        self.ircwatch.expect(MAGIC, "Merlin joins the Thaum table").await;
        self.coins_each_way().await;
        self.alice.say(ARENA, "!duel bob").await;
        self.ircwatch.expect(ARENA, "alice challenges bob").await;
        self.watcher.expect(&duel_room, "alice challenges bob").await;
        self.bob.say(ARENA, "!accept").await;
        self.ircwatch.expect(ARENA, "Round 1 begins").await;
        self.watcher.expect(&duel_room, "Round 1 begins").await;
        let nick = self.bot_nick.clone();
        self.alice.say(&nick, "!cast surge fire wind water thunder end").await;
        self.alice.expect("alice", "Queued").await;
        eprintln!("in play at {:?}", self.started.elapsed());
    }

    /// Once a daemon leads again: the bot's nick on IRC now, a coin each way, bob's spell
    /// (round 1 is revealed with alice's spell queued before the fault) and a read-only
    /// `!status` on each network (a daemon that should be silent would answer it too).
    pub(super) async fn after_takeover(&mut self) {
        self.bot_nick = self.until_bot_on_irc().await;
        self.coins_each_way().await;
        let nick = self.bot_nick.clone();
        self.bob.say(&nick, "!cast focus earth earth earth earth end").await;
        self.bob.expect("bob", "Queued").await;
        let duel_room = self.duel_room.clone();
        self.ircwatch.expect(ARENA, "Round 1, steps 0–5").await;
        let settles = self.ircwatch.expect(ARENA, "Round 1 settles").await;
        assert!(strip(&settles.text).contains("24 toward alice"), "alice's queued spell counted: {settles}");
        self.ircwatch.expect(ARENA, "Round 2 begins").await;
        self.watcher.expect(&duel_room, "Round 1, step 5").await;
        self.alice.say(MAGIC, "!status alice").await;
        self.ircwatch.expect(MAGIC, "alice's sheet").await;
        let thaum_room = self.thaum_room.clone();
        self.merlin.say(&thaum_room, "!status Merlin").await;
        self.watcher.expect(&thaum_room, "Merlin's sheet").await;
        eprintln!("play went on at {:?}", self.started.elapsed());
    }

    /// A coin each way more (after the old daemon came back, say).
    pub(super) async fn more_coins(&mut self) {
        self.coins_each_way().await;
    }

    /// Everything acknowledged was seen exactly once on each network: every coin line,
    /// the Duel's opening, round 1's reveal and settlement, each player's `Queued`, the
    /// sheet; and the game's state says the same (`!status` answered once).
    pub(super) async fn check_transcripts(&mut self) {
        tokio::join!(self.alice.pump(), self.bob.pump(), self.ircwatch.pump());
        self.watcher.pump().await;
        let (thaum_room, duel_room) = (self.thaum_room.clone(), self.duel_room.clone());
        let irc = &self.ircwatch;
        let mx = &self.watcher;
        let mut once: Vec<(&str, String)> = Vec::new();
        for k in 1..=self.coins {
            for giver in ["alice changes Merlin's", "Merlin changes alice's"] {
                once.push((MAGIC, format!("{giver} coins: {} → {k}", k - 1)));
            }
        }
        once.push((MAGIC, "alice opens a Thaum table".to_owned()));
        once.push((MAGIC, "Merlin joins the Thaum table".to_owned()));
        for line in ["alice challenges bob", "Round 1 begins", "Round 1 settles", "Round 2 begins"] {
            once.push((ARENA, line.to_owned()));
        }
        for (channel, line) in &once {
            let room = if *channel == MAGIC { &thaum_room } else { &duel_room };
            assert_eq!(irc.count(channel, line), 1, "{line:?} once on IRC:\n{}", irc.listing(80));
            assert_eq!(mx.count(room, line), 1, "{line:?} once on Matrix");
        }
        assert_eq!(irc.count(ARENA, "Round 1, steps 0–5"), 1, "{}", irc.listing(80));
        assert_eq!(mx.count(&duel_room, "Round 1, step 5"), 1, "the round once on Matrix");
        assert_eq!(irc.count(MAGIC, "alice's sheet"), 1, "{}", irc.listing(80));
        assert_eq!(mx.count(&thaum_room, "Merlin's sheet"), 1, "Merlin's sheet once on Matrix");
        assert_eq!(
            self.alice.count("alice", "Queued"),
            1,
            "alice's spell acknowledged once:\n{}",
            self.alice.listing(40)
        );
        assert_eq!(
            self.bob.count("bob", "Queued"),
            1,
            "bob's spell acknowledged once:\n{}",
            self.bob.listing(40)
        );
        for text in ["Queued", "Your spell"] {
            assert_eq!(
                irc.count(ARENA, text),
                0,
                "a private answer reached the channel:\n{}",
                irc.listing(80)
            );
            assert_eq!(mx.count(&duel_room, text), 0, "a private answer reached the Matrix room");
        }
        eprintln!("the test took {:?}", self.started.elapsed());
    }

    /// The ircwatch transcript's length once what is on its way has arrived: lines after it
    /// are [`World::unexpected_irc_lines_from`].
    pub(super) async fn irc_mark(&mut self) -> usize {
        self.ircwatch.pump().await;
        self.ircwatch.seen.len()
    }

    /// The lines ircwatch saw from `nick` after `mark` that no step of the test expected.
    /// The new leader may take the old one's nick back once it is gone, so a line from that
    /// nick may be the new leader's: its expected lines are left out here, and each of them
    /// is counted exactly once by [`World::check_transcripts`] (the old daemon saying one
    /// too would make it twice). So are the answers to the `!games` probes that look for
    /// the new leader; a read-only answer from the old daemon would double the `!status`
    /// answers, counted once too.
    pub(super) async fn unexpected_irc_lines_from(&mut self, nick: &str, mark: usize) -> Vec<String> {
        self.ircwatch.pump().await;
        let watch = &self.ircwatch;
        (mark..watch.seen.len())
            .filter(|&i| !watch.taken[i] && watch.seen[i].from == nick)
            .map(|i| strip(&watch.seen[i].text))
            .filter(|text| !text.contains("Games:"))
            .collect()
    }

    /// The nick the active bot answers as on IRC.
    pub(super) fn bot_nick(&self) -> &str {
        &self.bot_nick
    }
}
