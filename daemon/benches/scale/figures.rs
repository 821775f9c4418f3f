//! The figures of one run: percentiles of the measured round trips, the daemon's own
//! latency and queueing histograms read from `/metrics` (a difference of two readings),
//! and the database's size on disk.

use std::path::Path;
use std::time::Duration;

use super::support::percentile;

/// p50 and p99 of a phase's round trips (zero when none was measured).
#[derive(Clone, Copy, Debug, Default)]
pub struct Latency {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

pub fn latency(mut times: Vec<Duration>) -> Latency {
    if times.is_empty() {
        return Latency::default();
    }
    times.sort();
    Latency {
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        max: *times.last().unwrap_or(&Duration::ZERO),
    }
}

/// One of the daemon's histograms (`spellbridge_command_<name>_seconds`) as `/metrics`
/// showed it: cumulative bucket counts by upper bound, the sum and the count.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    buckets: Vec<(f64, f64)>,
    sum: f64,
    count: f64,
}

impl Histogram {
    /// Reads `spellbridge_command_<name>_seconds` from the text of `/metrics` (empty when
    /// it is not there).
    pub fn read(metrics: &str, name: &str) -> Histogram {
        let base = format!("spellbridge_command_{name}_seconds");
        let mut histogram = Histogram::default();
        for line in metrics.lines() {
            let Some(rest) = line.strip_prefix(base.as_str()) else { continue };
            let Some((key, value)) = rest.rsplit_once(' ') else { continue };
            let Ok(value) = value.parse::<f64>() else { continue };
            if key == "_sum" {
                histogram.sum = value;
            } else if key == "_count" {
                histogram.count = value;
            } else if let Some(le) = key.strip_prefix("_bucket{le=\"").and_then(|k| k.strip_suffix("\"}")) {
                let bound = if le == "+Inf" { f64::INFINITY } else { le.parse().unwrap_or(f64::INFINITY) };
                histogram.buckets.push((bound, value));
            }
        }
        histogram
    }

    /// What was observed between `earlier` and this reading.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let before =
            |bound: f64| earlier.buckets.iter().find(|(b, _)| *b == bound).map_or(0.0, |(_, count)| *count);
        Histogram {
            buckets: self.buckets.iter().map(|&(bound, count)| (bound, count - before(bound))).collect(),
            sum: self.sum - earlier.sum,
            count: self.count - earlier.count,
        }
    }

    pub fn count(&self) -> f64 {
        self.count
    }

    /// The mean observation.
    pub fn mean(&self) -> Duration {
        if self.count <= 0.0 { Duration::ZERO } else { Duration::from_secs_f64(self.sum / self.count) }
    }

    /// The upper bound of the bucket holding the `p` quantile (`None` past the last bound).
    pub fn quantile_bound(&self, p: f64) -> Option<Duration> {
        let wanted = self.count * p;
        let bound = self.buckets.iter().find(|(_, count)| *count >= wanted)?.0;
        bound.is_finite().then(|| Duration::from_secs_f64(bound))
    }
}

/// The database's files on disk in bytes: the main file and its write-ahead log.
pub fn database_bytes(db: &Path) -> (u64, u64) {
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len());
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    (size(db), size(Path::new(&wal)))
}
