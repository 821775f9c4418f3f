//! Line splitting: a rendered message (mIRC codes, possibly several lines) becomes the
//! PRIVMSG payloads that fit the 512-byte IRC line limit byte-exactly.
//!
//! The budget counts the whole line as the server relays it to the other clients:
//! `:{nick}!{user}@{host} PRIVMSG {target} :{payload}\r\n`. The caller passes the length
//! of its own `:nick!user@host ` prefix (it learns its user and host from the server);
//! IRCv3 message tags have a limit of their own and do not count (RFC 1459 and the
//! message-tags spec), so the default limit is 512 and [`Splitter::with_line_limit`]
//! changes it.
//!
//! Rules, in order:
//! - each source line (`\n` or `\r`) starts a new IRC line; lines with no visible text
//!   are dropped; control characters other than the formatting codes are removed and a
//!   tab becomes a space, so no payload can carry `\r`, `\n` or NUL;
//! - a list's entries ([`ENTRY`]-marked separators) are kept whole: an entry that does
//!   not fit after what the line holds starts the next line, its separator dropped;
//! - lines break at spaces (the spaces at a break are dropped); a word longer than a
//!   whole line is cut between characters, never inside a UTF-8 character or a
//!   formatting code;
//! - a formatting run open at the end of a line is closed there (`\x0F`) and re-opened
//!   at the start of the next one, so every line renders on its own; runs also carry
//!   across source lines of one message;
//! - a CTCP message ([`Splitter::with_ctcp`], e.g. `ACTION` for `/me`) wraps every line
//!   in `\x01ACTION …\x01` on its own, and the wrapper counts against the budget.

use super::format::{FormatState, Piece, lex};

/// Marks a list's separator in a rendered message (`ENTRY · ENTRY`, from
/// [`Segment::Separator`](spellbridge_core::text::Segment::Separator)): a long message is
/// cut at separators before it is cut inside an entry.
pub const ENTRY: char = '\x1C';

/// The IRC line limit in bytes, `\r\n` included (RFC 1459 §2.3).
pub const IRC_LINE_LIMIT: usize = 512;

/// The fewest payload bytes a line must leave: enough to re-open every formatting run
/// (at most 22 bytes), write the longest formatting code or character (14 bytes) and
/// close the runs (1 byte), with room to spare.
pub const MIN_PAYLOAD: usize = 64;

/// Why a message cannot be split for a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// The prefix, the command, the target and any CTCP wrapper leave too little of a
    /// line for text.
    #[error(
        "a {line_limit}-byte line with a {prefix_len}-byte prefix and target {target:?} \
         leaves {budget} bytes for text; at least {MIN_PAYLOAD} are needed"
    )]
    NoRoom {
        /// The target the message was for.
        target: String,
        /// The length of the sender prefix the caller passed.
        prefix_len: usize,
        /// The line limit in force.
        line_limit: usize,
        /// The payload bytes left.
        budget: usize,
    },
    /// The target is empty or contains a space, a comma or a control character, so it
    /// would not be read as one target.
    #[error("{target:?} is not a valid message target")]
    BadTarget {
        /// The refused target.
        target: String,
    },
}

/// Splits messages for one sender: the length of its prefix, the line limit, the
/// command (PRIVMSG or NOTICE) and the CTCP command each line is wrapped in, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splitter {
    prefix_len: usize,
    line_limit: usize,
    command: &'static str,
    ctcp: Option<&'static str>,
}

impl Splitter {
    /// A splitter for PRIVMSG lines of [`IRC_LINE_LIMIT`] bytes from a sender whose
    /// relayed prefix `:nick!user@host ` (trailing space included) is `prefix_len` bytes.
    pub fn new(prefix_len: usize) -> Self {
        Self { prefix_len, line_limit: IRC_LINE_LIMIT, command: "PRIVMSG", ctcp: None }
    }

    /// The same splitter with another line limit (`\r\n` included).
    pub fn with_line_limit(self, line_limit: usize) -> Self {
        Self { line_limit, ..self }
    }

    /// The same splitter for another command, e.g. `NOTICE`.
    pub fn with_command(self, command: &'static str) -> Self {
        Self { command, ..self }
    }

    /// The same splitter for a CTCP message: every line becomes `\x01{ctcp} {text}\x01`
    /// (`ACTION` for `/me`), each split line wrapped on its own.
    pub fn with_ctcp(self, ctcp: &'static str) -> Self {
        Self { ctcp: Some(ctcp), ..self }
    }

    /// The bytes the CTCP wrapper adds to a line: `\x01`, the command, a space, `\x01`.
    fn wrapper_len(&self) -> usize {
        self.ctcp.map_or(0, |ctcp| ctcp.len() + 3)
    }

    /// The payload bytes a line to `target` can carry: the limit less the prefix,
    /// `{command} {target} :` and `\r\n` (zero when they do not fit at all). A CTCP
    /// wrapper is part of the payload.
    pub fn payload_budget(&self, target: &str) -> usize {
        let overhead = self.prefix_len + self.command.len() + 1 + target.len() + 2 + 2;
        self.line_limit.saturating_sub(overhead)
    }

    /// The bytes of text a line to `target` can carry: the payload less the CTCP wrapper.
    pub fn text_budget(&self, target: &str) -> usize {
        self.payload_budget(target).saturating_sub(self.wrapper_len())
    }

    /// Splits a rendered message into payloads, in order; see the module doc for the
    /// rules. An empty message gives no payloads.
    pub fn split(&self, target: &str, text: &str) -> Result<Vec<String>, SplitError> {
        let bad = |c: char| c == ' ' || c == ',' || c.is_control();
        if target.is_empty() || target.chars().any(bad) {
            return Err(SplitError::BadTarget { target: target.to_owned() });
        }
        let budget = self.text_budget(target);
        if budget < MIN_PAYLOAD {
            return Err(SplitError::NoRoom {
                target: target.to_owned(),
                prefix_len: self.prefix_len,
                line_limit: self.line_limit,
                budget,
            });
        }
        let lines = match one_line(text, budget) {
            Some(line) => line.into_iter().collect(),
            None => split_lines(text, budget),
        };
        Ok(match self.ctcp {
            Some(ctcp) => lines.into_iter().map(|line| format!("\x01{ctcp} {line}\x01")).collect(),
            None => lines,
        })
    }
}

/// The payloads of a message that is one line already: no line break, no control
/// character but formatting codes, and short enough for `budget` with its runs closed.
/// It is then what [`split_lines`] would make of it, found without cutting it into words:
/// the line without its trailing spaces, `\x0F` after it if a run is left open, or no
/// line when nothing in it is visible. `None` when the message needs the general rules.
fn one_line(text: &str, budget: usize) -> Option<Option<String>> {
    let formatting = |b: u8| matches!(b, 0x02 | 0x03 | 0x04 | 0x0F | 0x11 | 0x16 | 0x1D | 0x1E | 0x1F);
    if text.len() > budget
        || text.bytes().any(|b| b < 0x20 && !formatting(b))
        || has_control_above_ascii(text)
    {
        return None;
    }
    let line = text.trim_end_matches(' ');
    let mut state = FormatState::default();
    let mut visible = false;
    if line.bytes().any(formatting) {
        for piece in lex(line) {
            match piece {
                Piece::Code { control, .. } => state.apply(control),
                Piece::Char(c) => visible |= c != ' ',
            }
        }
    } else {
        visible = !line.is_empty();
    }
    if line.len() + close_len(&state) > budget {
        return None;
    }
    if !visible {
        return Some(None);
    }
    let mut out = String::with_capacity(line.len() + 1);
    out.push_str(line);
    if !state.is_plain() {
        out.push('\x0F');
    }
    Some(Some(out))
}

/// True when `text` has DEL or a C1 control character.
fn has_control_above_ascii(text: &str) -> bool {
    text.bytes().any(|b| b == 0x7F || b == 0xC2) && text.chars().any(|c| c >= '\x7F' && c.is_control())
}

/// The payloads of a rendered message by the module's rules, line by line.
fn split_lines(text: &str, budget: usize) -> Vec<String> {
    let mut lines = Lines::new(budget);
    for source in text.split(['\n', '\r']) {
        lines.start();
        // A list's entries, between separators (`ENTRY … ENTRY`): an entry goes whole on
        // this line with its separator, or starts the next line without it.
        let mut separator = String::new();
        for (i, part) in source.split(ENTRY).enumerate() {
            if i % 2 == 1 {
                separator = sanitize(part);
                continue;
            }
            let part = sanitize(part);
            if i == 0 {
                lines.push_words(&part);
                continue;
            }
            let joined = format!("{separator}{part}");
            if lines.visible && !lines.fits_text(&joined) {
                lines.flush();
                lines.push_words(part.trim_start_matches(' '));
            } else {
                lines.push_words(&joined);
            }
        }
        lines.flush();
    }
    lines.out
}

/// Splits a rendered PRIVMSG for a sender whose relayed prefix is `prefix_len` bytes, to
/// the 512-byte limit: `Splitter::new(prefix_len).split(target, text)`.
pub fn split(prefix_len: usize, target: &str, text: &str) -> Result<Vec<String>, SplitError> {
    Splitter::new(prefix_len).split(target, text)
}

/// One source line with its control characters (other than formatting codes) removed and
/// tabs as spaces. The formatting meaning of the line is that of this text.
fn sanitize(line: &str) -> String {
    let mut clean = String::with_capacity(line.len());
    for piece in lex(line) {
        match piece {
            Piece::Char('\t') => clean.push(' '),
            Piece::Char(c) if c.is_control() => {}
            Piece::Char(c) => clean.push(c),
            Piece::Code { raw, .. } => clean.push_str(raw),
        }
    }
    clean
}

/// The lines being built, and the formatting state at the end of what was pushed.
struct Lines {
    budget: usize,
    out: Vec<String>,
    buf: String,
    state: FormatState,
    /// The line holds visible text (not only codes and spaces).
    visible: bool,
    /// The line so far is a re-opened state ending with a colour code.
    after_colour_code: bool,
}

impl Lines {
    fn new(budget: usize) -> Self {
        Self {
            budget,
            out: Vec::new(),
            buf: String::new(),
            state: FormatState::default(),
            visible: false,
            after_colour_code: false,
        }
    }

    /// Pushes the words of `text` (a sanitized piece of a source line), breaking lines at
    /// spaces as needed.
    fn push_words(&mut self, text: &str) {
        let mut spaces = 0;
        let mut word = Vec::new();
        for piece in lex(text) {
            if piece == Piece::Char(' ') {
                if !word.is_empty() {
                    self.push_word(spaces, &word);
                    word.clear();
                    spaces = 0;
                }
                spaces += 1;
            } else {
                word.push(piece);
            }
        }
        if !word.is_empty() {
            self.push_word(spaces, &word);
        }
    }

    /// True when all of `text` fits on this line, after what it holds.
    fn fits_text(&self, text: &str) -> bool {
        let pieces: Vec<Piece<'_>> = lex(text).collect();
        let (cost, after) = word_cost(0, &pieces, self.state, self.after_colour_code);
        self.fits(cost, &after)
    }

    /// Starts a line by re-opening the runs open at the end of the previous one.
    fn start(&mut self) {
        self.buf = self.state.reopen();
        self.visible = false;
        self.after_colour_code = self.state.reopen_ends_with_colour();
    }

    /// Ends the line: closes open runs and keeps it if it shows anything; starts the next.
    fn flush(&mut self) {
        if self.visible {
            let mut line = std::mem::take(&mut self.buf);
            if !self.state.is_plain() {
                line.push('\x0F');
            }
            debug_assert!(line.len() <= self.budget);
            self.out.push(line);
        }
        self.start();
    }

    /// The bytes `piece` takes if pushed now: a comma right after a re-opened colour
    /// code is separated from it by an empty bold run, or it would read as a background.
    fn cost(&self, spaces: usize, piece: &Piece<'_>) -> usize {
        piece_cost(spaces, piece, self.after_colour_code)
    }

    /// True when `extra` more bytes, ending in `state`, still leave room to close runs.
    fn fits(&self, extra: usize, state: &FormatState) -> bool {
        self.buf.len() + extra + close_len(state) <= self.budget
    }

    fn push(&mut self, spaces: usize, piece: &Piece<'_>) {
        if self.cost(spaces, piece) > spaces + piece.len() {
            self.buf.push_str("\x02\x02");
        }
        self.buf.extend(std::iter::repeat_n(' ', spaces));
        match piece {
            Piece::Char(c) => {
                self.buf.push(*c);
                self.visible |= *c != ' ';
            }
            Piece::Code { raw, control } => {
                self.buf.push_str(raw);
                self.state.apply(*control);
            }
        }
        self.after_colour_code = false;
    }

    fn push_whole(&mut self, spaces: usize, word: &[Piece<'_>]) {
        for (i, piece) in word.iter().enumerate() {
            self.push(if i == 0 { spaces } else { 0 }, piece);
        }
    }

    /// Adds a word after `spaces` spaces: on this line if it fits, else at the start of
    /// the next if it fits there; a word longer than a whole line is cut between pieces,
    /// starting on this line.
    fn push_word(&mut self, spaces: usize, word: &[Piece<'_>]) {
        let (here, after) = word_cost(spaces, word, self.state, self.after_colour_code);
        if self.fits(here, &after) {
            self.push_whole(spaces, word);
            return;
        }
        if self.visible {
            let reopen = self.state.reopen().len();
            let (fresh, _) = word_cost(0, word, self.state, self.state.reopen_ends_with_colour());
            if reopen + fresh + close_len(&after) <= self.budget {
                self.flush();
                self.push_whole(0, word);
                return;
            }
        }
        let mut spaces = spaces;
        let mut i = 0;
        while i < word.len() {
            let mut end = cluster_end(word, i);
            let fresh = word_cost(0, &word[i..end], self.state, true).0;
            if self.state.reopen().len() + fresh + 1 > self.budget {
                end = i + 1;
            }
            self.push_unit(spaces, &word[i..end]);
            spaces = 0;
            i = end;
        }
    }

    /// Pushes pieces that are never cut apart (one piece, or a character with the marks
    /// that extend it), on a new line if they do not fit on this one.
    fn push_unit(&mut self, spaces: usize, unit: &[Piece<'_>]) {
        let (cost, after) = word_cost(spaces, unit, self.state, self.after_colour_code);
        let mut spaces = spaces;
        if !self.fits(cost, &after) {
            if self.visible {
                self.flush();
            }
            // Spaces that do not fit before the word are dropped, like those at a break.
            spaces = 0;
            let (cost, _) = word_cost(0, unit, self.state, self.after_colour_code);
            if !self.fits(cost, &after) {
                // Only codes on this line: drop it, keeping their state.
                self.flush();
            }
        }
        debug_assert!(self.fits(word_cost(spaces, unit, self.state, self.after_colour_code).0, &after));
        self.push_whole(spaces, unit);
    }
}

/// The end of the unit starting at `start`: a formatting code alone, or a character with
/// the combining marks, variation selectors, skin tones and zero-width-joined characters
/// that follow it, so an emoji sequence or an accented letter is not cut in two when
/// it fits on one line.
fn cluster_end(word: &[Piece<'_>], start: usize) -> usize {
    let mut end = start + 1;
    if !matches!(word.get(start), Some(Piece::Char(_))) {
        return end;
    }
    while let Some(Piece::Char(c)) = word.get(end) {
        let after_joiner = matches!(word.get(end - 1), Some(Piece::Char('\u{200D}')));
        if !(after_joiner || extends(*c)) {
            break;
        }
        end += 1;
    }
    end
}

/// Characters that extend the one before them.
fn extends(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{200D}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FE20}'..='\u{FE2F}'
        | '\u{1F3FB}'..='\u{1F3FF}'
        | '\u{E0020}'..='\u{E007F}')
}

/// The bytes a piece takes after `spaces` spaces; see [`Lines::cost`].
fn piece_cost(spaces: usize, piece: &Piece<'_>, after_colour_code: bool) -> usize {
    let guard = spaces == 0 && after_colour_code && *piece == Piece::Char(',');
    spaces + piece.len() + if guard { 2 } else { 0 }
}

/// The bytes a whole word takes after `spaces` spaces, and the state after it.
fn word_cost(
    spaces: usize,
    word: &[Piece<'_>],
    mut state: FormatState,
    after_colour_code: bool,
) -> (usize, FormatState) {
    let mut bytes = 0;
    for (i, piece) in word.iter().enumerate() {
        bytes += if i == 0 { piece_cost(spaces, piece, after_colour_code) } else { piece.len() };
        if let Piece::Code { control, .. } = piece {
            state.apply(*control);
        }
    }
    (bytes, state)
}

/// The bytes needed to close the runs open in `state`: one `\x0F`, or none.
fn close_len(state: &FormatState) -> usize {
    usize::from(!state.is_plain())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::format::strip;
    use super::*;

    /// `:nick!user@host ` for a typical bot.
    const PREFIX: &str = ":spellbot!~bot@127.0.0.1 ";

    fn full_line(target: &str, payload: &str) -> String {
        format!("{PREFIX}PRIVMSG {target} :{payload}\r\n")
    }

    fn split_ok(target: &str, text: &str) -> Vec<String> {
        match split(PREFIX.len(), target, text) {
            Ok(lines) => lines,
            Err(e) => panic!("split failed: {e}"),
        }
    }

    /// Each visible character with the formatting in force, reading each line from the
    /// plain state; spaces are left out.
    fn styled_chars<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<(char, FormatState)> {
        let mut out = Vec::new();
        for line in lines {
            let mut state = FormatState::default();
            for piece in lex(line) {
                match piece {
                    Piece::Code { control, .. } => state.apply(control),
                    Piece::Char(' ') => {}
                    Piece::Char(c) => out.push((c, state)),
                }
            }
        }
        out
    }

    #[test]
    fn budget_counts_prefix_command_target_and_crlf() {
        let splitter = Splitter::new(PREFIX.len());
        let overhead = full_line("#magic", "").len();
        assert_eq!(splitter.payload_budget("#magic"), 512 - overhead);
        let notice = splitter.with_command("NOTICE");
        assert_eq!(notice.payload_budget("#magic"), 512 - overhead + 1);
        assert_eq!(splitter.with_line_limit(8191).payload_budget("#magic"), 8191 - overhead);
    }

    #[test]
    fn a_line_of_exactly_the_limit_stays_whole_and_one_more_byte_splits() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#magic");
        let exact = format!("{} {}", "a".repeat(100), "b".repeat(budget - 101));
        let lines = split_ok("#magic", &exact);
        assert_eq!(lines, vec![exact.clone()]);
        assert_eq!(full_line("#magic", &lines[0]).len(), 512);

        let over = format!("{exact}c");
        let lines = split_ok("#magic", &over);
        assert_eq!(lines, vec!["a".repeat(100), format!("{}c", "b".repeat(budget - 101))]);
    }

    #[test]
    fn words_fill_each_line_to_the_byte() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("bob");
        // Words of 9 bytes plus a space: a line holds exactly budget bytes only if the
        // last word ends there.
        let text = vec!["abcdefghi"; 200].join(" ");
        let lines = split_ok("bob", &text);
        for line in &lines {
            assert!(full_line("bob", line).len() <= 512);
            assert!(line.len() + 10 > budget || line == lines.last().unwrap_or(line));
            assert!(!line.starts_with(' ') && !line.ends_with(' '));
        }
        assert_eq!(lines.join(" "), text);
    }

    /// The entries of a list, as the plain text between its separators.
    fn entries(text: &spellbridge_core::RichText) -> Vec<String> {
        let mut out = vec![String::new()];
        for segment in text.segments() {
            match segment {
                spellbridge_core::text::Segment::Separator(_) => out.push(String::new()),
                other => {
                    let one = spellbridge_core::RichText::new().push(other.clone());
                    let shown =
                        strip(&super::super::format::render(&one, super::super::format::CodeStyle::Plain));
                    if let Some(entry) = out.last_mut() {
                        entry.push_str(&shown);
                    }
                }
            }
        }
        out
    }

    /// Issue 31: `!wizards` was cut inside an entry (`…🕳4, favours` / `⚡Thunder +2…`).
    /// A list is cut between entries: each entry is on one line, whole.
    #[test]
    fn a_list_is_cut_between_entries_never_inside_one() {
        use spellbridge_core::Language;
        use spellbridge_core::games::duel::{Wizards, render::wizard_list};
        for language in Language::ALL {
            let list = wizard_list(language, &Wizards::default());
            let rendered = super::super::format::render(&list, super::super::format::CodeStyle::Bold);
            for nick in ["spellbot", "a-rather-long-bot-nick-on-a-network"] {
                let prefix = format!(":{nick}!~bot@some.host.example.org ");
                let lines = split(prefix.len(), "#magic", &rendered).expect("splits");
                assert!(lines.len() > 1, "the list is longer than a line");
                let shown: Vec<String> = lines.iter().map(|l| strip(l)).collect();
                for entry in entries(&list) {
                    assert!(
                        shown.iter().any(|line| line.contains(entry.trim())),
                        "{entry:?} is cut: {shown:#?}"
                    );
                }
                for line in &lines {
                    assert!(prefix.len() + "PRIVMSG #magic :".len() + line.len() + 2 <= 512);
                    assert!(!line.contains(ENTRY), "{line:?}");
                    assert!(!strip(line).starts_with(" ·") && !strip(line).ends_with('·'), "{line:?}");
                }
            }
        }
        // An entry longer than a whole line is still cut at spaces, after the entries
        // before it.
        let long = "word ".repeat(150);
        let text = format!("short{ENTRY} · {ENTRY}{long}{ENTRY} · {ENTRY}last");
        let lines = split_ok("#magic", &text);
        assert_eq!(lines[0], "short");
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines.last().is_some_and(|l| l.ends_with(" · last") || l == "last"), "{lines:?}");
    }

    #[test]
    fn cjk_and_emoji_are_never_cut_inside_a_character() {
        let text = "中文字".repeat(100) + " " + "🧙‍♀️🔥".repeat(60).as_str();
        let lines = split_ok("#magic", &text);
        assert!(lines.len() > 2);
        for line in &lines {
            assert!(full_line("#magic", line).len() <= 512);
        }
        assert_eq!(lines.concat().replace(' ', ""), text.replace(' ', ""));
        // The zero-width-joined wizard and her variation selector stay together.
        for line in &lines[1..] {
            assert!(line.starts_with("🧙\u{200d}♀\u{fe0f}🔥") || line.starts_with('中'), "{line:?}");
        }
    }

    /// Issue 19: a Duel told in Chinese (three bytes a character, element colours and
    /// bold names), well past one line, is split at the 512-byte limit without cutting a
    /// character or losing a format.
    #[test]
    fn a_chinese_duel_reply_splits_at_the_limit_keeping_characters_and_formats() {
        use spellbridge_core::locale::{self, Args};
        use spellbridge_core::{Language, PlayerId, RichText};
        let zh = Language::ZhCn;
        let mut text = RichText::new();
        for step in 0..12 {
            let check = locale::rich(zh, "duel-check-failed", &Args::new().num("roll", 2).num("need", 4));
            let placed = RichText::new()
                .name(&PlayerId::new("alice"))
                .text(" ")
                .coloured("🔥火", spellbridge_core::text::Hue::Red)
                .append(check);
            let args = Args::new().num("round", 3).num("step", step).rich("placed", placed);
            text = text.append(locale::rich(zh, "duel-step", &args)).text(" ");
        }
        let rendered = super::super::format::render(&text, super::super::format::CodeStyle::Bold);
        assert!(rendered.len() > 3 * 512, "{}", rendered.len());
        let lines = split_ok("#magic", &rendered);
        assert!(lines.len() > 3);
        for line in &lines {
            assert!(full_line("#magic", line).len() <= 512, "{line:?}");
        }
        assert_eq!(styled_chars(lines.iter().map(String::as_str)), styled_chars([rendered.as_str()]));
    }

    /// Issue 19: a Chinese reply (no spaces to break at, three bytes a character, bold
    /// runs) at the 512-byte limit: every line is as full as a whole character allows,
    /// never cut inside one, and the lines give back the reply, whatever ASCII comes
    /// before the first character (`alice: `, a shorter or longer nick).
    #[test]
    fn a_chinese_reply_at_the_limit_keeps_every_character_whole() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#magic");
        let sentence = "魔法师向对手发起决斗！元素池中的水、火、雷、风、土与虚无都在等待下一回合。";
        for nick in ["a: ", "ab: ", "alice: "] {
            let text = format!("{nick}{}", sentence.repeat(12));
            let lines = split_ok("#magic", &text);
            assert!(lines.len() > 2, "{lines:?}");
            for line in &lines {
                assert!(full_line("#magic", line).len() <= 512, "{line:?}");
            }
            for line in &lines[..lines.len() - 1] {
                assert!(line.len() + 3 > budget, "a line left room for another character: {line:?}");
            }
            assert_eq!(lines.concat(), text);
        }
        // Exactly the budget in characters stays one line; one character more is two.
        let whole = "中".repeat(budget / 3);
        assert_eq!(split_ok("#magic", &whole), vec![whole.clone()]);
        let over = format!("{whole}文");
        assert_eq!(split_ok("#magic", &over), vec![whole, "文".to_owned()]);
        // Bold runs (the code of a command) are closed and reopened at a cut, and every
        // character keeps its style.
        let styled = format!("输入 \x02!施法 迸发 火 协调\x02 ：{}", "决斗".repeat(200));
        let lines = split_ok("#magic", &styled);
        for line in &lines {
            assert!(full_line("#magic", line).len() <= 512);
        }
        assert_eq!(styled_chars(lines.iter().map(String::as_str)), styled_chars([styled.as_str()]));
    }

    #[test]
    fn a_combining_mark_stays_with_its_letter() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#m");
        let text = format!("{}e\u{301}x", "a".repeat(budget - 2));
        let lines = split_ok("#m", &text);
        assert_eq!(lines, vec!["a".repeat(budget - 2), "e\u{301}x".to_owned()]);
    }

    #[test]
    fn a_long_word_is_cut_and_the_rest_continues() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#m");
        let long = "x".repeat(budget * 2 + 5);
        let text = format!("start {long} end");
        let lines = split_ok("#m", &text);
        assert_eq!(
            lines,
            vec![
                format!("start {}", "x".repeat(budget - 6)),
                "x".repeat(budget),
                format!("{} end", "x".repeat(11)),
            ]
        );
    }

    #[test]
    fn an_open_run_is_closed_and_reopened_at_a_cut() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#m");
        let words = vec!["fire"; budget / 5 + 10].join(" ");
        let text = format!("\x0304,01\x02{words}\x02\x03 done");
        let lines = split_ok("#m", &text);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("\x0304,01\x02fire"));
        assert!(lines[0].ends_with("fire\x0F"));
        assert!(lines[1].starts_with("\x0304,01\x02fire"));
        assert!(lines[1].ends_with("\x02\x03 done"));
        assert!(lines.iter().all(|l| l.len() <= budget));
        assert_eq!(styled_chars(lines.iter().map(String::as_str)), styled_chars([text.as_str()]));
    }

    #[test]
    fn a_comma_after_a_reopened_colour_is_guarded() {
        let budget = Splitter::new(PREFIX.len()).payload_budget("#m");
        let text = format!("\x0304{},5\x03", "y".repeat(budget - 4));
        let lines = split_ok("#m", &text);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("\x0304\x02\x02,5"), "{:?}", lines[1]);
        assert_eq!(strip(&lines[1]), ",5");
        assert_eq!(styled_chars(lines.iter().map(String::as_str)), styled_chars([text.as_str()]));
    }

    #[test]
    fn source_lines_keep_order_and_empty_ones_are_dropped() {
        let text = "first\n\n  \nsecond\r\n\x02\x02\nthird\n";
        assert_eq!(split_ok("#m", text), vec!["first", "second", "third"]);
    }

    #[test]
    fn a_run_carries_across_source_lines() {
        let lines = split_ok("#m", "\x02one\ntwo\x02 three");
        assert_eq!(lines, vec!["\x02one\x0F", "\x02two\x02 three"]);
    }

    #[test]
    fn control_characters_never_reach_a_payload() {
        let lines = split_ok("#m", "a\x00b\x01c\td\x7fe\u{85}f");
        assert_eq!(lines, vec!["abc def"]);
    }

    #[test]
    fn leading_spaces_of_a_source_line_are_kept() {
        assert_eq!(split_ok("#m", "  indented"), vec!["  indented"]);
    }

    #[test]
    fn bad_targets_and_tiny_budgets_are_refused() {
        for target in ["", "#a b", "a,b", "#a\r\nQUIT", "\x00"] {
            assert!(matches!(split(0, target, "hi"), Err(SplitError::BadTarget { .. })), "{target:?}");
        }
        let err = split(500, "#magic", "hi");
        assert!(matches!(err, Err(SplitError::NoRoom { budget: 0, .. })), "{err:?}");
        let tiny = Splitter::new(0).with_line_limit(70).split("#m", "hi");
        assert!(matches!(tiny, Err(SplitError::NoRoom { .. })), "{tiny:?}");
    }

    #[test]
    fn a_ctcp_action_wraps_every_line_and_counts_the_wrapper() {
        let splitter = Splitter::new(PREFIX.len()).with_ctcp("ACTION");
        let budget = splitter.payload_budget("#m");
        assert_eq!(splitter.text_budget("#m"), budget - "\x01ACTION \x01".len());
        assert_eq!(splitter.split("#m", "waves"), Ok(vec!["\x01ACTION waves\x01".to_owned()]));

        let text = format!("\x02{}\x02 end", vec!["casts"; budget / 3].join(" "));
        let lines = splitter.split("#m", &text).unwrap_or_else(|e| panic!("{e}"));
        assert!(lines.len() >= 3, "{lines:?}");
        let mut inner = Vec::new();
        for line in &lines {
            assert!(full_line("#m", line).len() <= 512, "{} bytes", full_line("#m", line).len());
            let text = line.strip_prefix("\x01ACTION ").and_then(|l| l.strip_suffix('\x01'));
            let Some(text) = text else { panic!("not wrapped: {line:?}") };
            assert!(!text.contains('\x01'));
            inner.push(text.to_owned());
        }
        // The lines are filled: one more word would not fit with the wrapper.
        assert!(full_line("#m", &lines[0]).len() + " casts".len() > 512);
        assert_eq!(styled_chars(inner.iter().map(String::as_str)), styled_chars([text.as_str()]));
        assert!(splitter.split("#m", " \n ").is_ok_and(|lines| lines.is_empty()));
    }

    #[test]
    fn an_empty_message_gives_no_lines() {
        assert!(split_ok("#m", "").is_empty());
        assert!(split_ok("#m", " \n \x0304\x03").is_empty());
    }

    fn message() -> impl Strategy<Value = String> {
        "[a-z0-9, \\n\\t\\x01\\x02\\x03\\x04\\x0F\\x1D\\x16A-F\u{e9}\u{4e2d}\u{1F9D9}]{0,700}"
    }

    /// A word of at most 12 characters, some of them 2 or 3 bytes long.
    const WORD: &str = "[a-z\u{e9}\u{4e2d}]{1,12}";

    fn sanitized_lines(text: &str) -> Vec<String> {
        text.split(['\n', '\r']).map(sanitize).collect()
    }

    /// The one-line path gives what the general rules give, on hostile lines too: IRC
    /// codes, CTCP `\x01`, `\r\n`, DEL and C1 controls, a word longer than a line,
    /// Chinese, a middle dot (`\xC2\xB7`, not a control), placeholder-range characters.
    #[test]
    fn the_one_line_path_agrees_with_the_general_rules_on_hostile_lines() {
        let budget = Splitter::new(PREFIX.len()).text_budget("#m");
        let long = "x".repeat(budget + 3);
        let cases = [
            "plain words",
            "  leading and trailing  ",
            "\x02bold\x02 · \x0304,05colour\x03 \x0304,",
            "\x02open run",
            "\x0304",
            "   ",
            "",
            "\x01ACTION waves\x01",
            "line\r\nQUIT",
            "tab\there",
            "del\x7f and c1\u{85} and nbsp\u{a0}",
            "中文字 魔法师 \u{F0000}\u{F0001} \u{FFFFD}",
            long.as_str(),
        ];
        for text in cases {
            let fast = one_line(text, budget);
            if let Some(fast) = fast {
                assert_eq!(fast.into_iter().collect::<Vec<_>>(), split_lines(text, budget), "{text:?}");
            }
            assert_eq!(split_ok("#m", text), split_lines(text, budget), "{text:?}");
        }
        assert!(one_line("\x01ACTION\x01", budget).is_none());
        assert!(one_line("a\r\nb", budget).is_none());
        assert!(one_line("c1\u{85}", budget).is_none());
        assert!(one_line(&long, budget).is_none());
        assert_eq!(one_line("a ·\u{F0000}", budget), Some(Some("a ·\u{F0000}".to_owned())));
        assert_eq!(one_line("\x02a  ", budget), Some(Some("\x02a\x0F".to_owned())));
        assert_eq!(one_line("\x0304  ", budget), Some(None));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn one_line_is_what_the_general_rules_make(
            text in "[a-z0-9, \\n\\r\\t\\x01\\x02\\x03\\x04\\x0F\\x1D\\x7FA-F\u{85}\u{b7}\u{e9}\u{4e2d}\u{F0000}]{0,120}",
            budget in MIN_PAYLOAD..160,
        ) {
            if let Some(fast) = one_line(&text, budget) {
                prop_assert_eq!(fast.into_iter().collect::<Vec<_>>(), split_lines(&text, budget));
            }
        }

        #[test]
        fn every_line_fits_shows_something_and_keeps_its_formatting(
            text in message(),
            limit in 120usize..600,
            prefix_len in 0usize..40,
        ) {
            let splitter = Splitter::new(prefix_len).with_line_limit(limit);
            let budget = splitter.payload_budget("#t");
            prop_assume!(budget >= MIN_PAYLOAD);
            let lines =
                splitter.split("#t", &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for line in &lines {
                prop_assert!(line.len() <= budget, "{} > {budget}: {line:?}", line.len());
                prop_assert!(prefix_len + "PRIVMSG #t :".len() + line.len() + 2 <= limit);
                prop_assert!(!strip(line).trim().is_empty(), "empty line {line:?}");
                prop_assert!(!line.contains(['\r', '\n', '\0']));
                // Each line renders on its own: it ends with every run closed.
                let mut state = FormatState::default();
                for piece in lex(line) {
                    if let Piece::Code { control, .. } = piece {
                        state.apply(control);
                    }
                }
                prop_assert!(state.is_plain(), "{line:?} leaves a run open");
            }
            // Every visible character comes out once, in order, in its formatting.
            let source = sanitized_lines(&text).join(" ");
            prop_assert_eq!(
                styled_chars(lines.iter().map(String::as_str)),
                styled_chars([source.as_str()])
            );
        }

        #[test]
        fn short_words_come_back_whole(words in prop::collection::vec(WORD, 0..200)) {
            let text = words.join(" ");
            let lines = split_ok("#t", &text);
            let joined = lines.join(" ");
            let out: Vec<&str> = joined.split(' ').filter(|w| !w.is_empty()).collect();
            prop_assert_eq!(out, words.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
}
