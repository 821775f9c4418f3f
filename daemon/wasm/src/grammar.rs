//! A component's commands as core's grammar. Core's [`Command`]s are `'static` (the
//! built-in games declare them as constants), so a component's are built once per load
//! and leaked: a few kilobytes per game loaded, never per table or per call.

use spellbridge_core::PlayerArgument;
use spellbridge_core::grammar::{Arg, Choice, Command, Kind, Query, Who};

use crate::bindings::spellbridge::game::types as wit;

/// The most commands, arguments, words per list and bytes per word a component may declare.
const MOST_COMMANDS: usize = 64;
const MOST_ARGS: usize = 8;
const MOST_WORDS: usize = 64;
const LONGEST: usize = 400;

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

fn word(text: &str, what: &str) -> Result<&'static str, String> {
    if text.len() > LONGEST {
        return Err(format!("{what} is {} bytes long; at most {LONGEST}", text.len()));
    }
    Ok(leak(text))
}

/// True for a word a player can type as a command or alias: no spaces, no control or
/// format characters, no prefix character.
fn typable(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.chars().all(|c| !c.is_whitespace() && !c.is_control() && c != '!' && !is_format(c))
}

/// Invisible and direction-changing characters (Unicode's format class, by range).
fn is_format(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

/// The host's own command at every component's table: a game master takes moves again
/// at a table paused when its game failed ([`crate::WasmTable`]).
pub const RESUME: Command =
    Command::new("resume", "Game masters: lets a table paused when its game failed take moves again.")
        .aliases(&["继续"])
        .who(Who::GameMasterOrOperator)
        .example("resume");

/// The help id of [`RESUME`], in the host's catalogue (`locales/*/component.ftl`).
pub const RESUME_HELP: &str = "component-help-resume";

/// The host's other command at every component's table: a player's private view (the
/// component's `private-view`), a question answered to the asker alone, privately.
pub const VIEW: Command = Command::new("view", "Shows you, privately, what you may see of this table.")
    .aliases(&["查看"])
    .query(Query::Yes)
    .example("view");

/// The help id of [`VIEW`], in the host's catalogue.
pub const VIEW_HELP: &str = "component-help-view";

/// Each command's name and the id of its help in the game's texts.
pub type HelpIds = Vec<(String, String)>;

/// The component's commands, checked and made `'static`, with each command's help id.
pub fn commands(declared: &[wit::Command]) -> Result<(&'static [Command], HelpIds), String> {
    if declared.is_empty() || declared.len() > MOST_COMMANDS {
        return Err(format!("it declares {} commands; a game has 1 to {MOST_COMMANDS}", declared.len()));
    }
    let mut commands = Vec::with_capacity(declared.len());
    let mut help = Vec::new();
    for command in declared {
        for name in std::iter::once(&command.name).chain(&command.aliases) {
            if let Some(host) = [RESUME, VIEW].iter().find(|host| host.is_called(&name.to_lowercase())) {
                return Err(format!(
                    "command `{}` is called `{name}`, a word of the host's own `{}` at every table: name it otherwise",
                    command.name, host.name
                ));
            }
            if !typable(name) {
                return Err(format!(
                    "command `{}` has a name or alias players cannot type: {name:?}",
                    command.name
                ));
            }
        }
        if command.args.len() > MOST_ARGS || command.aliases.len() > MOST_WORDS {
            return Err(format!("command `{}` declares too many arguments or aliases", command.name));
        }
        let args: Vec<Arg> = command.args.iter().map(arg).collect::<Result<_, _>>()?;
        let aliases: Vec<&'static str> = command.aliases.iter().map(|a| leak(&a.to_lowercase())).collect();
        let who = match command.who {
            wit::Who::Anyone => Who::Anyone,
            wit::Who::GameMaster => Who::GameMaster,
            wit::Who::GameMasterOrOperator => Who::GameMasterOrOperator,
        };
        let mut made = Command::new(leak(&command.name.to_lowercase()), word(&command.summary, "a summary")?)
            .aliases(Box::leak(aliases.into_boxed_slice()))
            .args(Box::leak(args.into_boxed_slice()), word(&command.needs, "a `needs`")?)
            .who(who);
        if !command.example.is_empty() {
            made = made.example(word(&command.example, "an example")?);
        }
        help.push((made.name.to_owned(), command.help.clone()));
        commands.push(made);
    }
    commands.push(RESUME);
    commands.push(VIEW);
    Ok((Box::leak(commands.into_boxed_slice()), help))
}

fn arg(declared: &wit::Arg) -> Result<Arg, String> {
    let kind = match &declared.kind {
        wit::ArgKind::Number => Kind::Number,
        wit::ArgKind::Player => Kind::Player(PlayerArgument::Known),
        wit::ArgKind::Word => Kind::Word,
        wit::ArgKind::Choice(choices) => {
            if choices.is_empty() || choices.len() > MOST_WORDS {
                return Err(format!(
                    "argument {} has {} choices; 1 to {MOST_WORDS}",
                    declared.shown,
                    choices.len()
                ));
            }
            let mut words = Vec::with_capacity(choices.len());
            for names in choices {
                if names.is_empty() || !names.iter().all(|n| typable(n)) {
                    return Err(format!("argument {} has a choice players cannot type", declared.shown));
                }
                let names: Vec<&'static str> = names.iter().map(|n| leak(&n.to_lowercase())).collect();
                words.push(&*Box::leak(names.into_boxed_slice()));
            }
            let list = leak(&words.iter().map(|w| w[0]).collect::<Vec<_>>().join(", "));
            let choice =
                Box::leak(Box::new(Choice { noun: None, list, words: Box::leak(words.into_boxed_slice()) }));
            Kind::Choice(choice)
        }
    };
    let made = Arg::new(kind, word(&declared.shown, "an argument's usage")?);
    Ok(if declared.optional { made.optional() } else { made })
}
