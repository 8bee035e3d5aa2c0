//! The shape of an action, which standing approvals are granted for.

use sondera_model::{ActionShape, CommandShape, Payload};

use crate::net::url_host;
use crate::shell::{self, ShellContext};

/// The shape `action` is granted under, or `None` when it has none that can
/// be trusted: a command line that does not parse, or that runs a program
/// named only at run time (`$CMD`, `eval`), can be approved once but never
/// granted for later calls.
pub fn action_shape(action: &Payload) -> Option<ActionShape> {
    match action {
        Payload::ShellCommand { command, .. } => shell_shape(command),
        Payload::FileOperation {
            operation, path, ..
        } => Some(ActionShape::File {
            operation: *operation,
            path: path.clone(),
        }),
        Payload::WebFetch { url, .. } => url_host(url).map(|host| ActionShape::Web { host }),
        Payload::ToolCall {
            tool, arguments, ..
        } => Some(ActionShape::Tool {
            tool: tool.clone(),
            target: arguments.to_string(),
        }),
        _ => None,
    }
}

fn shell_shape(command: &str) -> Option<ActionShape> {
    // Only program names matter here, so the places are irrelevant.
    let context = ShellContext {
        working_dir: "/",
        workspace_root: "/",
        home: "/",
    };
    let analysis = shell::analyze(command, &context);
    if analysis.unparsable.is_some() || analysis.nested || analysis.invocations.is_empty() {
        return None;
    }
    let mut commands = Vec::with_capacity(analysis.invocations.len());
    for invocation in &analysis.invocations {
        if invocation.dynamic_program || invocation.program.is_empty() {
            return None;
        }
        commands.push(CommandShape {
            program: invocation.program.clone(),
            subcommand: invocation
                .args
                .iter()
                .find(|arg| !arg.starts_with('-'))
                .cloned(),
            privileged: invocation.privileged,
        });
    }
    commands.sort();
    commands.dedup();
    Some(ActionShape::Shell { commands })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(command: &str) -> Payload {
        Payload::ShellCommand {
            call_id: "c".into(),
            command: command.into(),
            working_dir: None,
        }
    }

    fn shape(command: &str) -> ActionShape {
        action_shape(&shell(command)).unwrap_or_else(|| panic!("no shape for {command}"))
    }

    #[test]
    fn same_program_and_subcommand_share_a_shape() {
        assert!(shape("git push origin main").covers(&shape("git push --force-with-lease")));
        assert!(!shape("git push origin main").covers(&shape("git reset --hard")));
        assert!(shape("git log | head -5").covers(&shape("git log --oneline")));
    }

    #[test]
    fn sudo_never_widens_or_narrows() {
        assert!(!shape("sudo apt install jq").covers(&shape("apt install jq")));
        assert!(!shape("apt install jq").covers(&shape("sudo apt install jq")));
        assert!(shape("sudo apt install jq").covers(&shape("sudo apt install ripgrep")));
    }

    #[test]
    fn quoting_does_not_change_the_program() {
        assert_eq!(shape("r''m -rf build"), shape("rm -rf build"));
    }

    #[test]
    fn commands_named_at_run_time_have_no_shape() {
        assert_eq!(action_shape(&shell("$CMD --now")), None);
        assert_eq!(action_shape(&shell("eval \"$X\"")), None);
        assert_eq!(action_shape(&shell("echo 'unterminated")), None);
    }

    #[test]
    fn web_shapes_are_per_host() {
        let fetch = |url: &str| Payload::WebFetch {
            call_id: "c".into(),
            url: url.into(),
            prompt: String::new(),
            method: None,
            body: None,
        };
        let a = action_shape(&fetch("https://docs.rs/tokio")).unwrap();
        assert!(a.covers(&action_shape(&fetch("https://docs.rs/axum")).unwrap()));
        assert!(!a.covers(&action_shape(&fetch("https://evil.example/")).unwrap()));
    }
}
