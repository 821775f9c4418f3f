//! The little Markdown the games' texts use, as HTML for the site's history (issue 31):
//! `code spans` and `**bold**`, nothing else. The text is HTML-escaped first, whole, and
//! only then are the markers paired up and turned into `<code>` and `<b>`, so no player's
//! words (a name, a typed command: `<script>`, `**`) can ever become markup. A marker
//! without its partner stays as the character it is; nothing is bold inside code.

use maud::{Markup, PreEscaped};

/// `text` with its code spans and bold runs as HTML, everything else escaped.
pub fn render(text: &str) -> Markup {
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len() + 16);
    let pieces: Vec<&str> = escaped.split('`').collect();
    // An odd count of backticks leaves the last one unpaired: it is said as it is.
    let paired = if pieces.len() % 2 == 1 { pieces.len() } else { pieces.len() - 1 };
    for (i, piece) in pieces.iter().enumerate() {
        if i >= paired {
            out.push('`');
            bold(piece, &mut out);
        } else if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(piece);
            out.push_str("</code>");
        } else {
            bold(piece, &mut out);
        }
    }
    PreEscaped(out)
}

/// `**bold**` runs of already escaped text, appended to `out`; an unpaired `**` as it is.
fn bold(escaped: &str, out: &mut String) {
    let pieces: Vec<&str> = escaped.split("**").collect();
    let paired = if pieces.len() % 2 == 1 { pieces.len() } else { pieces.len() - 1 };
    for (i, piece) in pieces.iter().enumerate() {
        if i >= paired {
            out.push_str("**");
            out.push_str(piece);
        } else if i % 2 == 1 && !piece.is_empty() {
            out.push_str("<b>");
            out.push_str(piece);
            out.push_str("</b>");
        } else if i % 2 == 1 {
            out.push_str("****");
        } else {
            out.push_str(piece);
        }
    }
}

/// HTML's five special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(text: &str) -> String {
        render(text).into_string()
    }

    #[test]
    fn code_and_bold_become_markup() {
        assert_eq!(
            html("send `/msg <bot> !cast` now, **alice**"),
            "send <code>/msg &lt;bot&gt; !cast</code> now, <b>alice</b>"
        );
        assert_eq!(html("`a` and `b`"), "<code>a</code> and <code>b</code>");
        assert_eq!(html("`**not bold**`"), "<code>**not bold**</code>");
    }

    /// An attacker's view: whatever a player types is text, however it is marked.
    #[test]
    fn hostile_text_stays_text() {
        assert_eq!(html("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(html("**<img src=x onerror=alert(1)>"), "**&lt;img src=x onerror=alert(1)&gt;");
        assert_eq!(html("a ** b ** c **"), "a <b> b </b> c **");
        assert_eq!(html("one ` unpaired"), "one ` unpaired");
        assert_eq!(html("`a` `b"), "<code>a</code> `b");
        assert_eq!(html("``"), "<code></code>");
        assert_eq!(html("****"), "****");
        assert_eq!(html("`</code><script>`"), "<code>&lt;/code&gt;&lt;script&gt;</code>");
        assert_eq!(html("\"'&"), "&quot;&#39;&amp;");
        for text in ["<", "`<`**<**", "**`**`", "a`b**c`d**e"] {
            let out = html(text);
            assert!(
                !out.contains("<s")
                    && !out
                        .replace("<code>", "")
                        .replace("</code>", "")
                        .replace("<b>", "")
                        .replace("</b>", "")
                        .contains('<'),
                "{text}: {out}"
            );
        }
    }
}
