//! What one call into a game component may spend. Every call gets a fresh budget: fuel
//! (counted in WebAssembly instructions, so the same call always stops at the same
//! place), an epoch deadline (wall-clock time, for what fuel does not count), a memory
//! cap (a growth past it fails, and the component traps), and bounded outputs.

/// The budget of each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Fuel per call (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Epoch ticks (of [`Limits::TICK`]) before a call is interrupted.
    pub ticks: u64,
    /// Linear memory a component may hold, in bytes.
    pub memory: usize,
    /// The most bytes a state, a text or a view may have.
    pub output: usize,
    /// The most news one call may tell.
    pub news: usize,
}

impl Limits {
    /// How often the engine's epoch advances.
    pub const TICK: std::time::Duration = std::time::Duration::from_millis(10);
}

impl Default for Limits {
    /// A Nim call takes about 14,000 instructions, instantiation included; these leave a
    /// game over three thousand times that, a second of wall clock, 16 MiB of memory and
    /// 256 KiB per state or view.
    fn default() -> Self {
        Limits { fuel: 50_000_000, ticks: 100, memory: 16 << 20, output: 256 << 10, news: 64 }
    }
}
