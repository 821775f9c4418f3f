//! Which message ids were already handled, answered from memory when the answer is "no"
//! (issue 16). Every message a network delivers is checked against `seen_messages` before
//! it is handled, so that a redelivery is ignored; nearly every one is new, and a query
//! each time cost about 4 % of the daemon's CPU at 1,000 tables. A Bloom filter holding
//! every stored id says "never seen" without the query, and only its "maybe" goes to the
//! table. It never says "never seen" of a stored id, so the answer is as exact as the
//! table's.
//!
//! The filter grows as a chain: when one is full, a new one twice its size takes the new
//! ids and the old ones are still asked. Nothing is ever rebuilt, so no message waits for
//! the table to be read again.

use fastbloom::BloomFilter;
use rusqlite::Connection;

/// False positives wanted from each filter of the chain while it is not full.
const FALSE_POSITIVES: f64 = 0.001;

/// The first filter's room, before it is sized for the ids already stored.
const FIRST_ROOM: usize = 1 << 16;

/// The ids a network already delivered (and the daemon kept), as one filter or a chain.
pub(super) struct Seen {
    filters: Vec<Filter>,
}

struct Filter {
    bloom: BloomFilter,
    room: usize,
    held: usize,
}

impl Filter {
    fn with_room(room: usize) -> Filter {
        Filter { bloom: BloomFilter::with_false_pos(FALSE_POSITIVES).expected_items(room), room, held: 0 }
    }
}

impl Seen {
    /// Every id in `seen_messages`.
    pub(super) fn load(connection: &Connection) -> rusqlite::Result<Seen> {
        let stored: i64 = connection.query_row("SELECT count(*) FROM seen_messages", [], |row| row.get(0))?;
        let stored = usize::try_from(stored).unwrap_or(0);
        let mut seen = Seen { filters: vec![Filter::with_room(FIRST_ROOM.max(stored.saturating_mul(2)))] };
        let mut statement = connection.prepare("SELECT network, message_id FROM seen_messages")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            seen.insert(row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_str()?);
        }
        Ok(seen)
    }

    /// Adds an id as it is stored.
    pub(super) fn insert(&mut self, network: &str, id: &str) {
        let full = self.filters.last().is_none_or(|last| last.held >= last.room);
        if full {
            let room = self.filters.last().map_or(FIRST_ROOM, |last| last.room.saturating_mul(2));
            self.filters.push(Filter::with_room(room));
        }
        if let Some(last) = self.filters.last_mut() {
            last.bloom.insert(&(network, id));
            last.held += 1;
        }
    }

    /// False when the id was never stored; true when it may have been (the table says).
    pub(super) fn may_hold(&self, network: &str, id: &str) -> bool {
        self.filters.iter().any(|filter| filter.bloom.contains(&(network, id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Connection {
        let connection = Connection::open_in_memory().expect("open");
        connection
            .execute_batch(
                "CREATE TABLE seen_messages (network TEXT NOT NULL, message_id TEXT NOT NULL,
                 PRIMARY KEY (network, message_id)) WITHOUT ROWID;
                 INSERT INTO seen_messages VALUES ('irc', 'a'), ('matrix', '$b');",
            )
            .expect("schema");
        connection
    }

    #[test]
    fn holds_what_the_table_holds_and_what_is_added() {
        let mut seen = Seen::load(&table()).expect("load");
        assert!(seen.may_hold("irc", "a"));
        assert!(seen.may_hold("matrix", "$b"));
        assert!(!seen.may_hold("new", "c"));
        seen.insert("new", "c");
        assert!(seen.may_hold("new", "c"));
    }

    #[test]
    fn an_id_is_held_per_network() {
        let seen = Seen::load(&table()).expect("load");
        assert!(!seen.may_hold("matrix", "a"), "irc's `a` is not matrix's");
        // A network and id that run together the same way are still two keys.
        assert!(!seen.may_hold("ir", "ca"));
    }

    #[test]
    fn a_full_filter_grows_a_chain_and_forgets_nothing() {
        let mut seen = Seen::load(&table()).expect("load");
        let many = FIRST_ROOM * 3;
        for i in 0..many {
            seen.insert("irc", &i.to_string());
        }
        assert!(seen.filters.len() >= 2, "{} filters", seen.filters.len());
        assert!((0..many).all(|i| seen.may_hold("irc", &i.to_string())), "no stored id is ever said unseen");
        let strangers = (many..many + 10_000).filter(|i| seen.may_hold("irc", &i.to_string())).count();
        assert!(strangers < 100, "{strangers} of 10,000 new ids were maybes");
    }
}
