//! Untrusted text made safe to echo in an error message or on a terminal.
//!
//! Every error of the workspace that quotes input (an identifier, a path, a
//! header, a field of a wire object) goes through [`quote`] or
//! [`escape_controls`], so a crafted id cannot move the cursor, recolour a
//! terminal, forge a log line or reverse the text around it.

/// `text` with every control character (C0, DEL, C1), line or paragraph
/// separator and bidirectional formatting character written as `\u{XX}`;
/// everything else is kept. Idempotent (its output has no control
/// character), so text escaped at an inner layer may be escaped again at the
/// boundary where it is printed or sent.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let unsafe_char = c.is_control()
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
            )
            || ('\u{202A}'..='\u{202E}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            // Zero-width and invisible formatting characters (issue 45,
            // item 12): a verdict or id could hide text in them.
            || ('\u{200B}'..='\u{200D}').contains(&c)
            || matches!(c, '\u{2060}' | '\u{FEFF}' | '\u{180E}' | '\u{00AD}');
        if unsafe_char {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The first `max_chars` characters of `text`, escaped as [`escape_controls`]
/// does, in double quotes (with `…` if cut).
pub fn quote(text: &str, max_chars: usize) -> String {
    let mut cut: String = text.chars().take(max_chars).collect();
    let more = cut.len() < text.len();
    cut = escape_controls(&cut).replace('"', "\\\"");
    format!("\"{cut}{}\"", if more { "…" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_escaped_and_the_rest_kept() {
        let escaped = escape_controls("a\u{1b}[2Jb\nc\u{7f}\u{9b}\u{202e}é");
        assert_eq!(escaped, "a\\u{1b}[2Jb\\u{a}c\\u{7f}\\u{9b}\\u{202e}é");
        assert_eq!(escape_controls(&escaped), escaped);
        assert_eq!(escape_controls("alpha-1.x_y"), "alpha-1.x_y");
        // Zero-width and invisible characters (U+200B in a dealing verdict).
        assert_eq!(
            escape_controls("a\u{200b}b\u{200d}\u{feff}\u{2060}c"),
            "a\\u{200b}b\\u{200d}\\u{feff}\\u{2060}c"
        );
        assert_eq!(quote("ab\"c", 10), "\"ab\\\"c\"");
        assert_eq!(quote("abcdef", 3), "\"abc…\"");
    }
}
