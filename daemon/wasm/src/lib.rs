//! Games loaded at run time as sandboxed WebAssembly components (issue 33).
//!
//! A component implements the world `spellbridge:game@1.0.0` (`wit/game.wit`): the
//! operations of core's [`GamePlugin`](spellbridge_core::GamePlugin) trait, with the
//! table's state as bytes the game owns. This crate loads one ([`load`]), refuses what the
//! host does not provide, and puts it behind the plugin trait ([`plugin`]), so the daemon
//! lists, opens, journals and replays its tables like any built-in game's.
//!
//! - [`check`]: `spellbridge game check`, the report on one component.
//! - [`transcript`]: a component's example transcript, which the check plays.
//! - [`limits`]: what one call may spend (fuel, an epoch deadline, memory, output sizes).
//! - [`load`]: the engine, the import check and the compiled components' disk cache.
//! - [`run`]: one call in a fresh, limited store; a trap or an exhausted budget is a
//!   [`run::CallError`] that refuses that one action.
//! - [`grammar`]: the component's commands as core's grammar (leaked once per load).
//! - [`texts`]: the component's Fluent texts and how its news are worded.
//! - [`plugin`]: [`plugin::WasmGame`] and [`plugin::WasmTable`].
//! - `wasi`: the empty WASI 0.2 a component whose language runtime imports one gets.
//! - [`archive`]: the builds tables were played with, kept by hash for replay.
//! - [`board`]: a component's board SVG read into core's drawing vocabulary.
//! - [`ending`]: a finished table's ending, journaled for ratings.
//!
//! It is its own crate so that only what loads components links wasmtime, and so that the
//! core stays pure: the clock and the fuel live here.

pub mod archive;
pub mod board;
pub mod check;
pub mod ending;
pub mod grammar;
pub mod limits;
pub mod load;
pub mod plugin;
pub mod run;
pub mod texts;
pub mod transcript;
mod wasi;

pub use archive::Archive;
pub use limits::Limits;
pub use load::{LoadError, Loader};
pub use plugin::{WasmGame, WasmTable};

/// The bindings of `wit/game.wit`, generated at build time.
#[allow(missing_docs)]
pub mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "spellbridge-game",
    });
}
