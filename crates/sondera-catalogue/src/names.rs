//! A compile-time index that rules names out of a list before comparing
//! them: for each length, the first bytes the list's names begin with.
//!
//! The shell analysis asks "is this program a file reader? a shell? an
//! interpreter?" dozens of times per command, and nearly every answer is
//! no. Comparing the program with each name of a list costs a pass over
//! the list; one look at the index answers most of those noes.

/// Names at least this long share the index's last length.
const LONGEST: usize = 32;

/// Which names a list may hold, by length and first byte.
#[derive(Debug, Clone, Copy)]
pub struct NameIndex {
    /// For each length, bit `b` for each first byte `b` (ASCII).
    first_bytes: [u128; LONGEST + 1],
}

impl NameIndex {
    /// The index of no names.
    pub const EMPTY: NameIndex = NameIndex {
        first_bytes: [0; LONGEST + 1],
    };

    /// The index of `names`; each must begin with an ASCII byte.
    pub const fn of(names: &[&str]) -> NameIndex {
        let mut index = NameIndex::EMPTY;
        let mut at = 0;
        while at < names.len() {
            index = index.with(names[at]);
            at += 1;
        }
        index
    }

    /// This index, holding `name` too. A letter is indexed in both cases,
    /// so the index serves lookups that ignore case as well.
    pub const fn with(mut self, name: &str) -> NameIndex {
        let bytes = name.as_bytes();
        assert!(
            !bytes.is_empty() && bytes[0].is_ascii(),
            "indexed names begin with ASCII"
        );
        let length = if bytes.len() < LONGEST {
            bytes.len()
        } else {
            LONGEST
        };
        let first = bytes[0];
        self.first_bytes[length] |= 1 << first.to_ascii_lowercase();
        self.first_bytes[length] |= 1 << first.to_ascii_uppercase();
        self
    }

    /// Whether a list of this index may hold `name`, in either case: `false`
    /// is certain, `true` is for the caller's comparison to settle.
    pub fn may_hold(&self, name: &str) -> bool {
        let Some(&first) = name.as_bytes().first().filter(|b| b.is_ascii()) else {
            return false;
        };
        self.first_bytes[name.len().min(LONGEST)] & (1 << first) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_it_was_given_in_either_case_and_rules_out_the_rest() {
        const NAMES: &[&str] = &["sh", "bash", "[", "register-python-argcomplete-and-more-x"];
        const INDEX: NameIndex = NameIndex::of(NAMES);
        for name in NAMES {
            assert!(INDEX.may_hold(name), "{name}");
            assert!(INDEX.may_hold(&name.to_ascii_uppercase()), "{name}");
        }
        for name in [
            "",
            "s",
            "sha",
            "cash",
            "ls",
            "]",
            "é",
            "register-python-argcomplete-and-more-y",
        ] {
            let held = INDEX.may_hold(name);
            // The last shares a long name's length bucket and first byte.
            assert_eq!(held, name.starts_with("register"), "{name}");
        }
    }
}
