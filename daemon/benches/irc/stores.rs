//! The IRC bench on each store engine (issue 34, Measure): with
//! `SPELLBRIDGE_BENCH_STORE=sqlite`, `postgres` or `both`, spellbridge alone (no
//! Limnoria) answers `!status` and `!coins <me> +1` round trips in a channel of its own,
//! once per engine: SQLite with `durability = "full"` (fsync before the reply) and
//! PostgreSQL, a throwaway cluster on loopback (tests/harness/postgres.rs; every commit
//! fenced by the daemon's lease), or the empty database at
//! `$SPELLBRIDGE_BENCH_POSTGRES_URL`.

use spellbridge_tests::harness::postgres::Postgres;

use super::*;

/// One engine's round trips.
struct StoreRun {
    engine: String,
    status: Latency,
    coins: Latency,
}

/// Starts the daemon on `store` (its `[store]` body) in `channel`, opens a Thaum table and
/// measures; the daemon is stopped after.
async fn run(port: u16, player: &mut IrcClient, channel: &str, engine: &str, store: &str) -> StoreRun {
    join(player, channel).await;
    let http = endpoint::free_port().expect("a free port for /metrics");
    let mut bot = start_spellbridge_on(port, http, &[channel.to_owned()], store);
    let ready = wait_until_answering(player, &mut bot, channel, "!games").await;
    eprintln!("irc bench: spellbridge on {engine} answered in {channel} after {:.1} s", ready.as_secs_f64());
    say(player, channel, "!new thaum").await;
    wait_for(player, REPLY_LIMIT, |m| m.from == bot.nick && m.text.contains("opens a Thaum table"))
        .await
        .unwrap_or_else(|| panic!("no Thaum table opened; log:\n{}", bot.process.log()));
    drain(player, Duration::from_millis(300)).await;
    let me = player.nick().to_owned();
    let status = round_trips(player, &bot, channel, "!status", |t| about(&me, t) && t.contains("Mana")).await;
    let coins =
        round_trips(player, &bot, channel, &format!("!coins {me} +1"), |t| t.contains("coins:")).await;
    bot.process.stop();
    eprintln!("irc bench: spellbridge on {engine} !status {}, !coins {}", lat(status.0), lat(coins.0));
    StoreRun { engine: engine.to_owned(), status: status.0, coins: coins.0 }
}

/// Measures the engines `which` names and prints their figures.
pub(super) fn main(which: &str) {
    let (sqlite, postgres) = match which {
        "sqlite" => (true, false),
        "postgres" => (false, true),
        "both" | "" => (true, true),
        other => panic!("SPELLBRIDGE_BENCH_STORE={other:?}: write sqlite, postgres or both"),
    };
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let port = irc.port();
    // A throwaway cluster unless the bench is given a database.
    let (cluster, url) = match std::env::var("SPELLBRIDGE_BENCH_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => (None, url),
        _ if postgres => {
            let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
            let url = cluster.url();
            (Some(cluster), url)
        }
        _ => (None, String::new()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let runs = runtime.block_on(async {
        let mut player = connect_all(port, &["player".to_owned()]).await.pop().expect("player");
        let mut runs = Vec::new();
        if sqlite {
            let store = "path = \"games.db\"\ndurability = \"full\"";
            runs.push(run(port, &mut player, "#sb-sqlite", "SQLite (durability full)", store).await);
        }
        if postgres {
            let store = format!("url = \"{url}\"");
            runs.push(run(port, &mut player, "#sb-postgres", "PostgreSQL (local, fenced)", &store).await);
        }
        runs
    });
    drop((cluster, irc));
    println!(
        "IRC round trips per store engine: one InspIRCd on 127.0.0.1; {ROUND_TRIPS} round trips per figure, \
         one at a time (after {WARMUP} unmeasured), flood control off"
    );
    for r in &runs {
        println!("  spellbridge !status on {}: {}", r.engine, lat(r.status));
        println!("  spellbridge !coins <me> +1 on {}: {}", r.engine, lat(r.coins));
    }
    if let [lite, pg] = runs.as_slice() {
        println!(
            "  PostgreSQL adds {:+.3} ms to !coins p50 ({:+.3} ms to !status p50)",
            ms(pg.coins.p50) - ms(lite.coins.p50),
            ms(pg.status.p50) - ms(lite.status.p50)
        );
    }
}
