//! The catalogue checks: what makes a missing or mismatched message impossible to ship.
//!
//! [`problems`] reads every file of every language and reports what is wrong: a file
//! that does not parse, an id given twice, an id not named after its file's area, an id
//! one language has and another lacks, an unpaired backtick. [`unused`] finds messages
//! no source file names. [`variables`] is what a message reads (`{ $name }`, in any
//! language): rendering checks in debug builds that the code passes exactly those.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use fluent_syntax::ast::{Entry, Expression, InlineExpression, Pattern, PatternElement};
use fluent_syntax::parser;

use super::catalogues::all as areas;
use crate::language::Language;

/// One message as a catalogue file has it.
#[derive(Clone, Debug, Default)]
struct Entries {
    /// Message id → the variables it reads and its backtick count.
    messages: BTreeMap<String, (BTreeSet<String>, usize)>,
    /// Message ids given twice.
    duplicates: Vec<String>,
}

fn read(source: &str) -> Result<Entries, String> {
    let resource = parser::parse(source).map_err(|(_, errors)| format!("{errors:?}"))?;
    let mut entries = Entries::default();
    let mut references: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in &resource.body {
        match entry {
            Entry::Message(message) => {
                let id = message.id.name.to_owned();
                let mut variables = BTreeSet::new();
                let mut ticks = 0;
                let mut refs = BTreeSet::new();
                if let Some(pattern) = &message.value {
                    walk(pattern, &mut variables, &mut ticks, &mut refs);
                }
                references.insert(id.clone(), refs);
                if entries.messages.insert(id.clone(), (variables, ticks)).is_some() {
                    entries.duplicates.push(id);
                }
            }
            Entry::Junk { content } => return Err(format!("cannot read: {content}")),
            _ => {}
        }
    }
    // A message that refers to another reads that one's variables too (one level).
    for (id, refs) in references {
        let borrowed: BTreeSet<String> = refs
            .iter()
            .filter_map(|r| entries.messages.get(r))
            .flat_map(|(vars, _)| vars.iter().cloned())
            .collect();
        if let Some((vars, _)) = entries.messages.get_mut(&id) {
            vars.extend(borrowed);
        }
    }
    Ok(entries)
}

fn walk(
    pattern: &Pattern<&str>,
    vars: &mut BTreeSet<String>,
    ticks: &mut usize,
    refs: &mut BTreeSet<String>,
) {
    for element in &pattern.elements {
        match element {
            PatternElement::TextElement { value } => *ticks += value.matches('`').count(),
            PatternElement::Placeable { expression } => expression_vars(expression, vars, ticks, refs),
        }
    }
}

fn expression_vars(
    expression: &Expression<&str>,
    vars: &mut BTreeSet<String>,
    ticks: &mut usize,
    refs: &mut BTreeSet<String>,
) {
    match expression {
        Expression::Select { selector, variants } => {
            inline_vars(selector, vars, ticks, refs);
            // Each variant is one way the sentence reads: its backticks count once.
            for variant in variants {
                let mut these = 0;
                walk(&variant.value, vars, &mut these, refs);
                if these % 2 == 1 {
                    *ticks += 1;
                }
            }
        }
        Expression::Inline(inline) => inline_vars(inline, vars, ticks, refs),
    }
}

fn inline_vars(
    inline: &InlineExpression<&str>,
    vars: &mut BTreeSet<String>,
    ticks: &mut usize,
    refs: &mut BTreeSet<String>,
) {
    match inline {
        InlineExpression::VariableReference { id } => {
            vars.insert(id.name.to_owned());
        }
        InlineExpression::FunctionReference { arguments, .. } => {
            for argument in &arguments.positional {
                inline_vars(argument, vars, ticks, refs);
            }
            for argument in &arguments.named {
                inline_vars(&argument.value, vars, ticks, refs);
            }
        }
        InlineExpression::MessageReference { id, .. } => {
            refs.insert(id.name.to_owned());
        }
        InlineExpression::Placeable { expression } => expression_vars(expression, vars, ticks, refs),
        InlineExpression::StringLiteral { value } => *ticks += value.matches('`').count(),
        InlineExpression::TermReference { .. } | InlineExpression::NumberLiteral { .. } => {}
    }
}

/// Every file read, per language and area (or why it could not be read).
fn all() -> Vec<(Language, &'static str, Result<Entries, String>)> {
    Language::ALL
        .into_iter()
        .flat_map(|language| areas().map(move |area| (language, area.name, read(area.source(language)))))
        .collect()
}

/// Everything wrong with the catalogues, one line each; empty when they are sound.
pub fn problems() -> Vec<String> {
    let mut problems = Vec::new();
    let mut ids: BTreeMap<Language, BTreeSet<String>> = BTreeMap::new();
    for (language, area, entries) in all() {
        let entries = match entries {
            Ok(entries) => entries,
            Err(why) => {
                problems.push(format!("{language}/{area}.ftl: {why}"));
                continue;
            }
        };
        for id in entries.duplicates {
            problems.push(format!("{language}/{area}.ftl: `{id}` is given twice"));
        }
        for (id, (_, ticks)) in entries.messages {
            if !id.starts_with(&format!("{area}-")) {
                problems.push(format!("{language}/{area}.ftl: `{id}` should start with `{area}-`"));
            }
            if ticks % 2 == 1 {
                problems.push(format!("{language}/{area}.ftl: `{id}` has an unpaired backtick"));
            }
            if !ids.entry(language).or_default().insert(id.clone()) {
                problems.push(format!("{language}: `{id}` is in two files"));
            }
        }
    }
    let english = ids.get(&Language::En).cloned().unwrap_or_default();
    for language in Language::ALL {
        let theirs = ids.get(&language).cloned().unwrap_or_default();
        for id in english.difference(&theirs) {
            problems.push(format!("{language} lacks `{id}`"));
        }
        for id in theirs.difference(&english) {
            problems.push(format!("{language} has `{id}`, which English lacks"));
        }
    }
    problems
}

/// Where a message tells the reader how to reach the bot with a stand-in for it instead of
/// the reading network's own way (issue 31): a `<bot>` placeholder, or `/msg` with
/// anything but the bot's real nick (`{ $bot }`, which IRC fills in) or services
/// (`/msg NickServ`). One `language/area.ftl: line` each; empty when there is none.
pub fn stand_ins_for_the_bot() -> Vec<String> {
    let mut found = Vec::new();
    for language in Language::ALL {
        for area in areas() {
            let source = area.source(language);
            for line in source.lines().filter(|l| !l.trim_start().starts_with('#')) {
                let msg_elsewhere = line.match_indices("/msg ").any(|(at, msg)| {
                    let after = &line[at + msg.len()..];
                    !after.starts_with("{ $bot }") && !after.starts_with("NickServ")
                });
                if line.contains("<bot>") || msg_elsewhere {
                    found.push(format!("{language}/{}.ftl: {line}", area.name));
                }
            }
        }
    }
    found
}

/// Every message id (English's; [`problems`] checks the others have the same).
pub fn ids() -> BTreeSet<String> {
    VARIABLES.keys().cloned().collect()
}

/// The ids no source text names as a string literal (`"duel-opened"`).
pub fn unused<'a>(sources: impl IntoIterator<Item = &'a str> + Clone) -> Vec<String> {
    ids()
        .into_iter()
        .filter(|id| {
            let quoted = format!("\"{id}\"");
            !sources.clone().into_iter().any(|source| source.contains(&quoted))
        })
        .collect()
}

/// Message id → the variables it reads in any language.
static VARIABLES: LazyLock<BTreeMap<String, BTreeSet<String>>> = LazyLock::new(|| {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (language, _, entries) in all() {
        for (id, (vars, _)) in entries.map(|e| e.messages).unwrap_or_default() {
            if language == Language::En || out.contains_key(&id) {
                out.entry(id).or_default().extend(vars);
            }
        }
    }
    out
});

/// The variables message `id` reads, in any language (none for an unknown id).
pub fn variables(id: &str) -> BTreeSet<String> {
    VARIABLES.get(id).cloned().unwrap_or_default()
}

/// Latin words a Chinese catalogue may write outside code: names of things that have no
/// other (the bot, services, protocols, units and the rating system).
pub const LATIN_NAMES: &[&str] =
    &["spellbridge", "NickServ", "IDENTIFY", "msg", "Matrix", "IRC", "UTC", "PNG"];

/// Messages that are what a player types, always shown as code (a usage line's
/// arguments, an example).
const TYPED: &[&str] = &["grammar-shown-", "grammar-example-"];

/// Each message of `language`'s catalogues that writes a Latin word outside code
/// (`backticked` runs), variables and [`LATIN_NAMES`], with the words: read from the
/// files themselves, so every variant of every message is seen, whatever code says it.
pub fn latin_outside_code(language: Language) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for area in areas() {
        let Ok(resource) = parser::parse(area.source(language)) else { continue };
        for entry in &resource.body {
            let Entry::Message(message) = entry else { continue };
            if TYPED.iter().any(|prefix| message.id.name.starts_with(prefix)) {
                continue;
            }
            let Some(pattern) = &message.value else { continue };
            let mut words = Vec::new();
            latin_in_pattern(pattern, &mut false, &mut words);
            if !words.is_empty() {
                found.push((message.id.name.to_owned(), words));
            }
        }
    }
    found
}

fn latin_in_pattern(pattern: &Pattern<&str>, code: &mut bool, words: &mut Vec<String>) {
    for element in &pattern.elements {
        match element {
            PatternElement::TextElement { value } => latin_in_text(value, code, words),
            PatternElement::Placeable { expression } => latin_in_expression(expression, code, words),
        }
    }
}

fn latin_in_expression(expression: &Expression<&str>, code: &mut bool, words: &mut Vec<String>) {
    match expression {
        Expression::Select { variants, .. } => {
            let mut after = *code;
            for variant in variants {
                let mut here = *code;
                latin_in_pattern(&variant.value, &mut here, words);
                if variant.default {
                    after = here;
                }
            }
            *code = after;
        }
        Expression::Inline(InlineExpression::StringLiteral { value }) => latin_in_text(value, code, words),
        Expression::Inline(InlineExpression::Placeable { expression }) => {
            latin_in_expression(expression, code, words);
        }
        Expression::Inline(_) => {}
    }
}

/// The Latin words of `text` outside code; `code` says whether it starts inside a
/// backticked run, and is left as it ends.
fn latin_in_text(text: &str, code: &mut bool, words: &mut Vec<String>) {
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            *code = !*code;
        }
        if *code {
            continue;
        }
        for token in part.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
            let has_letter = token.chars().any(|c| c.is_ascii_alphabetic());
            // A token with a digit is a number or an id (D-9, SHA-256, Glicko-2).
            let is_id = token.chars().any(|c| c.is_ascii_digit());
            if has_letter && !is_id && !LATIN_NAMES.contains(&token) {
                words.push(token.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogues_are_sound() {
        let problems = problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// Every message is named by some source file of the workspace (its id as a string
    /// literal), so none is dead.
    /// Issue 31: the duel's opening said `/msg <bot> !cast …` and a spell typed in a room
    /// was answered `/msg the bot !cast …`, on every network.
    #[test]
    fn no_message_stands_in_for_the_bot() {
        let found = stand_ins_for_the_bot();
        assert!(
            found.is_empty(),
            "say how to reach the bot as the reader's network does:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn every_message_is_used() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut sources = Vec::new();
        for dir in ["core/src", "daemon/src", "daemon/wasm/src", "adapters/src"] {
            collect(&root.join(dir), &mut sources);
        }
        let unused = unused(sources.iter().map(String::as_str));
        assert!(unused.is_empty(), "messages no code uses: {unused:?}");
    }

    fn collect(dir: &std::path::Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }

    /// No Chinese message writes English: every message of every area (the games', the
    /// lobby's, the grammar's, the daemon's notices, the pictures'), every variant,
    /// outside code, variables and a few names (issue 19).
    #[test]
    fn no_chinese_message_writes_english() {
        let found = latin_outside_code(Language::ZhCn);
        assert!(found.is_empty(), "English in zh-CN messages: {found:?}");
        // And the check finds it where it is.
        let english = latin_outside_code(Language::En);
        assert!(english.iter().any(|(id, _)| id == "grammar-missing"), "{english:?}");
    }

    #[test]
    fn latin_is_found_outside_code_and_variants_only() {
        let mut words = Vec::new();
        latin_in_text("第 1 回合 wins `!cast fire` D-9 ok", &mut false, &mut words);
        assert_eq!(words, ["wins", "ok"]);
        let mut code = false;
        let mut words = Vec::new();
        latin_in_text("`!{", &mut code, &mut words);
        latin_in_text("} word` 水", &mut code, &mut words);
        assert!(words.is_empty() && !code, "{words:?}");
    }

    #[test]
    fn variables_are_read_from_selectors_and_variants() {
        let source = "duel-x = { $n ->\n    [one] one `a` { $who }\n   *[other] { $n } `b`\n}\n";
        let entries = read(source).expect("reads");
        let (vars, ticks) = &entries.messages["duel-x"];
        assert_eq!(vars.iter().map(String::as_str).collect::<Vec<_>>(), ["n", "who"]);
        assert_eq!(ticks % 2, 0);
    }
}
