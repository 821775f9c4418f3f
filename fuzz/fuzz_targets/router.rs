//! Whole messages through the router and both games: no panic, whatever players type.
//! Each input is a script: one message per line, `name: text`, `name (dm): text`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spellbridge::console::{ScriptLine, read_line};
use spellbridge::router::{Router, RouterConfig};
use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

fuzz_target!(|script: &str| {
    let mut router = Router::new(Registry::standard(), RouterConfig::default());
    let mut now = Timestamp::CONSOLE_EPOCH;
    for line in script.lines().take(200) {
        match read_line(line) {
            Ok(ScriptLine::Say { player, text, private, .. }) => {
                let room = if private { format!("dm:{player}") } else { "console".to_owned() };
                let inbound = Inbound {
                    private,
                    ..Inbound::new(NetworkId::new("fuzz"), RoomId::new(room), PlayerId::new(player), text)
                };
                let _ = router.handle(&inbound, now);
            }
            Ok(ScriptLine::Clock(seconds)) => {
                now = now.plus(seconds.min(30 * 86_400));
                let _ = router.tick(now);
            }
            _ => {}
        }
    }
});
