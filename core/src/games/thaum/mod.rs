//! Thaum (placeholder until the engine lands).

use serde_json::Value;

use crate::plugin::{CommandHelp, GamePlugin, Refusal, Table, TableSetup};

/// The Thaum game.
#[derive(Debug, Default)]
pub struct ThaumPlugin;

impl GamePlugin for ThaumPlugin {
    fn name(&self) -> &'static str {
        "thaum"
    }
    fn summary(&self) -> &'static str {
        "Thaum"
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
