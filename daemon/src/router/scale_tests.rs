//! Issue 16: a command costs the same however many tables and players there are. A game
//! that counts how often the router asks its tables anything shows that a command at
//! one table, a private `!status` and a timer tick no longer walk every table ever
//! opened (the old `active_at` asked each table `is_finished` and `players`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use spellbridge_core::games::thaum::ThaumPlugin;
use spellbridge_core::{
    Action, Announcement, Command, Dice, Event, GamePlugin, Inbound, NetworkId, PlayerId, Presentation,
    Refusal, Registry, RoomId, Table, TableSetup, Timestamp,
};

use super::{Router, RouterConfig};
use crate::secrets::Secrets;

/// Thaum, with every question the router asks a table about who sits there or whether
/// it is over counted.
struct Counting {
    inner: ThaumPlugin,
    asked: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct CountingTable {
    inner: Box<dyn Table>,
    asked: Arc<AtomicUsize>,
}

impl GamePlugin for Counting {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn summary(&self) -> &'static str {
        self.inner.summary()
    }
    fn commands(&self) -> &'static [Command] {
        self.inner.commands()
    }
    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        self.inner.render(events, presentation)
    }
    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let inner = self.inner.open(setup)?;
        Ok(Box::new(CountingTable { inner, asked: self.asked.clone() }))
    }
    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        let inner = self.inner.restore(snapshot)?;
        Ok(Box::new(CountingTable { inner, asked: self.asked.clone() }))
    }
}

impl Table for CountingTable {
    fn game(&self) -> &'static str {
        self.inner.game()
    }
    fn opening(&self) -> Vec<Event> {
        self.inner.opening()
    }
    fn act(&mut self, action: &Action<'_>, dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        self.inner.act(action, dice)
    }
    fn commands(&self) -> &'static [Command] {
        self.inner.commands()
    }
    fn example_player(&self, command: &str, actor: &PlayerId) -> Option<String> {
        self.inner.example_player(command, actor)
    }
    fn next_timer(&self) -> Option<Timestamp> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.inner.next_timer()
    }
    fn fire_timer(&mut self, at: Timestamp, dice: &mut Dice) -> Vec<Event> {
        self.inner.fire_timer(at, dice)
    }
    fn is_finished(&self) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.inner.is_finished()
    }
    fn dice_epoch(&self) -> u64 {
        self.inner.dice_epoch()
    }
    fn players(&self) -> Vec<PlayerId> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.inner.players()
    }
    fn snapshot(&self) -> Value {
        self.inner.snapshot()
    }
    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(CountingTable { inner: self.inner.boxed_clone(), asked: self.asked.clone() })
    }
}

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn say(room: usize, nick: &str, text: &str) -> Inbound {
    let room = RoomId::new(format!("#room{room}"));
    Inbound::new(NetworkId::new("irc"), room, PlayerId::new(nick), text)
}

#[test]
fn a_command_asks_no_table_but_its_own_however_many_there_are() {
    let asked = Arc::new(AtomicUsize::new(0));
    let registry =
        Registry::new(vec![Box::new(Counting { inner: ThaumPlugin::default(), asked: asked.clone() })]);
    let options = RouterConfig { secrets: Secrets::Seeded(1), ..RouterConfig::default() };
    let mut router = Router::new(registry, options);
    const TABLES: usize = 300;
    for room in 0..TABLES {
        let nick = format!("p{room}");
        router.handle(&say(room, &nick, "!new thaum"), T);
        if room % 2 == 0 {
            router.handle(&say(room, &nick, "!stop"), T);
        }
    }
    router.take_journal();
    let asked_for = |router: &mut Router, inbound: Inbound| {
        asked.store(0, Ordering::Relaxed);
        let out = router.handle(&inbound, T);
        (asked.load(Ordering::Relaxed), out)
    };
    let (count, out) = asked_for(&mut router, say(7, "p7", "!gather 1 fire"));
    assert!(!out.is_empty());
    assert!(count <= 8, "one command asked tables {count} times (of {TABLES} tables)");
    let mut private = say(9, "p9", "!status");
    private.private = true;
    let (count, out) = asked_for(&mut router, private);
    assert!(!out.is_empty());
    assert!(count <= 8, "a private !status asked tables {count} times");
    let (count, _) = asked_for(&mut router, say(4, "p4", "!status"));
    assert!(count <= 8, "!status after the game asked tables {count} times");
    asked.store(0, Ordering::Relaxed);
    router.next_timer();
    router.tick(T.plus(1));
    assert!(asked.load(Ordering::Relaxed) <= 8, "a tick with nothing due asked every table");
}
