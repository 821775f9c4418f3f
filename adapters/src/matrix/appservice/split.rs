//! Netsplits (issue 17, item 3): when two IRC servers lose their link, every user behind
//! the other one quits at once with the two servers' names as the reason
//! (`hub.example.net leaf.example.net`, or `*.net *.split` where the network hides its
//! servers), and most come back within seconds when the link heals. Mirrored as they
//! come, a split floods the Matrix room with leaves and joins; so, as
//! matrix-appservice-irc does, a split's leaves are held ([`Held`]) for a while
//! (`netsplit_hold`) and a member who rejoins meanwhile never leaves; the leaves of a
//! split that did not heal are spread over half a hold more ([`held_for`]), not all at
//! once. Pure: the ghosts' runtime holds, releases and fires.

use std::collections::HashMap;

/// Whether a quit's reason is a netsplit's: exactly two server names (dotted names of
/// letters, digits, `-`, `_` and `*`) separated by one space.
pub fn is_netsplit(reason: &str) -> bool {
    let server = |name: &str| {
        let labels: Vec<&str> = name.split('.').collect();
        labels.len() >= 2
            && labels.iter().all(|l| {
                !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '*'))
            })
    };
    match reason.split(' ').collect::<Vec<_>>().as_slice() {
        [one, other] => server(one) && server(other),
        _ => false,
    }
}

/// How long the leave of `who` is held: `hold`, and up to half of it more, the same for
/// the same `who` (from a hash of it), so a split's leaves do not all come at once.
pub fn held_for(hold: std::time::Duration, who: &str) -> std::time::Duration {
    // FNV-1a: a spread, not a secret.
    let hash =
        who.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    hold + (hold / 2).mul_f64((hash % 1000) as f64 / 1000.0)
}

/// The leaves held, each by its key (a room and a member) with the number of its hold,
/// so that a hold that was released and taken again is not fired by the first one's timer.
#[derive(Debug)]
pub struct Held<K> {
    holds: HashMap<K, u64>,
    next: u64,
}

impl<K> Default for Held<K> {
    fn default() -> Self {
        Held { holds: HashMap::new(), next: 0 }
    }
}

impl<K: std::hash::Hash + Eq + Clone> Held<K> {
    /// Holds the leave of `key`; the number to [`fire`](Held::fire) it with.
    pub fn hold(&mut self, key: K) -> u64 {
        self.next += 1;
        self.holds.insert(key, self.next);
        self.next
    }

    /// The member came back: its leave, if held, is dropped. True if one was.
    pub fn release(&mut self, key: &K) -> bool {
        self.holds.remove(key).is_some()
    }

    /// The hold `number` of `key` is over: true (and it is let go) when that hold is still
    /// the one in place, so the leave is to happen now.
    pub fn fire(&mut self, key: &K, number: u64) -> bool {
        if self.holds.get(key) == Some(&number) {
            self.holds.remove(key);
            true
        } else {
            false
        }
    }

    /// How many leaves are held.
    pub fn len(&self) -> usize {
        self.holds.len()
    }

    /// True when none are.
    pub fn is_empty(&self) -> bool {
        self.holds.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_server_names_are_a_netsplit_and_other_quits_are_not() {
        for split in ["hub.example.net leaf.example.net", "*.net *.split", "irc.a-b.org irc_2.c.org"] {
            assert!(is_netsplit(split), "{split}");
        }
        for quit in [
            "Quit: hub.example.net leaf.example.net",
            "Ping timeout: 240 seconds",
            "leaving",
            "a.net",
            "a.net b.net c.net",
            "a.net  b.net",
            "a..net b.net",
            "",
            "Killed (oper (a.net b.net))",
        ] {
            assert!(!is_netsplit(quit), "{quit}");
        }
    }

    #[test]
    fn leaves_are_held_between_one_and_one_and_a_half_holds_spread_by_who() {
        let hold = std::time::Duration::from_secs(30);
        let times: Vec<_> = (0..20).map(|i| held_for(hold, &format!("@irc_x_split{i:02}:hs"))).collect();
        assert!(times.iter().all(|t| *t >= hold && *t <= hold + hold / 2), "{times:?}");
        let distinct: std::collections::BTreeSet<_> = times.iter().collect();
        assert!(distinct.len() > 10, "spread: {times:?}");
        assert_eq!(held_for(hold, "@a:hs"), held_for(hold, "@a:hs"));
    }

    #[test]
    fn a_released_hold_never_fires_and_a_new_hold_is_fired_only_by_its_own_timer() {
        let mut held = Held::default();
        let first = held.hold(("!room", "alice"));
        assert!(held.release(&("!room", "alice")), "alice came back");
        assert!(!held.fire(&("!room", "alice"), first), "her leave is dropped");
        let second = held.hold(("!room", "alice"));
        let third = held.hold(("!room", "alice"));
        assert!(!held.fire(&("!room", "alice"), second), "a replaced hold");
        assert!(held.fire(&("!room", "alice"), third));
        assert!(held.is_empty());
        assert!(!held.release(&("!room", "bob")));
    }
}
