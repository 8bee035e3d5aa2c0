//! Running the `sondera` binary from tests, with none of the environment
//! variables that would change its defaults.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// `sondera ARGS...` with `stdin` on its standard input.
pub fn sondera_with_input(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sondera"))
        .args(args)
        .env_remove("SONDERA_DATA_DIR")
        .env_remove("SONDERA_POLICIES")
        .env_remove("SONDERA_MODE")
        .env_remove("SONDERA_WORKSPACE")
        .env_remove("SONDERA_HOME")
        .env_remove("SONDERA_ALLOWED_HOSTS")
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
