//! Scale benchmark (a bench binary that prints figures): `cargo bench -p spellbridge --bench scale`.
//!
//! Issue 16's measurement, as a host with many active games sees it: one InspIRCd on
//! loopback (the test harness's, flood penalties off) and `spellbridge run` (this
//! package's binary, built in the bench profile; durability `full`, the default; flood
//! control and the per-user limit off; `require_account = false`). For each N of
//! [`DEFAULT_NS`] (or `SCALE_NS`), with a fresh daemon and database:
//!
//! 1. N tables, each in its own channel with two players: even-numbered tables Thaum
//!    (opened by `!new thaum`, joined by `!join`), odd-numbered ones Duels (`!duel`,
//!    `!accept`). The 2N IRC clients are multiplexed in this one process's tokio runtime
//!    (one thread), TCP_NODELAY and TCP_QUICKACK on each (`scale/load.rs`).
//! 2. Start: from spawning the daemon (empty database) until `!games` is answered in the
//!    last table's channel (the daemon joins its channels in order).
//! 3. Steady: for `SCALE_SECS` (default 30 s) each table sends one command every 100 ms
//!    (10 per second per table, the tables spread evenly over the 100 ms), alternating
//!    between its two players, whether or not the last was answered. The commands are
//!    real game commands whose answers name their client: at a Thaum table the game
//!    master's `!coins <me> +1` (a change, committed before the reply) and the other
//!    player's `!status` (in the channel); at a Duel each wizard's `!status` sent
//!    privately (answered privately, four lines; the last one counts). A round trip is
//!    from just before the client's write to the moment its reading task read the answer.
//! 4. Saturation: for `SCALE_SAT_SECS` (default 10 s) each table sends its next command
//!    as soon as its last is answered (closed loop: N commands in flight).
//! 5. The daemon's RSS, its database's size, then a restart: from SIGTERM until the last
//!    Thaum table's `!status` is answered by the new process (which loads the N tables).
//!    Last, `spellbridge verify` audits the database.
//!
//! Per N it reports p50/p99 round trips, answers/s, the daemon's CPU time (user + system
//! from /proc) per answered command and as a share of one core, and the daemon's own
//! `command_latency` (network read to reply handed on) and `command_queueing` histograms
//! from its `/metrics`. For the saturation phase it also splits the machine's CPU time
//! per answer between the daemon's loop thread, its other threads, InspIRCd and this load
//! generator, and says how many answers a second the machine's cores could give at those
//! costs. Every wait is bounded; the daemon and the server are stopped at the
//! end (SIGTERM, then SIGKILL), also when the bench panics.
//!
//! Environment: `SCALE_NS=1,10,100` picks the Ns, `SCALE_SECS=5` the steady phase's and
//! `SCALE_SAT_SECS=5` the saturation phase's length (a quick run: `SCALE_NS=1,10,100
//! SCALE_SECS=5 SCALE_SAT_SECS=3`); `SCALE_PERF=DIR` records the daemon with
//! `perf record -e cpu-clock --call-graph dwarf` during each saturation phase into `DIR/perf-<N>.data`.
//!
//! Needs InspIRCd (`tests/scripts/install-inspircd.sh`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use spellbridge_tests::harness::inspircd::InspIrcd;

#[path = "scale/figures.rs"]
mod figures;
#[path = "scale/load.rs"]
mod load;
#[path = "scale/phases.rs"]
mod phases;
mod support;

use figures::{Histogram, Latency, database_bytes, latency};
use load::{Fleet, Happened, Role, Seat};
use phases::Phase;
use support::process::{Process, free_port, metrics};
use support::{clock_ticks, cpu_time, cpu_time_of, ms, rss_mib};

/// The daemon: Cargo builds this package's binary for its benches and names it here.
const SPELLBRIDGE: &str = env!("CARGO_BIN_EXE_spellbridge");
/// The bot's nick.
const BOT: &str = "spellbridge";
/// The numbers of tables measured by default.
const DEFAULT_NS: [usize; 5] = [1, 10, 100, 300, 1000];
const DEFAULT_STEADY_SECS: u64 = 30;
const DEFAULT_SATURATION_SECS: u64 = 10;
/// Clients registering at once (InspIRCd registers each on its 1 s timer).
const CONNECTING_AT_ONCE: usize = 250;
/// The longest the daemon may take to answer after a start, and the tables to open.
const START_LIMIT: Duration = Duration::from_secs(180);
const OPEN_LIMIT: Duration = Duration::from_secs(180);
/// The longest the daemon may take to answer a steady phase's backlog.
const BACKLOG_LIMIT: Duration = Duration::from_secs(600);

/// What to run, from the environment.
struct Settings {
    ns: Vec<usize>,
    steady: Duration,
    saturation: Duration,
    perf: Option<PathBuf>,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64| -> u64 {
            match std::env::var(name) {
                Ok(text) => text.trim().parse().unwrap_or_else(|_| {
                    panic!("{name}={text:?} is not a number of seconds; write e.g. {name}=5")
                }),
                Err(_) => default,
            }
        };
        let ns = match std::env::var("SCALE_NS") {
            Ok(text) => text
                .split(',')
                .map(|n| n.trim().parse::<usize>().ok().filter(|&n| n > 0))
                .collect::<Option<Vec<_>>>()
                .unwrap_or_else(|| {
                    panic!("SCALE_NS={text:?} is not a list of table counts; write e.g. SCALE_NS=1,10,100")
                }),
            Err(_) => DEFAULT_NS.to_vec(),
        };
        Settings {
            ns,
            steady: Duration::from_secs(number("SCALE_SECS", DEFAULT_STEADY_SECS)),
            saturation: Duration::from_secs(number("SCALE_SAT_SECS", DEFAULT_SATURATION_SECS)),
            perf: std::env::var_os("SCALE_PERF").map(PathBuf::from),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The daemon

/// The daemon's config: the N channels in order, flood control and the per-user limit
/// off, no account required, Thaum's phases by hand only and Duel steps that do not time
/// out during a run, `/metrics` on `http_port`.
fn config(irc_port: u16, http_port: u16, channels: &[String]) -> String {
    let channels: Vec<String> = channels.iter().map(|c| format!("{c:?}")).collect();
    format!(
        "prefix = \"!\"\n\
         [store]\npath = \"games.db\"\ndurability = \"full\"\n\
         [thaum]\nschedule = \"manual\"\n\
         [duel]\nstep_timeout = \"24h\"\n\
         [[irc]]\nname = \"bench\"\nserver = \"127.0.0.1\"\nport = {irc_port}\ntls = false\n\
         nick = \"{BOT}\"\nchannels = [{}]\nrequire_account = false\n\
         [irc.flood]\nenabled = false\n[irc.user_limit]\nenabled = false\n\
         [http]\nlisten = \"127.0.0.1:{http_port}\"\n",
        channels.join(", ")
    )
}

fn run_command(config: &Path) -> Command {
    let mut command = Command::new(SPELLBRIDGE);
    command.args(["run", "--config"]).arg(config).env("RUST_LOG", "warn");
    command
}

/// `perf record` of the daemon until it is dropped (SIGINT, so perf writes its file).
struct Perf(Child);

impl Perf {
    fn start(dir: &Path, pid: u32, n: usize) -> Option<Perf> {
        let output = dir.join(format!("perf-{n}.data"));
        let child = Command::new("perf")
            // DWARF call graphs: the release build keeps no frame pointers.
            .args([
                "record",
                "-e",
                "cpu-clock",
                "-F",
                "499",
                "--call-graph",
                "dwarf,16384",
                "-p",
                &pid.to_string(),
                "-o",
            ])
            .arg(&output)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| eprintln!("scale bench: perf does not start ({e}); no profile"))
            .ok()?;
        Some(Perf(child))
    }
}

impl Drop for Perf {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-INT", &self.0.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && self.0.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------------
// One N

/// What one N measured.
struct Figures {
    tables: usize,
    start: Duration,
    open: Duration,
    steady: Phase,
    steady_cpu: Duration,
    steady_daemon: (Histogram, Histogram),
    saturation: Phase,
    saturation_cpu: Duration,
    saturation_split: Split,
    saturation_daemon: (Histogram, Histogram),
    rss_mib: f64,
    database: (u64, u64),
    restart: Duration,
    verify: (bool, Duration, String),
    load: String,
}

/// The machine's CPU time over the saturation phase, by who spent it: the daemon's loop
/// (its main thread, where the router and the store run), the rest of the daemon (the
/// transports' tasks), InspIRCd and this load generator. Their sum per answer bounds what
/// the machine's cores can answer, however fast any one of them is.
struct Split {
    main: Duration,
    daemon: Duration,
    server: Duration,
    load: Duration,
}

impl Split {
    /// The CPU times so far of the daemon `pid` (and its main thread), the server and this process.
    fn read(pid: u32, server: Option<u32>, ticks: f64) -> Split {
        Split {
            main: cpu_time_of(&format!("/proc/{pid}/task/{pid}/stat"), ticks),
            daemon: cpu_time(pid, ticks),
            server: server.map_or(Duration::ZERO, |server| cpu_time(server, ticks)),
            load: cpu_time(std::process::id(), ticks),
        }
    }

    fn since(&self, before: &Split) -> Split {
        Split {
            main: self.main.saturating_sub(before.main),
            daemon: self.daemon.saturating_sub(before.daemon),
            server: self.server.saturating_sub(before.server),
            load: self.load.saturating_sub(before.load),
        }
    }
}

/// The seats of N tables: table `t` in `#scale<N>-<t>`, its two clients `s<N>t<t>a` and
/// `…b`.
fn seats(n: usize) -> Vec<Seat> {
    (0..n)
        .flat_map(|t| {
            let channel = format!("#scale{n}-{t}");
            let (a, b) = if t % 2 == 0 {
                (Role::ThaumMaster, Role::ThaumPlayer)
            } else {
                (Role::DuelWizard, Role::DuelWizard)
            };
            [("a", a), ("b", b)].map(|(seat, role)| Seat {
                nick: format!("s{n}t{t}{seat}"),
                channel: channel.clone(),
                role,
            })
        })
        .collect()
}

fn daemon_histograms(http_port: u16) -> (Histogram, Histogram) {
    let text = metrics(http_port).unwrap_or_default();
    (Histogram::read(&text, "latency"), Histogram::read(&text, "queueing"))
}

fn since(now: &(Histogram, Histogram), before: &(Histogram, Histogram)) -> (Histogram, Histogram) {
    (now.0.since(&before.0), now.1.since(&before.1))
}

fn uptime() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let loads: Vec<&str> = text.split_whitespace().take(3).collect();
    format!("load average {}", loads.join(" "))
}

async fn measure(port: u16, server: Option<u32>, n: usize, settings: &Settings, ticks: f64) -> Figures {
    let load_before = uptime();
    let seats = seats(n);
    let channels: Vec<String> = seats.iter().step_by(2).map(|s| s.channel.clone()).collect();
    let connecting = Instant::now();
    let mut fleet = Fleet::connect(port, BOT, &seats, CONNECTING_AT_ONCE).await;
    eprintln!(
        "scale bench: N={n}: {} clients connected in {:.1} s",
        fleet.len(),
        connecting.elapsed().as_secs_f64()
    );

    let dir = tempfile::Builder::new().prefix("spellbridge-scale-bench-").tempdir().expect("temp dir");
    let http_port = free_port();
    let config_path = dir.path().join("spellbridge.toml");
    std::fs::write(&config_path, config(port, http_port, &channels)).expect("write the spellbridge config");
    let db = dir.path().join("games.db");

    // Start, empty database: until `!games` is answered in the last channel.
    let last = 2 * (n - 1);
    let spawned = Instant::now();
    let mut bot = Process::spawn("spellbridge", dir, &mut run_command(&config_path));
    let start = phases::probe(&mut fleet, last, false, "!games", spawned, START_LIMIT, |e| {
        matches!(e, Happened::Other { private: false, .. })
    })
    .await
    .unwrap_or_else(|| {
        panic!("the daemon never answered in {} within {START_LIMIT:?}; log:\n{}", channels[n - 1], bot.log())
    });
    eprintln!("scale bench: N={n}: answering in the last channel {:.2} s after start", start.as_secs_f64());

    let open = phases::open_tables(&mut fleet, OPEN_LIMIT)
        .await
        .unwrap_or_else(|e| panic!("{e}; log:\n{}", bot.log()));
    eprintln!("scale bench: N={n}: {n} tables open in {:.1} s", open.as_secs_f64());

    let pid = bot.pid();
    let daemon_before = daemon_histograms(http_port);
    let cpu_before = cpu_time(pid, ticks);
    let steady = phases::steady(&mut fleet, settings.steady).await;
    let steady_cpu = cpu_time(pid, ticks).saturating_sub(cpu_before);
    let daemon_after_steady = daemon_histograms(http_port);
    eprintln!(
        "scale bench: N={n}: steady {} of {} answered ({} lost), p50 {:.3} ms",
        steady.answered,
        steady.sent,
        steady.lost,
        ms(latency(steady.times.clone()).p50)
    );
    // An overloaded steady phase leaves a backlog in the daemon: let it answer all of it
    // (bounded) so the saturation phase starts from an idle daemon and its answers are
    // not taken for the backlog's.
    fleet.drain(Duration::from_secs(2), BACKLOG_LIMIT).await;

    let perf = settings.perf.as_deref().and_then(|d| Perf::start(d, pid, n));
    let daemon_before_saturation = daemon_histograms(http_port);
    let split_before = Split::read(pid, server, ticks);
    let saturation = phases::saturation(&mut fleet, settings.saturation).await;
    let saturation_split = Split::read(pid, server, ticks).since(&split_before);
    let saturation_cpu = saturation_split.daemon;
    drop(perf);
    let daemon_after_saturation = daemon_histograms(http_port);
    eprintln!(
        "scale bench: N={n}: saturation {:.0} answers/s, p50 {:.3} ms",
        saturation.per_second(),
        ms(latency(saturation.times.clone()).p50)
    );
    let rss = rss_mib(pid);
    let load = format!("{load_before} before, {} after the phases", uptime());

    // Restart with the N tables in the database: from SIGTERM until the last Thaum table's
    // `!status` is answered.
    let stopping = Instant::now();
    bot.stop();
    let database = database_bytes(&db);
    bot.start(&mut run_command(&config_path));
    let last_thaum = 2 * ((n - 1) / 2 * 2) + 1;
    let restart = phases::probe(&mut fleet, last_thaum, false, "!status", stopping, START_LIMIT, |e| {
        matches!(e, Happened::Answer { .. })
    })
    .await
    .unwrap_or_else(|| {
        panic!("the restarted daemon never answered within {START_LIMIT:?}; log:\n{}", bot.log())
    });
    eprintln!("scale bench: N={n}: restart to answer {:.2} s", restart.as_secs_f64());
    bot.stop();
    fleet.quit().await;

    let verifying = Instant::now();
    let output = Command::new(SPELLBRIDGE)
        .args(["verify", "--db"])
        .arg(&db)
        .output()
        .expect("spellbridge verify runs");
    let said = String::from_utf8_lossy(&output.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&output.stderr).lines())
        .take(5)
        .map(str::to_owned)
        .collect::<Vec<_>>()
        .join(" / ");
    let verify = (output.status.success(), verifying.elapsed(), said);
    if !verify.0 {
        eprintln!("scale bench: N={n}: verify found problems: {}", verify.2);
    }

    Figures {
        tables: n,
        start,
        open,
        steady_daemon: since(&daemon_after_steady, &daemon_before),
        steady,
        steady_cpu,
        saturation_daemon: since(&daemon_after_saturation, &daemon_before_saturation),
        saturation,
        saturation_cpu,
        saturation_split,
        rss_mib: rss,
        database,
        restart,
        verify,
        load,
    }
}

// ---------------------------------------------------------------------------------------
// The report

fn per_command(cpu: Duration, answered: usize) -> f64 {
    cpu.as_secs_f64() * 1e6 / answered.max(1) as f64
}

fn daemon(h: &(Histogram, Histogram)) -> String {
    let bound = |p| h.0.quantile_bound(p).map_or("> 1 s".to_owned(), |d| format!("≤ {:.2} ms", ms(d)));
    format!(
        "mean {:.3} ms (p50 {}, p99 {}), queueing mean {:.3} ms, {} commands",
        ms(h.0.mean()),
        bound(0.5),
        bound(0.99),
        ms(h.1.mean()),
        h.0.count()
    )
}

fn report(settings: &Settings, runs: &[Figures]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Scale benchmark: InspIRCd and spellbridge on 127.0.0.1, durability full; steady {} s at 10 commands/s \
         per table, saturation {} s closed loop",
        settings.steady.as_secs(),
        settings.saturation.as_secs()
    );
    let _ = writeln!(
        out,
        "\n| tables | offered/s | achieved/s | p50 / p99 RTT | daemon CPU | CPU/command | saturation answers/s (p50 / p99) | CPU/command (sat.) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for r in runs {
        let s: Latency = latency(r.steady.times.clone());
        let t: Latency = latency(r.saturation.times.clone());
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.2} / {:.2} ms | {:.0} % | {:.0} µs | {:.0} ({:.2} / {:.2} ms) | {:.0} µs |",
            r.tables,
            r.tables * 10,
            r.steady.per_second(),
            ms(s.p50),
            ms(s.p99),
            100.0 * r.steady_cpu.as_secs_f64() / r.steady.elapsed.as_secs_f64().max(1e-9),
            per_command(r.steady_cpu, r.steady.answered),
            r.saturation.per_second(),
            ms(t.p50),
            ms(t.p99),
            per_command(r.saturation_cpu, r.saturation.answered),
        );
    }
    let _ = writeln!(
        out,
        "\n| tables | lost (steady / sat.) | RSS | database (+ WAL) | start (empty db) | restart to answer | verify | open N tables |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for r in runs {
        let _ = writeln!(
            out,
            "| {} | {} / {} | {:.1} MiB | {:.1} MiB (+ {:.1} MiB) | {:.2} s | {:.2} s | {} ({:.1} s) | {:.1} s |",
            r.tables,
            r.steady.lost,
            r.saturation.lost,
            r.rss_mib,
            r.database.0 as f64 / 1048576.0,
            r.database.1 as f64 / 1048576.0,
            r.start.as_secs_f64(),
            r.restart.as_secs_f64(),
            if r.verify.0 { "ok" } else { "PROBLEMS" },
            r.verify.1.as_secs_f64(),
            r.open.as_secs_f64(),
        );
    }
    out.push_str(&split(runs));
    let _ = writeln!(
        out,
        "\nThe daemon's own histograms (network read → reply handed on; queueing before the loop):"
    );
    for r in runs {
        let _ = writeln!(out, "  N={:>4} steady:     {}", r.tables, daemon(&r.steady_daemon));
        let _ = writeln!(out, "  N={:>4} saturation: {}", r.tables, daemon(&r.saturation_daemon));
    }
    let _ = writeln!(out, "\nMachine load and the bot's notices:");
    for r in runs {
        let _ = writeln!(
            out,
            "  N={:>4}: {}; max RTT steady {:.1} ms",
            r.tables,
            r.load,
            ms(latency(r.steady.times.clone()).max)
        );
        for note in r.steady.notices.iter().chain(&r.saturation.notices) {
            let _ = writeln!(out, "    notice {note}");
        }
        if !r.verify.0 {
            let _ = writeln!(out, "    verify: {}", r.verify.2);
        }
    }
    out.push_str(&goals(runs));
    out
}

/// Where the machine's CPU went at saturation, per answer, and the most answers a second
/// its cores could give at those costs. The daemon's CPU over InspIRCd's compares daemons
/// across runs: InspIRCd's work per answer is the same in each, so the VM's drift in speed
/// (±10 % between runs here) cancels out.
fn split(runs: &[Figures]) -> String {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut out = format!(
        "\nWhere the machine's CPU went at saturation, per answer ({cores} cores; the ceiling is \
         {cores} cores over the sum):\n\n\
         | tables | daemon loop | daemon, other threads | InspIRCd | load generator | sum | ceiling answers/s | machine busy | daemon ÷ InspIRCd |\n\
         |---|---|---|---|---|---|---|---|---|\n"
    );
    for r in runs {
        let s = &r.saturation_split;
        let answered = r.saturation.answered;
        let each = |cpu: Duration| per_command(cpu, answered);
        let sum = each(s.daemon) + each(s.server) + each(s.load);
        let busy =
            (s.daemon + s.server + s.load).as_secs_f64() / r.saturation.elapsed.as_secs_f64().max(1e-9);
        let _ = writeln!(
            out,
            "| {} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {sum:.0} µs | {:.0} | {:.0} % of {cores} cores | {:.2} |",
            r.tables,
            each(s.main),
            each(s.daemon.saturating_sub(s.main)),
            each(s.server),
            each(s.load),
            cores as f64 * 1e6 / sum.max(1e-9),
            100.0 * busy / cores as f64,
            s.daemon.as_secs_f64() / s.server.as_secs_f64().max(1e-9),
        );
    }
    out
}

/// Issue 16's goals, for the Ns measured.
fn goals(runs: &[Figures]) -> String {
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let mut out = String::from("\nGoals (issue 16):\n");
    let steady_ok = runs.iter().all(|r| {
        let l = latency(r.steady.times.clone());
        l.p50 <= Duration::from_micros(1500) && l.p99 <= Duration::from_millis(5) && r.steady.lost == 0
    });
    let _ = writeln!(
        out,
        "  steady p50 ≤ 1.5 ms and p99 ≤ 5 ms at every N, nothing lost: {}",
        verdict(steady_ok)
    );
    if let Some(r) = runs.iter().find(|r| r.tables == 1000) {
        let rate = r.saturation.per_second();
        let _ = writeln!(
            out,
            "  saturation ≥ 20,000 answers/s at 1,000 tables ({rate:.0}): {}",
            verdict(rate >= 20_000.0)
        );
    }
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else { return out };
    if first.tables != last.tables {
        for (what, cpu) in [
            ("steady", (first.steady_cpu, first.steady.answered, last.steady_cpu, last.steady.answered)),
            (
                "saturation",
                (
                    first.saturation_cpu,
                    first.saturation.answered,
                    last.saturation_cpu,
                    last.saturation.answered,
                ),
            ),
        ] {
            let (a, b) = (per_command(cpu.0, cpu.1), per_command(cpu.2, cpu.3));
            let change = 100.0 * (b - a) / a.max(1e-9);
            let _ = writeln!(
                out,
                "  CPU per command within 25 % from {} to {} tables, {what} ({a:.0} → {b:.0} µs, {change:+.0} %): {}",
                first.tables,
                last.tables,
                verdict(change.abs() <= 25.0)
            );
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this with `--test`-like flags; run the figures only for bench.
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let settings = Settings::from_env();
    if let Some(dir) = &settings.perf {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("SCALE_PERF={}: {e}", dir.display()));
    }
    let irc = InspIrcd::start()
        .unwrap_or_else(|e| panic!("InspIRCd is needed (tests/scripts/install-inspircd.sh): {e}"));
    let port = irc.port();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let ticks = clock_ticks();
    eprintln!(
        "scale bench: InspIRCd on 127.0.0.1:{port}; spellbridge is {SPELLBRIDGE}; Ns {:?}",
        settings.ns
    );
    let mut runs = Vec::new();
    for &n in &settings.ns {
        runs.push(runtime.block_on(measure(port, irc.pid(), n, &settings, ticks)));
    }
    drop(irc);
    print!("{}", report(&settings, &runs));
}
