//! Running the `sondera` binary from tests, with none of the environment
//! variables that would change its defaults.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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
pub(crate) fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sondera"));
    command.args(args);
    for var in SETTINGS {
        command.env_remove(var);
    }
    command
}

/// `sondera ARGS...` with `stdin` on its standard input.
pub(crate) fn sondera_with_input(args: &[&str], stdin: &str) -> Output {
    sondera_with_env(args, stdin, &[])
}

/// `sondera ARGS...` with `stdin` on its standard input and `env` set.
pub(crate) fn sondera_with_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut child = command(args);
    child.envs(env.iter().copied());
    let mut child = child
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    // A command that fails closed may exit before it reads its input.
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().unwrap()
}

/// `sondera ARGS...` with empty standard input.
pub(crate) fn sondera(args: &[&str]) -> Output {
    sondera_with_input(args, "")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// `sondera tail --json` following `grpc` with `token`, given a moment to subscribe.
pub(crate) fn tail_json(grpc: &str, token: &str) -> Child {
    let tail = command(&["tail", "--server", grpc, "--token", token, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    tail
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) struct ServerProcess {
    pub child: Child,
    pub grpc: String,
    pub http: String,
}

impl ServerProcess {
    pub(crate) fn start(extra: &[&str]) -> Self {
        let (grpc, http) = (
            format!("127.0.0.1:{}", free_port()),
            format!("127.0.0.1:{}", free_port()),
        );
        let mut args = vec!["serve", "--grpc-addr", &grpc, "--http-addr", &http];
        args.extend_from_slice(extra);
        let child = command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let server = Self { child, grpc, http };
        server.wait_until_healthy();
        server
    }

    pub(crate) fn wait_until_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(mut stream) = std::net::TcpStream::connect(&self.http) {
                use std::io::{Read, Write};
                let _ = stream.write_all(
                    b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
                );
                let mut response = String::new();
                let _ = stream.read_to_string(&mut response);
                if response.starts_with("HTTP/1.1 200") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not become healthy");
    }

    pub(crate) fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGTERM, then the exit status and everything it wrote to stderr.
    pub(crate) fn stop(&mut self) -> (std::process::ExitStatus, String) {
        self.signal("TERM");
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        use std::io::Read;
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status, stderr)
    }
}

impl Drop for ServerProcess {
    /// A failed test must not leave its server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// POSTs `body` as JSON to `path` on `addr` with `headers`; the status and
/// the response body.
pub(crate) fn post_json(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, rest) = response.split_once("\r\n\r\n").unwrap();
    // Chunked bodies come as size lines around the text.
    let text = if response
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        rest.split("\r\n").skip(1).step_by(2).collect::<String>()
    } else {
        rest.to_string()
    };
    (status, text)
}
