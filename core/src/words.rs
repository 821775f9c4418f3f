//! Shared pieces of command parsing: splitting a command into words, reading amounts
//! with clear errors, and suggesting the nearest command for a typo.

/// Splits a command into its first word (lower-cased) and the remaining words.
pub fn split(command: &str) -> (String, Vec<&str>) {
    let mut words = command.split_whitespace();
    let head = words.next().unwrap_or_default().to_lowercase();
    (head, words.collect())
}

/// Why a number in a command could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// The word is not a whole number.
    #[error("`{0}` is not a whole number")]
    NotANumber(String),
    /// The number is below zero.
    #[error("`{0}` is negative; amounts are 0 or more")]
    Negative(String),
    /// The number is larger than any game can use.
    #[error("`{word}` is too large (at most {max})")]
    TooLarge {
        /// The word as typed.
        word: String,
        /// The largest amount accepted.
        max: u32,
    },
}

/// The largest amount any command accepts (Mana, coins, instability).
pub const MAX_AMOUNT: u32 = 1_000_000_000;

/// Reads a whole number from 0 to [`MAX_AMOUNT`].
pub fn amount(word: &str) -> Result<u32, AmountError> {
    let digits = word.strip_prefix('+').unwrap_or(word);
    if let Some(rest) = digits.strip_prefix('-') {
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()) {
            return Err(AmountError::Negative(word.to_owned()));
        }
        return Err(AmountError::NotANumber(word.to_owned()));
    }
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(AmountError::NotANumber(word.to_owned()));
    }
    match digits.parse::<u64>() {
        Ok(n) if n <= u64::from(MAX_AMOUNT) => Ok(n as u32),
        _ => Err(AmountError::TooLarge { word: word.to_owned(), max: MAX_AMOUNT }),
    }
}

/// A change to a counter: `n` sets it, `+n` adds, `-n` takes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjustment {
    /// Set to this value.
    Set(u32),
    /// Add this much.
    Add(u32),
    /// Take this much away.
    Take(u32),
}

/// Reads `n`, `+n` or `-n`.
pub fn adjustment(word: &str) -> Result<Adjustment, AmountError> {
    let signs = word.chars().take_while(|c| matches!(c, '+' | '-')).count();
    if signs > 1 {
        return Err(AmountError::NotANumber(word.to_owned()));
    }
    if let Some(rest) = word.strip_prefix('+') {
        amount(rest).map(Adjustment::Add)
    } else if let Some(rest) = word.strip_prefix('-') {
        amount(rest).map(Adjustment::Take)
    } else {
        amount(word).map(Adjustment::Set)
    }
}

/// The candidate nearest to a mistyped word, if one is close enough to be a likely typo.
pub fn nearest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&typed, c), c))
        .filter(|(distance, c)| *distance <= 2.max(c.len() / 3) && *distance < c.len())
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_read_with_clear_errors() {
        assert_eq!(amount("3"), Ok(3));
        assert_eq!(amount("-3"), Err(AmountError::Negative("-3".into())));
        assert_eq!(amount("three"), Err(AmountError::NotANumber("three".into())));
        assert!(matches!(amount("99999999999999999999999"), Err(AmountError::TooLarge { .. })));
        assert_eq!(amount(""), Err(AmountError::NotANumber(String::new())));
    }

    #[test]
    fn adjustments_read_sign_as_direction() {
        assert_eq!(adjustment("+2"), Ok(Adjustment::Add(2)));
        assert_eq!(adjustment("-2"), Ok(Adjustment::Take(2)));
        assert_eq!(adjustment("7"), Ok(Adjustment::Set(7)));
        assert!(adjustment("--2").is_err());
        assert!(adjustment("++2").is_err());
        assert!(adjustment("-+2").is_err());
    }

    #[test]
    fn typos_find_the_nearest_command() {
        let commands = ["gather", "blood", "alchemy", "status"];
        assert_eq!(nearest("gahter", commands), Some("gather"));
        assert_eq!(nearest("stauts", commands), Some("status"));
        assert_eq!(nearest("xyzzy", commands), None);
    }
}
