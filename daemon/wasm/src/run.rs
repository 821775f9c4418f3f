//! One call into a game component, in a fresh store with the call's budget
//! ([`Limits`]): a table's state crosses as bytes, so no instance outlives its call and
//! nothing a call did can reach the next one, or another table.

use wasmtime::component::{InstancePre, Linker};
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder, Trap};

use crate::bindings::SpellbridgeGamePre;
use crate::bindings::exports::spellbridge::game::game::Guest;
use crate::limits::Limits;

/// What a store holds besides the instance: its memory cap.
pub struct Held {
    limits: StoreLimits,
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

/// Calls one loaded component, each call in a store of its own.
pub struct Runner {
    engine: Engine,
    pre: SpellbridgeGamePre<Held>,
    limits: Limits,
}

impl Runner {
    /// A runner of the component `pre` was made for.
    pub(crate) fn new(engine: Engine, pre: InstancePre<Held>, limits: Limits) -> wasmtime::Result<Runner> {
        Ok(Runner { engine, pre: SpellbridgeGamePre::new(pre)?, limits })
    }

    /// An empty linker for this engine (the host's imports are added by [`crate::load`]).
    pub(crate) fn linker(engine: &Engine) -> Linker<Held> {
        Linker::new(engine)
    }

    /// The limits each call gets.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs `call` against a fresh instance, with a fresh budget.
    pub fn call<T>(
        &self,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T>,
    ) -> Result<T, CallError> {
        self.call_counted(call).map(|(answer, _)| answer)
    }

    /// [`Runner::call`], and the fuel it used (instantiation included).
    pub fn call_counted<T>(
        &self,
        call: impl FnOnce(&mut Store<Held>, &Guest) -> wasmtime::Result<T>,
    ) -> Result<(T, u64), CallError> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory)
            .trap_on_grow_failure(true)
            .instances(8)
            .memories(4)
            .tables(8)
            .build();
        let mut store = Store::new(&self.engine, Held { limits });
        store.limiter(|held| &mut held.limits);
        store.set_fuel(self.limits.fuel).map_err(|e| CallError::Trap(e.to_string()))?;
        store.set_epoch_deadline(self.limits.ticks);
        let game = self.pre.instantiate(&mut store).map_err(|e| self.classify(&e))?;
        let answer = call(&mut store, game.spellbridge_game_game()).map_err(|e| self.classify(&e))?;
        let left = store.get_fuel().unwrap_or(0);
        Ok((answer, self.limits.fuel.saturating_sub(left)))
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
