//! What the load generator does with its [`Fleet`]: open the tables, probe until the bot
//! answers, the steady phase (each table one command every [`PERIOD`], open loop) and the
//! saturation phase (each table's next command as soon as its last is answered).
//!
//! Clients `2t` and `2t + 1` sit at table `t`: its opener (a Thaum table's game master, or
//! the Duel's challenger) and the other player. A table's commands alternate between them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::load::{Fleet, Happened, Role};

/// A table's pace in the steady phase: one command per period (10 per second).
pub const PERIOD: Duration = Duration::from_millis(100);
/// How long the answers still outstanding at a phase's end may take to arrive.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// What a phase measured.
#[derive(Debug, Default)]
pub struct Phase {
    /// Commands sent (in the saturation phase: before its end).
    pub sent: usize,
    /// Answers counted (in the saturation phase: those that arrived before its end).
    pub answered: usize,
    /// Commands never answered, even after [`DRAIN_LIMIT`].
    pub lost: usize,
    /// The round trip of each counted answer.
    pub times: Vec<Duration>,
    /// From the first command sent to the last counted answer (saturation: the phase).
    pub elapsed: Duration,
    /// The bot's private notices to clients meanwhile (the first few).
    pub notices: Vec<String>,
}

impl Phase {
    pub fn per_second(&self) -> f64 {
        self.answered as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn note(&mut self, fleet: &Fleet, client: usize, text: String) {
        if self.notices.len() < 5 {
            self.notices.push(format!("to {}: {text}", fleet.nick(client)));
        }
    }
}

/// The client whose turn it is at table `table` (the `turn`th command there).
fn whose(table: usize, turn: usize) -> usize {
    2 * table + turn % 2
}

/// Opens every table at once: a Thaum table by `!new thaum` and `!join`, a Duel by
/// `!duel <other>` and `!accept`, each step waiting for the bot's announcement.
pub async fn open_tables(fleet: &mut Fleet, limit: Duration) -> Result<Duration, String> {
    let tables = fleet.len() / 2;
    let started = Instant::now();
    let deadline = started + limit;
    fleet.verbose.store(true, Ordering::Relaxed);
    // Per table, the step reached. Thaum: 0 `!new thaum` asked, 2 `!join` asked, 3 done.
    // Duel: 0 the second player spoke (`!wizards`, so the bot knows the name), 1 `!duel`
    // asked, 2 `!accept` asked, 3 done.
    let mut step = vec![0u8; tables];
    let mut last_seen = String::new();
    for t in 0..tables {
        let (a, b) = (2 * t, 2 * t + 1);
        match fleet.role(a) {
            Role::ThaumMaster => fleet.say(a, false, "!new thaum").await,
            _ => fleet.say(b, false, "!wizards").await,
        }
    }
    let mut done = 0;
    while done < tables {
        let Some(event) = fleet.next(deadline).await else {
            let waiting: Vec<String> = (0..tables)
                .filter(|&t| step[t] < 3)
                .take(5)
                .map(|t| format!("{} at step {}", fleet.nick(2 * t), step[t]))
                .collect();
            return Err(format!(
                "{} of {tables} tables not open within {limit:?} (e.g. {waiting:?}; the bot's last line: {last_seen:?})",
                tables - done
            ));
        };
        let Happened::Other { client, text, .. } = event else { continue };
        last_seen = format!("to {}: {text}", fleet.nick(client));
        let t = client / 2;
        let duel = fleet.role(2 * t) == Role::DuelWizard;
        let (a, b) = (2 * t, 2 * t + 1);
        match step[t] {
            0 if duel && client == b => {
                step[t] = 1;
                let challenge = format!("!duel {}", fleet.nick(b));
                fleet.say(a, false, &challenge).await;
            }
            // The opening announcement (or the challenge), seen by the second player.
            0 | 1 if client == b && (text.contains("opens a Thaum table") || text.contains("challenges")) => {
                step[t] = 2;
                let join = if duel { "!accept" } else { "!join" };
                fleet.say(b, false, join).await;
            }
            2 if client == a
                && (text.contains("joins the Thaum table") || text.contains("The track starts")) =>
            {
                step[t] = 3;
                done += 1;
            }
            _ => {}
        }
    }
    fleet.drain(Duration::from_millis(500), Duration::from_secs(30)).await;
    fleet.verbose.store(false, Ordering::Relaxed);
    Ok(started.elapsed())
}

/// Sends `text` from `client` every `every` until the bot's first line reaches it
/// (`answered` says which count): the time from `since` to that line.
pub async fn probe(
    fleet: &mut Fleet,
    client: usize,
    private: bool,
    text: &str,
    since: Instant,
    limit: Duration,
    answered: impl Fn(&Happened) -> bool,
) -> Option<Duration> {
    let every = Duration::from_millis(100);
    let deadline = since + limit;
    let verbose = fleet.verbose.swap(true, Ordering::Relaxed);
    let mut found = None;
    'probing: while Instant::now() < deadline {
        fleet.say(client, private, text).await;
        let wait = (Instant::now() + every).min(deadline);
        while let Some(event) = fleet.next(wait).await {
            let at = match &event {
                Happened::Answer { client: c, at, .. } | Happened::Other { client: c, at, .. }
                    if *c == client =>
                {
                    *at
                }
                _ => continue,
            };
            if answered(&event) {
                found = Some(at - since);
                break 'probing;
            }
        }
    }
    fleet.drain(Duration::from_millis(500), Duration::from_secs(30)).await;
    fleet.verbose.store(verbose, Ordering::Relaxed);
    fleet.forget_pending();
    found
}

/// The steady phase: for `length`, each table sends one command every [`PERIOD`], the
/// tables' sends spread evenly over the period, whether or not the last was answered
/// (open loop); then waits (bounded) for the answers still outstanding.
pub async fn steady(fleet: &mut Fleet, length: Duration) -> Phase {
    let tables = fleet.len() / 2;
    let mut phase = Phase::default();
    let start = Instant::now() + Duration::from_millis(20);
    let end = start + length;
    let mut due: BinaryHeap<Reverse<(Instant, usize)>> =
        (0..tables).map(|t| Reverse((start + PERIOD * t as u32 / tables as u32, t))).collect();
    let mut turns = vec![0usize; tables];
    let mut last = start;
    loop {
        let now = Instant::now();
        if let Some(&Reverse((at, table))) = due.peek()
            && at <= now
        {
            due.pop();
            fleet.command(whose(table, turns[table])).await;
            turns[table] += 1;
            phase.sent += 1;
            if at + PERIOD < end {
                due.push(Reverse((at + PERIOD, table)));
            }
            continue;
        }
        if due.is_empty() && fleet.unanswered() == 0 {
            break;
        }
        let wake = due.peek().map_or(end + DRAIN_LIMIT, |Reverse((at, _))| *at);
        if due.is_empty() && now >= wake {
            break;
        }
        match fleet.next(wake).await {
            Some(Happened::Answer { at, sent: Some(sent), .. }) => {
                phase.answered += 1;
                phase.times.push(at - sent);
                last = last.max(at);
            }
            Some(Happened::Other { client, private: true, text, .. }) => phase.note(fleet, client, text),
            _ => {}
        }
    }
    phase.lost = fleet.unanswered();
    fleet.forget_pending();
    phase.elapsed = last.saturating_duration_since(start);
    phase
}

/// The saturation phase: each table sends its first command at once and its next as soon
/// as the last is answered (closed loop, one command in flight per table), for `length`.
/// Answers that arrive after the end are waited for (bounded) but not counted.
pub async fn saturation(fleet: &mut Fleet, length: Duration) -> Phase {
    let tables = fleet.len() / 2;
    let mut phase = Phase::default();
    let mut turns = vec![0usize; tables];
    let start = Instant::now();
    let end = start + length;
    for (table, turn) in turns.iter_mut().enumerate() {
        fleet.command(whose(table, *turn)).await;
        *turn += 1;
        phase.sent += 1;
    }
    loop {
        let now = Instant::now();
        if now >= end && fleet.unanswered() == 0 {
            break;
        }
        let wake = if now < end { end } else { end + DRAIN_LIMIT };
        match fleet.next(wake).await {
            // An answer after the end is waited for, not counted, and not followed.
            Some(Happened::Answer { client, at, sent: Some(sent) }) if at <= end => {
                phase.answered += 1;
                phase.times.push(at - sent);
                let table = client / 2;
                fleet.command(whose(table, turns[table])).await;
                turns[table] += 1;
                phase.sent += 1;
            }
            Some(Happened::Other { client, private: true, text, .. }) => phase.note(fleet, client, text),
            Some(_) => {}
            None if now >= end => break,
            None => {}
        }
    }
    phase.lost = fleet.unanswered();
    fleet.forget_pending();
    phase.elapsed = length;
    phase
}
