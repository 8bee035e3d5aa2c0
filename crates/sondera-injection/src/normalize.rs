//! The text as a model reads it: compatibility forms folded (NFKC),
//! look-alike letters replaced by the ASCII they imitate (UTS #39
//! confusables), invisible characters removed and ASCII lower-cased. Every
//! byte of the result remembers where in the original it came from, so
//! evidence found in the normalised text points into the text as given.

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;

/// Normalised text and the way back to the original.
pub(crate) struct Normalized<'a> {
    pub text: std::borrow::Cow<'a, str>,
    /// For each byte of `text`, the offset of the original character it came
    /// from; `None` when the text was ASCII and offsets are the same.
    origins: Option<Vec<u32>>,
    original_len: usize,
    /// Where invisible characters sat between two letters of a word: text
    /// hidden from a person who reads it, visible to a model.
    pub invisible_in_words: Vec<Range<usize>>,
}

impl<'a> Normalized<'a> {
    pub(crate) fn new(original: &'a str) -> Self {
        if original.is_ascii() {
            return Self::ascii(original);
        }
        let mut text = String::with_capacity(original.len());
        let mut origins = Vec::with_capacity(original.len());
        let mut invisible_in_words = Vec::new();
        let mut one = [0u8; 4];
        let mut previous_letter = false;
        let mut pending_invisible = None;
        let mut at = 0;
        while at < original.len() {
            // ASCII runs are copied in one go; only other characters are
            // folded one by one.
            let run = original.as_bytes()[at..]
                .iter()
                .position(|b| !b.is_ascii())
                .unwrap_or(original.len() - at);
            if run > 0 {
                let ascii = &original[at..at + run];
                if let Some(hidden) = pending_invisible.take()
                    && ascii.as_bytes()[0].is_ascii_alphabetic()
                {
                    invisible_in_words.push(hidden);
                }
                text.extend(ascii.bytes().map(|b| char::from(b.to_ascii_lowercase())));
                origins.extend((at..at + run).map(|o| o as u32));
                previous_letter = ascii.as_bytes()[run - 1].is_ascii_alphabetic();
                at += run;
                continue;
            }
            let c = original[at..]
                .chars()
                .next()
                .expect("a character at a boundary");
            let width = c.len_utf8();
            if is_invisible(c) {
                if previous_letter && pending_invisible.is_none() {
                    pending_invisible = Some(at..at + width);
                }
                at += width;
                continue;
            }
            let start = text.len();
            for folded in c.encode_utf8(&mut one).nfkc() {
                push_visible(&mut text, folded);
            }
            let letter = text[start..].bytes().any(|b| b.is_ascii_alphabetic());
            if let Some(hidden) = pending_invisible.take()
                && letter
            {
                invisible_in_words.push(hidden);
            }
            previous_letter = letter;
            origins.resize(text.len(), at as u32);
            at += width;
        }
        Self {
            text: std::borrow::Cow::Owned(text),
            origins: Some(origins),
            original_len: original.len(),
            invisible_in_words,
        }
    }

    fn ascii(original: &'a str) -> Self {
        let text = if original.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(original.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(original)
        };
        Self {
            text,
            origins: None,
            original_len: original.len(),
            invisible_in_words: Vec::new(),
        }
    }

    /// The range of the normalised text that `range` of the original became.
    pub(crate) fn normalized(&self, range: Range<usize>) -> Range<usize> {
        let Some(origins) = &self.origins else {
            return range;
        };
        let at = |offset: usize| origins.partition_point(|&o| (o as usize) < offset);
        at(range.start)..at(range.end)
    }

    /// The range of the original text that `range` of the normalised text came from.
    pub(crate) fn original(&self, range: Range<usize>) -> Range<usize> {
        let Some(origins) = &self.origins else {
            return range;
        };
        let start = origins
            .get(range.start)
            .map_or(self.original_len, |&o| o as usize);
        let end = origins
            .get(range.end)
            .map_or(self.original_len, |&o| o as usize);
        start..end.max(start)
    }
}

/// Pushes `c` lower-cased, or the ASCII it is confusable with.
fn push_visible(text: &mut String, c: char) {
    if c.is_ascii() {
        text.push(c.to_ascii_lowercase());
        return;
    }
    if is_invisible(c) {
        return;
    }
    let mut one = [0u8; 4];
    let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut one)).collect();
    if skeleton.is_ascii() && !skeleton.is_empty() {
        text.extend(skeleton.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        text.extend(c.to_lowercase());
    }
}

/// Characters that render as nothing: zero-width spaces and joiners, soft
/// hyphens, direction marks and the rest of Unicode's default-ignorables.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_and_invisibles_read_as_ascii() {
        let text = "Ｉｇｎｏｒｅ аll prev\u{200B}ious";
        let normalized = Normalized::new(text);
        assert_eq!(normalized.text, "ignore all previous");
        assert_eq!(normalized.invisible_in_words.len(), 1);
        let at = normalized.text.find("all").unwrap();
        let back = normalized.original(at..at + 3);
        assert_eq!(&text[back], "аll");
    }

    #[test]
    fn ascii_keeps_offsets() {
        let normalized = Normalized::new("Ignore THIS");
        assert_eq!(normalized.text, "ignore this");
        assert_eq!(normalized.original(7..11), 7..11);
    }

    #[test]
    fn emoji_joiners_are_not_hidden_text() {
        let normalized = Normalized::new("family: 👨\u{200D}👩\u{200D}👧");
        assert!(normalized.invisible_in_words.is_empty());
    }
}
