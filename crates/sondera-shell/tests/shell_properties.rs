//! Properties of the shell analyser over generated input: it never panics,
//! fails closed on what it cannot read, and no quoting, wrapping, chaining or
//! nesting hides a destructive command, while the same command confined to
//! the workspace is never mistaken for one outside it.

use proptest::prelude::*;
use sondera_shell::{MAX_COMMAND_BYTES, RiskKind, ShellContext, analyze};

const CTX: ShellContext<'static> = ShellContext {
    working_dir: "/workspace/project",
    workspace_root: "/workspace/project",
    home: "/home/dev",
};

/// `text` as one single-quoted bash word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One piece of a word written in one of bash's quoting styles.
fn quoted_piece(piece: &str, style: u8) -> String {
    match style % 5 {
        0 => piece.to_string(),
        1 => format!("'{piece}'"),
        2 => format!("\"{piece}\""),
        3 => piece.chars().map(|c| format!("\\{c}")).collect(),
        _ => {
            let hex: String = piece.bytes().map(|b| format!("\\x{b:02x}")).collect();
            format!("$'{hex}'")
        }
    }
}

/// `word` split at random points, each piece quoted its own way.
fn obfuscated(word: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec((1..=word.len(), any::<u8>()), 1..4).prop_map(move |cuts| {
        let mut out = String::new();
        let mut rest = word;
        for (at, style) in cuts {
            if rest.is_empty() {
                break;
            }
            let (piece, tail) = rest.split_at(at.min(rest.len()));
            out.push_str(&quoted_piece(piece, style));
            rest = tail;
        }
        out + &quoted_piece(rest, 0)
    })
}

fn wrapper() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        "sudo ",
        "env ",
        "env FOO=1 ",
        "nice -n 5 ",
        "nohup ",
        "timeout 5 ",
        "command ",
        "exec ",
        "time ",
        "stdbuf -oL ",
        "doas ",
    ])
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" ; ", " && ", " || ", " | ", "\n", " & "])
}

fn benign() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "ls -la",
        "git status",
        "cargo build",
        "echo done",
        "true",
        "cd src",
    ])
}

/// `command` inside `layers` of nesting: shells, eval, subshells, groups,
/// substitutions and text piped into a shell.
fn nested(command: String, layers: &[u8]) -> String {
    layers.iter().fold(command, |inner, layer| match layer % 7 {
        0 => format!("bash -c {}", single_quoted(&inner)),
        1 => format!("sh -c {}", single_quoted(&inner)),
        2 => format!("eval {}", single_quoted(&inner)),
        3 => format!("( {inner} )"),
        4 => format!("{{ {inner}; }}"),
        5 => format!("echo $( {inner} )"),
        _ => format!("echo {} | sh", single_quoted(&inner)),
    })
}

fn outside_target() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "/",
        "~",
        "$HOME",
        "/etc",
        "../..",
        "/home/dev/*",
        "~/",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics_and_unparsable_fails_closed(text in ".{0,300}") {
        let analysis = analyze(&text, &CTX);
        if analysis.unparsable.is_some() {
            prop_assert!(analysis.has(RiskKind::Unparsable));
        }
    }

    #[test]
    fn shell_syntax_soup_never_panics(
        tokens in prop::collection::vec(
            prop::sample::select(vec![
                "$(", ")", "`", "'", "\"", "\\", "|", "&&", ";", "<<", "<<<", "EOF\n", "{", "}",
                "(", "rm", " -rf ", "/", "$X", "${", "$'\\x72", "\n", "sudo ", "bash -c ",
                "eval ", "xargs ", "<(", "for i in ", "do ", "done", "case ", "esac", "=", "#",
                " ", "[[", "]]", "((", "))", "function f", "!", ">&", "2>", "<>", "''", "\"\"",
                "<<-", "\t", "$'",
            ]),
            0..200,
        )
    ) {
        let soup: String = tokens.concat();
        let analysis = analyze(&soup, &CTX);
        if analysis.unparsable.is_some() {
            prop_assert!(analysis.has(RiskKind::Unparsable));
        }
    }

    #[test]
    fn no_disguise_hides_a_delete_outside_the_workspace(
        program in obfuscated("rm"),
        flags in obfuscated("-rf"),
        target in outside_target(),
        wrap in wrapper(),
        before in benign(),
        sep in separator(),
        layers in prop::collection::vec(any::<u8>(), 0..4),
    ) {
        let command = nested(format!("{before}{sep}{wrap}{program} {flags} {target}"), &layers);
        let analysis = analyze(&command, &CTX);
        prop_assert!(
            analysis.has(RiskKind::DeleteOutsideWorkspace),
            "{command:?}: {:?}",
            analysis.risks
        );
    }

    #[test]
    fn deletes_inside_the_workspace_stay_inside(
        program in obfuscated("rm"),
        segments in prop::collection::vec("[a-z0-9_]{1,8}", 1..4),
        wrap in prop::sample::select(vec!["", "env ", "nice ", "timeout 5 ", "command "]),
        layers in prop::collection::vec(any::<u8>(), 0..3),
    ) {
        let target = format!("./{}", segments.join("/"));
        let command = nested(format!("{wrap}{program} -rf {target}"), &layers);
        let analysis = analyze(&command, &CTX);
        prop_assert!(
            !analysis.has(RiskKind::DeleteOutsideWorkspace),
            "{command:?}: {:?}",
            analysis.risks
        );
        prop_assert!(analysis.has(RiskKind::DeleteInWorkspace), "{command:?}");
    }

    #[test]
    fn oversized_input_fails_closed(unit in "[a-z;|&$()'\" ]{1,16}", copies in 1usize..8) {
        let repeats = MAX_COMMAND_BYTES / unit.len() + copies;
        let command = unit.repeat(repeats);
        let analysis = analyze(&command, &CTX);
        prop_assert!(analysis.has(RiskKind::Unparsable));
    }
}
