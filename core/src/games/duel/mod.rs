//! Duel (placeholder until the engine lands).

use serde_json::Value;

use crate::plugin::{CommandHelp, GamePlugin, Refusal, Table, TableSetup};

/// The Duel game.
#[derive(Debug, Default)]
pub struct DuelPlugin;

impl GamePlugin for DuelPlugin {
    fn name(&self) -> &'static str {
        "duel"
    }
    fn summary(&self) -> &'static str {
        "Duel"
    }
    fn commands(&self) -> &'static [CommandHelp] {
        &[]
    }
    fn open(&self, _setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        Err(Refusal::because("not yet"))
    }
    fn restore(&self, _snapshot: &Value) -> Result<Box<dyn Table>, String> {
        Err("not yet".into())
    }
}
