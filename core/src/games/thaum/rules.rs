//! Thaum's rules at hand (`!rules`, the site's `/rules/thaum`): each fixed point of
//! RULES.md Game 1 that the game's texts cite (`(RULES T-9)`), by id, with its short form
//! in each language (`locales/*/thaum.ftl`, "Rules at hand").

/// Every rule id Thaum cites, in order, with its catalogue message.
pub const RULES: &[(&str, &str)] = &[
    ("T-1", "thaum-rule-t1"),
    ("T-2", "thaum-rule-t2"),
    ("T-3", "thaum-rule-t3"),
    ("T-4", "thaum-rule-t4"),
    ("T-5", "thaum-rule-t5"),
    ("T-6", "thaum-rule-t6"),
    ("T-7", "thaum-rule-t7"),
    ("T-8", "thaum-rule-t8"),
    ("T-9", "thaum-rule-t9"),
    ("T-10", "thaum-rule-t10"),
];
