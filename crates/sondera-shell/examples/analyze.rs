//! Prints what the shell analysis finds in each command given as an argument:
//!
//! ```text
//! cargo run -p sondera-shell --example analyze -- "bash -c \"r''m -rf ~\""
//! ```

use sondera_shell::{ShellContext, analyze};

fn main() {
    let root = std::env::current_dir().map_or_else(|_| "/".into(), |d| d.display().to_string());
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let context = ShellContext {
        working_dir: &root,
        workspace_root: &root,
        home: &home,
    };
    for command in std::env::args().skip(1) {
        let analysis = analyze(&command, &context);
        println!("{command}");
        println!("  programs: {}", analysis.programs().join(" "));
        for risk in &analysis.risks {
            println!("  risk {}: {}", risk.kind.as_str(), risk.evidence);
        }
        if !analysis.hosts.is_empty() {
            println!("  hosts: {}", analysis.hosts.join(" "));
        }
        if let Some(why) = &analysis.unparsable {
            println!("  unparsable: {why}");
        }
    }
}
