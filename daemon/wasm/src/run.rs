//! One call into a game component, in a fresh store with the call's budget
//! ([`Limits`]): a table's state crosses as bytes, so no instance outlives its call and
//! nothing a call did can reach the next one, or another table.

use std::sync::Mutex;

use wasmtime::component::{InstancePre, Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::SpellbridgeGamePre;
use crate::bindings::exports::spellbridge::game::game::Guest;
use crate::limits::Limits;

/// What a store holds besides the instance: its memory cap, and the call's empty WASI
/// (made on the first WASI call, so only for a component that imports WASI).
pub struct Held {
    limits: Metered,
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl Held {
    /// The call's resources (WASI streams and pollables).
    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }
}

/// The memory cap, for each memory ([`StoreLimits`]) and for all of an instance's
/// memories together (a component of several core modules has several), and how much
/// linear memory the instance has held at most.
struct Metered {
    limits: StoreLimits,
    cap: usize,
    held: usize,
    peak: usize,
}

impl ResourceLimiter for Metered {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let after = self.held.saturating_add(desired.saturating_sub(current));
        if after > self.cap {
            return Err(wasmtime::Error::msg(format!(
                "forcing trap when growing memory: {after} bytes in all, more than {}",
                self.cap
            )));
        }
        let grown = self.limits.memory_growing(current, desired, maximum)?;
        if grown {
            self.held = after;
            self.peak = self.peak.max(self.held);
        }
        Ok(grown)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

/// What a runner's calls that answered have used, since it was made (`game check`
/// reports it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Calls that answered.
    pub calls: u64,
    /// Their fuel, in all.
    pub fuel: u64,
    /// The most fuel one of them used.
    pub fuel_max: u64,
    /// The most linear memory one instance held, in bytes.
    pub memory_peak: usize,
}

impl WasiView for Held {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: self.wasi.get_or_insert_with(crate::wasi::context), table: &mut self.table }
    }
}

/// Why a call gave no answer. The action it was for is refused; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// It used its whole fuel budget (an endless loop, or far too much work).
    #[error("it used up its budget of {0} instructions")]
    Fuel(u64),
    /// It ran past its time.
    #[error("it ran for longer than {0} ms")]
    Time(u128),
    /// It asked for more memory than a table may have.
    #[error("it asked for more than {0} bytes of memory")]
    Memory(usize),
    /// It trapped (a panic, an `unreachable`, an access out of bounds).
    #[error("it stopped with an error: {0}")]
    Trap(String),
    /// It answered something the host refuses (too large, or not what the world says).
    #[error("its answer was refused: {0}")]
    Answer(String),
}

/// Whether a call is held to the epoch deadline ([`Limits::ticks`]), which counts wall
/// clock: a live call is; a replay's is not (its fuel still bounds it), since how far a
/// call gets in that time depends on the machine and how busy it is, and a replay must
/// be the same game on any machine. A replay repeats a deadline's pause from the journal
/// instead ([`crate::plugin::Paused::deadline`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deadline {
    /// The call is interrupted after [`Limits::ticks`] epoch ticks.
    Held,
    /// No epoch deadline: only fuel stops the call.
    Lifted,
}

/// Calls one loaded component, each call in a store of its own.
pub struct Runner {
    engine: Engine,
    pre: SpellbridgeGamePre<Held>,
    limits: Limits,
    wasi: bool,
    usage: Mutex<Usage>,
}

impl Runner {
    /// A runner of the component `pre` was made for; `wasi` if it imports the empty WASI.
    pub(crate) fn new(
        engine: Engine,
        pre: InstancePre<Held>,
        limits: Limits,
        wasi: bool,
    ) -> wasmtime::Result<Runner> {
        Ok(Runner { engine, pre: SpellbridgeGamePre::new(pre)?, limits, wasi, usage: Mutex::default() })
    }

    /// An empty linker for this engine (the host's imports are added by [`crate::load`]).
    pub(crate) fn linker(engine: &Engine) -> Linker<Held> {
        Linker::new(engine)
    }

    /// The limits each call gets.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// What the calls that answered have used so far.
    pub fn usage(&self) -> Usage {
        self.usage.lock().map(|usage| *usage).unwrap_or_default()
    }

    /// Runs `call` against a fresh instance, with a fresh budget.
    pub fn call<T: Send>(
        &self,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T> + Send,
    ) -> Result<T, CallError> {
        self.call_counted(call).map(|(answer, _)| answer)
    }

    /// [`Runner::call`], held to the epoch deadline or not ([`Deadline`]).
    pub fn call_within<T: Send>(
        &self,
        deadline: Deadline,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T> + Send,
    ) -> Result<T, CallError> {
        self.call_counted_within(deadline, call).map(|(answer, _)| answer)
    }

    /// [`Runner::call`], and the fuel it used (instantiation included).
    ///
    /// A component with WASI is called on a thread of its own: wasmtime-wasi's blocking
    /// calls (a write to stdout, a poll) enter a Tokio runtime of their own, which they
    /// cannot do on a thread of the daemon's runtime.
    pub fn call_counted<T: Send>(
        &self,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T> + Send,
    ) -> Result<(T, u64), CallError> {
        self.call_counted_within(Deadline::Held, call)
    }

    /// [`Runner::call_counted`], held to the epoch deadline or not.
    fn call_counted_within<T: Send>(
        &self,
        deadline: Deadline,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T> + Send,
    ) -> Result<(T, u64), CallError> {
        if !self.wasi {
            return self.call_here(deadline, call);
        }
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("wasm-call".into())
                .spawn_scoped(scope, || self.call_here(deadline, call))
                .map_err(|e| CallError::Trap(format!("no thread for the call: {e}")))?
                .join()
                .unwrap_or_else(|_| Err(CallError::Trap("the host panicked in the call".into())))
        })
    }

    /// [`Runner::call_counted`] on this thread.
    fn call_here<T>(
        &self,
        deadline: Deadline,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T>,
    ) -> Result<(T, u64), CallError> {
        // 32 instances: a Python component (componentize-py) links its interpreter and
        // libraries as a dozen core instances; each instance's memory counts in the cap.
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory)
            .trap_on_grow_failure(true)
            .instances(32)
            .memories(4)
            .tables(16)
            .build();
        let limits = Metered { limits, cap: self.limits.memory, held: 0, peak: 0 };
        let mut store = Store::new(&self.engine, Held { limits, wasi: None, table: ResourceTable::new() });
        store.limiter(|held| &mut held.limits);
        store.set_fuel(self.limits.fuel).map_err(|e| CallError::Trap(e.to_string()))?;
        store.set_epoch_deadline(match deadline {
            Deadline::Held => self.limits.ticks,
            // An epoch no engine reaches (a tick each 10 ms), and that the engine's
            // current epoch is added to without overflow.
            Deadline::Lifted => u64::MAX / 2,
        });
        let game = self.pre.instantiate(&mut store).map_err(|e| self.classify(&e))?;
        let answer = call(&mut store, game.spellbridge_game_game()).map_err(|e| self.classify(&e))?;
        let fuel = self.limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
        if let Ok(mut usage) = self.usage.lock() {
            usage.calls += 1;
            usage.fuel = usage.fuel.saturating_add(fuel);
            usage.fuel_max = usage.fuel_max.max(fuel);
            usage.memory_peak = usage.memory_peak.max(store.data().limits.peak);
        }
        Ok((answer, fuel))
    }

    /// What went wrong, in words a game master can act on.
    fn classify(&self, error: &wasmtime::Error) -> CallError {
        match error.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => CallError::Fuel(self.limits.fuel),
            Some(Trap::Interrupt) => {
                CallError::Time(Limits::TICK.as_millis() * u128::from(self.limits.ticks))
            }
            _ => {
                let text = format!("{error:#}");
                if text.contains("growing memory") || text.contains("memory minimum size") {
                    CallError::Memory(self.limits.memory)
                } else if let Some(trap) = error.downcast_ref::<Trap>() {
                    // The trap alone (`wasm `unreachable` instruction executed`): the
                    // component's backtrace is for its author (`game check`), not the room.
                    CallError::Trap(trap.to_string())
                } else {
                    let first = text.lines().next().unwrap_or_default();
                    CallError::Trap(first.chars().take(300).collect())
                }
            }
        }
    }
}
