//! The site's paths. A table id is the table's number written plainly: ASCII digits, no
//! sign, no leading zero, at most 19 of them (SQLite's integers); anything else — `../`,
//! a percent-encoded digit, a number too large, an empty segment — is not a table, so 404.
//! The path is matched as the client sent it (never decoded), so no encoding can reach
//! another route.

use crate::journal::TableId;

/// What a path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/`: live and recent tables.
    Index,
    /// `/events`: server-sent events, one whenever a shown table changes.
    IndexEvents,
    /// `/tables/{id}`.
    Table(TableId),
    /// `/tables/{id}/board.png`.
    Board(TableId),
    /// `/tables/{id}/events`: server-sent events.
    Events(TableId),
    /// `/leaderboard`.
    Leaderboard,
    /// `/rules` (`None`) or `/rules/{game}`: the rules at hand. A game's name is 1 to 32
    /// ASCII lower-case letters and digits.
    Rules(Option<&'a str>),
    /// `/font.otf`: the board font.
    Font,
    /// Anything else the site answers: 404.
    NotFound,
}

/// The route of `path`; `None` for the operations endpoint's own paths.
pub fn route(path: &str) -> Option<Route<'_>> {
    if matches!(path, "/healthz" | "/leader" | "/metrics") {
        return None;
    }
    Some(match path {
        "/" => Route::Index,
        "/events" => Route::IndexEvents,
        "/leaderboard" => Route::Leaderboard,
        "/font.otf" => Route::Font,
        "/rules" => Route::Rules(None),
        _ if path.starts_with("/rules/") => {
            let name = &path["/rules/".len()..];
            let plain = (1..=32).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            if plain { Route::Rules(Some(name)) } else { Route::NotFound }
        }
        _ => {
            let Some(rest) = path.strip_prefix("/tables/") else { return Some(Route::NotFound) };
            let (id, tail) = match rest.split_once('/') {
                Some((id, tail)) => (id, Some(tail)),
                None => (rest, None),
            };
            match (table_id(id), tail) {
                (Some(id), None) => Route::Table(id),
                (Some(id), Some("board.png")) => Route::Board(id),
                (Some(id), Some("events")) => Route::Events(id),
                _ => Route::NotFound,
            }
        }
    })
}

/// A table's number as the site writes it, or `None`.
pub fn table_id(text: &str) -> Option<TableId> {
    let plain = !text.is_empty()
        && text.len() <= 19
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if !plain {
        return None;
    }
    text.parse::<i64>().ok().and_then(|n| TableId::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_has_its_route() {
        assert_eq!(route("/"), Some(Route::Index));
        assert_eq!(route("/events"), Some(Route::IndexEvents));
        assert_eq!(route("/leaderboard"), Some(Route::Leaderboard));
        assert_eq!(route("/font.otf"), Some(Route::Font));
        assert_eq!(route("/tables/0"), Some(Route::Table(0)));
        assert_eq!(route("/tables/42"), Some(Route::Table(42)));
        assert_eq!(route("/tables/42/board.png"), Some(Route::Board(42)));
        assert_eq!(route("/tables/42/events"), Some(Route::Events(42)));
        assert_eq!(route("/tables/9223372036854775807"), Some(Route::Table(i64::MAX as u64)));
        assert_eq!(route("/rules"), Some(Route::Rules(None)));
        assert_eq!(route("/rules/duel"), Some(Route::Rules(Some("duel"))));
        assert_eq!(route("/healthz"), None, "the endpoint's own");
        assert_eq!(route("/metrics"), None);
    }

    #[test]
    fn hostile_and_malformed_ids_are_not_tables() {
        let long = format!("/tables/{}", "9".repeat(5000));
        for path in [
            "/tables/../etc/passwd",
            "/tables/..",
            "/tables/..%2F..%2Fgames.db",
            "/tables/%31",
            "/tables/%2e%2e",
            "/tables/1%00",
            "/tables/-1",
            "/tables/+1",
            "/tables/01",
            "/tables/1.0",
            "/tables/0x10",
            "/tables/1e3",
            "/tables/abc",
            "/tables/",
            "/tables",
            "/tables//board.png",
            "/tables/1/",
            "/tables/1/board.png/x",
            "/tables/1/../2",
            "/tables/1/BOARD.PNG",
            "/tables/9223372036854775808",
            "/tables/18446744073709551616",
            "/tables/１",
            long.as_str(),
            "/leaderboard/",
            "/rules/",
            "/rules/Duel",
            "/rules/../tables/1",
            "/rules/duel/",
            "/rules/%64uel",
            "/index.html",
            "//",
        ] {
            assert_eq!(route(path), Some(Route::NotFound), "{path}");
        }
    }
}
