//! Thaum's config section (`[games.thaum]`, or the older `[thaum]`) read into
//! [`ThaumOptions`], and a table's state as MediaWiki markup for `spellbridge export`.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;

use super::{Schedule, ThaumOptions};
use crate::options::GameOptions;

/// The section exactly as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    /// `cycle13` (default: phases end Sun, Wed, Fri 00:00 UTC) or `manual`.
    schedule: Option<Schedule>,
    /// RULES T-7: Summoning's N is multiplied by the Mana spent (default false).
    summoning_scales_with_mana: Option<bool>,
    /// RULES T-9: coin revokes beyond the balance become debt (default false).
    coin_debt: Option<bool>,
}

/// The options the section gives, defaults filled in.
pub fn options(section: &GameOptions<'_>) -> Result<ThaumOptions, String> {
    let written: Written = section.parse()?;
    let defaults = ThaumOptions::default();
    Ok(ThaumOptions {
        schedule: written.schedule.unwrap_or(defaults.schedule),
        summoning_scales_with_mana: written
            .summoning_scales_with_mana
            .unwrap_or(defaults.summoning_scales_with_mana),
        coin_debt: written.coin_debt.unwrap_or(defaults.coin_debt),
    })
}

/// The season, phase and each player's sheet as a sortable wiki table.
pub fn wiki(state: &Value) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Season {}, Phase {}, Loop Instability {}\n\n{{| class=\"wikitable sortable\"\n! Player !! Mana !! Coins !! Fire !! Water !! Earth !! Air",
        state["season"], state["phase"], state["loop_instability"]
    );
    for (player, sheet) in state["players"].as_object().into_iter().flatten() {
        let t = &sheet["thaums"];
        let _ = writeln!(
            out,
            "|-\n| {player} || {} || {} || {} || {} || {} || {}",
            sheet["mana"], sheet["coins"], t["fire"], t["water"], t["earth"], t["air"]
        );
    }
    out.push_str("|}\n");
    out
}
