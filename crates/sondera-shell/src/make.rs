//! What make runs: the recipe lines of a makefile, with make's own
//! expansions made plain. Read for a makefile written to run later and for
//! one make reads from its standard input (`make -f -`).

/// The recipe lines of a makefile, as the shell commands make runs.
pub(crate) fn recipes(content: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let joined = content.replace("\\\n", " ");
    for line in joined.lines() {
        let Some(recipe) = line
            .strip_prefix('\t')
            .or_else(|| line.strip_prefix("    "))
        else {
            continue;
        };
        let recipe = recipe.trim_start_matches(['@', '-', '+']);
        commands.push(make_variables(recipe));
    }
    commands
}

/// A recipe with make's own expansions made plain: `$$` is `$`, and a
/// variable such as `$(CC)` or `${GO}` names the program it usually holds
/// (`cc`, `go`).
fn make_variables(recipe: &str) -> String {
    let mut out = String::with_capacity(recipe.len());
    let mut rest = recipe;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let close = match after.as_bytes().first() {
            Some(b'$') => {
                out.push('$');
                rest = &after[1..];
                continue;
            }
            Some(b'(') => ')',
            Some(b'{') => '}',
            _ => {
                out.push('$');
                rest = after;
                continue;
            }
        };
        let inner = &after[1..];
        match inner
            .find(close)
            .map(|end| (&inner[..end], &inner[end + 1..]))
        {
            Some((name, tail))
                if !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                // make's `SHELL` is `/bin/sh` unless the Makefile says otherwise.
                if name == "SHELL" {
                    out.push_str("sh");
                } else {
                    out.push_str(&name.to_ascii_lowercase());
                }
                rest = tail;
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
