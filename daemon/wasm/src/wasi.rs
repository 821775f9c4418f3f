//! The empty WASI 0.2 a component gets when its language runtime imports one (wasi-libc
//! through the preview-1 adapter, Python, JavaScript): the interfaces exist, and give
//! nothing. No preopened directory, no environment, no arguments, no working folder;
//! every socket refused (no TCP, no UDP, no name lookup, no address allowed); stdin
//! empty; stdout and stderr dropped as they are written (never into the daemon's logs).
//! The wall clock always reads 1970-01-01T00:00:00Z, the monotonic clock always 0, and a
//! sleep or a timeout is over at once (time does not pass inside a call, and no call can
//! keep the daemon's thread waiting); both random sources give the same bytes on every
//! call. So a replay calls the same code with the same inputs and gets the same game.
//!
//! It is wasmtime-wasi's own WASI (`p2`, the synchronous bindings), built by
//! [`WasiCtxBuilder`] with these fixed parts, and the monotonic clock's two `subscribe`
//! functions replaced. It is offered only to a component that imports a WASI interface
//! ([`is_wasi`]); the others keep an empty linker.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rand_core::SeedableRng as _;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::clocks::{HostMonotonicClock, HostWallClock};
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

use crate::run::Held;

/// The WASI 0.2 packages the host gives (empty). Another `wasi:` package (`wasi:http`,
/// `wasi:keyvalue`…) is refused like any import the host does not give.
const PACKAGES: &[&str] =
    &["wasi:cli/", "wasi:clocks/", "wasi:filesystem/", "wasi:io/", "wasi:random/", "wasi:sockets/"];

/// The name under which wasmtime-wasi defines the monotonic clock (its WIT's version;
/// a component's import of any 0.2.x resolves to it).
const MONOTONIC_CLOCK: &str = "wasi:clocks/monotonic-clock@0.2.12";

/// The seed of both random sources: a constant, so every call draws the same bytes.
const FIXED_SEED: u64 = 0x5EED_0F5A_4DB0_C5E5;

/// Whether `import` is one of the WASI 0.2 interfaces the host gives.
pub(crate) fn is_wasi(import: &str) -> bool {
    PACKAGES.iter().any(|package| import.starts_with(package)) && import.contains("@0.2.")
}

/// Adds the empty WASI to `linker`.
pub(crate) fn add(linker: &mut Linker<Held>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_sync(linker)?;
    // wasmtime-wasi's sleeps wait on the host's real clock, where no fuel or epoch can
    // stop them: here a sleep is over at once, as the clock never moves.
    linker.allow_shadowing(true);
    let mut clock = linker.instance(MONOTONIC_CLOCK)?;
    clock
        .func_wrap("subscribe-duration", |mut store, (_,): (u64,)| Ok((over(store.data_mut().table())?,)))?;
    clock.func_wrap("subscribe-instant", |mut store, (_,): (u64,)| Ok((over(store.data_mut().table())?,)))?;
    linker.allow_shadowing(false);
    Ok(())
}

/// A fresh empty WASI for one call.
pub(crate) fn context() -> WasiCtx {
    WasiCtxBuilder::new()
        .wall_clock(Epoch)
        .monotonic_clock(Epoch)
        .secure_random(rand_chacha::ChaCha20Rng::seed_from_u64(FIXED_SEED))
        .insecure_random(rand_chacha::ChaCha20Rng::seed_from_u64(FIXED_SEED))
        .insecure_random_seed(u128::from(FIXED_SEED))
        .max_random_size(64 << 10)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .build()
}

/// A pollable that is ready at once.
fn over(table: &mut ResourceTable) -> wasmtime::Result<Resource<DynPollable>> {
    let ready = table.push(Over)?;
    subscribe(table, ready)
}

/// A sleep that is already over.
struct Over;

impl Pollable for Over {
    // `#[async_trait]`'s form of `async fn ready(&mut self) {}`.
    fn ready<'life0, 'async_trait>(
        &'life0 mut self,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async {})
    }
}

/// Both clocks, stopped at the epoch.
struct Epoch;

impl HostWallClock for Epoch {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for Epoch {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}
