use sondera_shell::{ShellContext, analyze};
use std::io::BufRead;
fn main() {
    let context = ShellContext {
        working_dir: "/workspace/project",
        workspace_root: "/workspace/project",
        home: "/home/dev",
    };
    let full = std::env::args().nth(1).is_some();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let bytes: Vec<u8> = (0..line.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap())
            .collect();
        let command = String::from_utf8_lossy(&bytes);
        let a = analyze(&command, &context);
        let risks: Vec<_> = a
            .risks
            .iter()
            .map(|r| format!("{}: {}", r.kind.as_str(), r.evidence))
            .collect();
        println!(
            "{line}\n  {:?} {:?} {:?} {:?} {:?} {} {}",
            a.programs(),
            risks,
            a.hosts,
            a.paths_outside_workspace,
            a.unparsable,
            a.nested,
            a.invocations.len()
        );
        if full {
            println!("  {:?}", a.invocations);
        }
    }
}
