//! The Duel's rules at hand (`!rules`, the site's `/rules/duel`): each fixed point of
//! RULES.md Game 2 that the game's texts cite (`(RULES D-10)`), by id, with its short form
//! in each language (`locales/*/duel.ftl`, "Rules at hand").

/// Every rule id the Duel cites, in order, with its catalogue message.
pub const RULES: &[(&str, &str)] = &[
    ("D-1", "duel-rule-d1"),
    ("D-2", "duel-rule-d2"),
    ("D-3", "duel-rule-d3"),
    ("D-4", "duel-rule-d4"),
    ("D-5", "duel-rule-d5"),
    ("D-6", "duel-rule-d6"),
    ("D-7", "duel-rule-d7"),
    ("D-8", "duel-rule-d8"),
    ("D-9", "duel-rule-d9"),
    ("D-10", "duel-rule-d10"),
    ("D-11", "duel-rule-d11"),
    ("D-12", "duel-rule-d12"),
    ("D-13", "duel-rule-d13"),
];
