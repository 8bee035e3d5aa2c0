//! Variables whose value is known before the command runs.
//!
//! `CMD="pytest -q"; $CMD` and `cmd=(cargo build); "${cmd[@]}"` keep a
//! command in a variable and then run it. The value was written in the
//! command itself, so the program is as static as if it were spelled out:
//! the walk replaces such a reference by the value and judges the program
//! it names. A variable stops being known as soon as anything the analysis
//! cannot follow may change it: an assignment of a dynamic value, an
//! append, `read`, `mapfile`, `getopts`, `printf -v`, `unset`.

use std::collections::HashMap;

use crate::word::Word;

/// The variables assigned statically so far, in the order the walk meets
/// the command's parts.
#[derive(Debug, Default)]
pub(super) struct StaticValues {
    values: HashMap<String, Vec<Word>>,
    /// `IFS` was assigned: how values split into words is no longer known,
    /// so no reference is resolved from then on.
    splitting_changed: bool,
}

/// Most words a reference may stand for: a longer value is not followed.
const MAX_VALUE_WORDS: usize = 64;

impl StaticValues {
    /// Records `name`'s new value: `Some` words when they are static, or
    /// `None` when the value is not known.
    pub(super) fn assign(&mut self, name: &str, value: Option<Vec<Word>>) {
        if name == "IFS" || self.splitting_changed {
            self.splitting_changed = true;
            self.values.clear();
            return;
        }
        match value.filter(|words| words.len() <= MAX_VALUE_WORDS) {
            Some(words) => {
                self.values.insert(name.to_string(), words);
            }
            None => {
                self.values.remove(name);
            }
        }
    }

    /// The words of a scalar value as an unquoted reference splits them;
    /// `None` if the value is dynamic.
    pub(super) fn scalar(value: &Word) -> Option<Vec<Word>> {
        if value.dynamic {
            return None;
        }
        if !value.text.contains(char::is_whitespace) {
            return Some(vec![value.clone()]);
        }
        Some(value.text.split_whitespace().map(Word::path).collect())
    }

    /// The elements of an array value; `None` if any is dynamic.
    pub(super) fn array(elements: Vec<Word>) -> Option<Vec<Word>> {
        elements.iter().all(|w| !w.dynamic).then_some(elements)
    }

    /// `words` with each plain reference to a known variable replaced by
    /// its value.
    pub(super) fn resolve(&self, words: Vec<Word>) -> Vec<Word> {
        if self.values.is_empty() || !words.iter().any(|w| w.reference.is_some()) {
            return words;
        }
        let mut out = Vec::with_capacity(words.len());
        for word in words {
            match word.reference.as_ref().and_then(|n| self.values.get(n)) {
                Some(value) => out.extend(value.iter().cloned()),
                None => out.push(word),
            }
        }
        out
    }

    /// Follows what a builtin run with `words` (program first) does to
    /// variables: `export NAME=VALUE` assigns, `read NAME` and the like
    /// make the value unknown.
    pub(super) fn after(&mut self, words: &[Word]) {
        let Some((program, args)) = words.split_first() else {
            return;
        };
        match program.text.as_str() {
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for arg in args.iter().filter(|a| !a.text.starts_with('-')) {
                    if let Some((name, value)) = arg.text.split_once('=') {
                        let value = Word {
                            text: value.to_string(),
                            ..arg.clone()
                        };
                        self.assign(name.trim_end_matches('+'), Self::scalar(&value));
                    }
                }
            }
            "read" | "mapfile" | "readarray" | "getopts" | "unset" | "let" => {
                for arg in args {
                    self.assign(&arg.text, None);
                }
            }
            "printf" => {
                let named = args.windows(2).find(|w| w[0].text == "-v");
                if let Some(pair) = named {
                    self.assign(&pair[1].text, None);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str) -> Word {
        Word {
            text: crate::word::EXPANSION.into(),
            dynamic: true,
            variables: vec![name.into()],
            reference: Some(name.into()),
            ..Word::default()
        }
    }

    #[test]
    fn references_to_static_values_resolve_and_others_stay() {
        let mut statics = StaticValues::default();
        statics.assign("CMD", StaticValues::scalar(&Word::path("pytest -q")));
        let words = statics.resolve(vec![reference("CMD"), reference("OTHER")]);
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["pytest", "-q", "${...}"]);
        statics.after(&[Word::path("read"), Word::path("CMD")]);
        assert_eq!(statics.resolve(vec![reference("CMD")])[0].text, "${...}");
    }

    #[test]
    fn a_changed_ifs_stops_resolution() {
        let mut statics = StaticValues::default();
        statics.assign("CMD", StaticValues::scalar(&Word::path("ls")));
        statics.assign("IFS", StaticValues::scalar(&Word::path(",")));
        statics.assign("X", StaticValues::scalar(&Word::path("rm,-rf,/")));
        assert_eq!(statics.resolve(vec![reference("CMD")])[0].text, "${...}");
        assert_eq!(statics.resolve(vec![reference("X")])[0].text, "${...}");
    }
}
