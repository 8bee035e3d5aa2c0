//! Running the `sondera` binary from tests, with none of the environment
//! variables that would change its defaults.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The variables that change `sondera`'s defaults.
const SETTINGS: &[&str] = &[
    "SONDERA_DATA_DIR",
    "SONDERA_POLICIES",
    "SONDERA_MODE",
    "SONDERA_WORKSPACE",
    "SONDERA_HOME",
    "SONDERA_ALLOWED_HOSTS",
    "SONDERA_STORE",
    "SONDERA_TOKENS",
    "SONDERA_GRPC_ADDR",
    "SONDERA_HTTP_ADDR",
    "SONDERA_HARNESS_ENDPOINT",
    "SONDERA_API_TOKEN",
];

/// `sondera ARGS...`, not yet started, in a clean environment.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sondera"));
    command.args(args);
    for var in SETTINGS {
        command.env_remove(var);
    }
    command
}

/// `sondera ARGS...` with `stdin` on its standard input.
pub fn sondera_with_input(args: &[&str], stdin: &str) -> Output {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `sondera ARGS...` with empty standard input.
pub fn sondera(args: &[&str]) -> Output {
    sondera_with_input(args, "")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}
