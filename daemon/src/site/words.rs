//! The site's own words in each language it speaks: English, and Chinese with
//! `?lang=zh-CN` (any tag `Language` reads: `zh`, `中文`, …). What a table was told is
//! rendered by its game in the same language.

use spellbridge_core::Language;

/// The labels of the site's pages.
#[derive(Debug)]
pub struct Words {
    /// The site's name.
    pub site: &'static str,
    /// `/`'s title and link.
    pub tables: &'static str,
    /// `/leaderboard`'s title and link.
    pub leaderboard: &'static str,
    /// `/rules`' title and link.
    pub rules: &'static str,
    /// The live tables' heading.
    pub live: &'static str,
    /// The finished tables' heading.
    pub recent: &'static str,
    /// When there are none.
    pub none: &'static str,
    /// Column headings.
    pub table: &'static str,
    /// A game's column.
    pub game: &'static str,
    /// A room's column.
    pub room: &'static str,
    /// The players' column.
    pub players: &'static str,
    /// Moves made.
    pub moves: &'static str,
    /// A live table's state.
    pub playing: &'static str,
    /// A finished table's state.
    pub finished: &'static str,
    /// The board's heading.
    pub board: &'static str,
    /// The public state's heading.
    pub state: &'static str,
    /// The history's heading.
    pub history: &'static str,
    /// When.
    pub when: &'static str,
    /// Who.
    pub who: &'static str,
    /// What was typed.
    pub command: &'static str,
    /// The dice seed's column.
    pub seed: &'static str,
    /// What the table was told.
    pub told: &'static str,
    /// A private command.
    pub privately: &'static str,
    /// The opening row.
    pub opened: &'static str,
    /// A timer row.
    pub timer: &'static str,
    /// The dice heading.
    pub dice: &'static str,
    /// A commitment.
    pub commitment: &'static str,
    /// A revealed key.
    pub key: &'static str,
    /// A key not revealed yet.
    pub not_revealed: &'static str,
    /// How to check a key.
    pub verify: &'static str,
    /// A rating.
    pub rating: &'static str,
    /// Games played.
    pub games: &'static str,
    /// Wins, losses, draws.
    pub record: &'static str,
    /// Longest winning streak.
    pub streak: &'static str,
    /// Favourite wizard.
    pub favourite: &'static str,
    /// Seasons won.
    pub seasons_won: &'static str,
    /// Seasons played.
    pub seasons: &'static str,
    /// Nothing found.
    pub not_found: &'static str,
    /// The page follows the table live.
    pub live_note: &'static str,
    /// The footer.
    pub footer: &'static str,
    /// The older rows of a history, folded away.
    pub earlier: &'static str,
    /// A dice key's epoch (RULES T-10).
    pub epoch: &'static str,
}

const EN: Words = Words {
    site: "spellbridge",
    tables: "Tables",
    leaderboard: "Leaderboard",
    rules: "Rules",
    live: "Playing now",
    recent: "Recently finished",
    none: "None.",
    table: "Table",
    game: "Game",
    room: "Room",
    players: "Players",
    moves: "Moves",
    playing: "playing",
    finished: "finished",
    board: "Board",
    state: "State",
    history: "History",
    when: "When (UTC)",
    who: "Who",
    command: "Command",
    seed: "Dice seed",
    told: "The table was told",
    privately: "(sent privately)",
    opened: "opened the table",
    timer: "timer",
    dice: "Dice (RULES T-10)",
    commitment: "commitment",
    key: "key",
    not_revealed: "revealed when the table ends or takes a new key",
    verify: "Check a revealed key with",
    rating: "Rating",
    games: "Games",
    record: "Won–lost–drawn",
    streak: "Longest streak",
    favourite: "Favourite wizard",
    seasons_won: "Seasons won",
    seasons: "Seasons played",
    not_found: "There is no such page or table here.",
    live_note: "This page follows the table live.",
    footer: "A read-only view of the games; nothing here can change them.",
    earlier: "Earlier moves",
    epoch: "epoch",
};

const ZH: Words = Words {
    site: "spellbridge",
    tables: "牌桌",
    leaderboard: "排行榜",
    rules: "规则",
    live: "正在进行",
    recent: "最近结束",
    none: "无。",
    table: "牌桌",
    game: "游戏",
    room: "房间",
    players: "玩家",
    moves: "步数",
    playing: "进行中",
    finished: "已结束",
    board: "棋盘",
    state: "状态",
    history: "历史",
    when: "时间（UTC）",
    who: "玩家",
    command: "命令",
    seed: "骰子种子",
    told: "牌桌公告",
    privately: "（私下发送）",
    opened: "开桌",
    timer: "计时器",
    dice: "骰子（规则 T-10）",
    commitment: "承诺",
    key: "密钥",
    not_revealed: "牌桌结束或换新密钥时公开",
    verify: "校验已公开的密钥：",
    rating: "等级分",
    games: "局数",
    record: "胜–负–平",
    streak: "最长连胜",
    favourite: "常用法师",
    seasons_won: "赛季冠军",
    seasons: "参加赛季",
    not_found: "这里没有这个页面或牌桌。",
    live_note: "本页实时更新。",
    footer: "只读观战页面；这里的一切都不会改变游戏。",
    earlier: "更早的记录",
    epoch: "密钥期",
};

/// The language a query asks for (`lang=…`), English by default.
pub fn language(query: Option<&str>) -> Language {
    query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|pair| pair.strip_prefix("lang="))
        .find_map(|tag| tag.replace("%2D", "-").replace("%2d", "-").parse().ok())
        .unwrap_or_default()
}

/// The site's words in `language`.
pub fn words(language: Language) -> &'static Words {
    match language {
        Language::En => &EN,
        Language::ZhCn => &ZH,
    }
}

/// The query that keeps `language` on a link (`""` for English).
pub fn keep(language: Language) -> &'static str {
    match language {
        Language::En => "",
        Language::ZhCn => "?lang=zh-CN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_chooses_the_language() {
        assert_eq!(language(None), Language::En);
        assert_eq!(language(Some("lang=zh-CN")), Language::ZhCn);
        assert_eq!(language(Some("v=3&lang=zh")), Language::ZhCn);
        assert_eq!(language(Some("lang=fr")), Language::En);
        assert_eq!(words(Language::ZhCn).tables, "牌桌");
        assert_eq!(keep(Language::ZhCn), "?lang=zh-CN");
    }
}
