//! What deploy/ holds can be checked here, though not built: the compose
//! file parses and each server in it starts with real flags and variables,
//! the Dockerfile's settings and health check are real, and the systemd
//! unit passes `systemd-analyze verify` with an exposure of at most 2.0.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::sondera_with_env;

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(file)
}

fn read(file: &str) -> String {
    std::fs::read_to_string(deploy(file)).unwrap()
}

/// `sondera ARGS --print-config` with `env`: succeeds, and every variable
/// given is in force as the origin of some setting.
fn serves_with(args: &[&str], env: &[(String, String)]) -> String {
    let mut args = args.to_vec();
    args.push("--print-config");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let output = sondera_with_env(&args, "", &env);
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?} {env:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (name, _) in &env {
        assert!(
            printed.contains(&format!("# environment {name}")),
            "{name} sets nothing:\n{printed}"
        );
    }
    printed
}

#[test]
fn every_server_of_the_compose_file_starts_with_real_flags_and_variables() {
    let mut compose: serde_yaml::Value = serde_yaml::from_str(&read("compose.yaml")).unwrap();
    // Compose reads `<<: *anchor` as a merge, as YAML 1.1 says.
    compose.apply_merge().unwrap();
    let services = compose["services"].as_mapping().unwrap();
    let mut servers = 0;
    for (name, service) in services {
        let Some(command) = service["command"].as_sequence() else {
            continue;
        };
        servers += 1;
        let args: Vec<&str> = command.iter().map(|a| a.as_str().unwrap()).collect();
        let env: Vec<(String, String)> = service["environment"]
            .as_mapping()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let value = v.as_str().unwrap();
                // ${VAR:?message} is the operator's to give.
                let value = if value.starts_with("${SONDERA_TOKENS") {
                    format!("acme=sha256:{}", "0".repeat(64))
                } else {
                    value.to_string()
                };
                (k.as_str().unwrap().to_string(), value)
            })
            .collect();
        let printed = serves_with(&args, &env);
        assert!(
            printed.contains("tokens-from-store = true"),
            "{name:?}: {printed}"
        );
        let ports = service["ports"].as_sequence().unwrap();
        assert_eq!(ports.len(), 2, "{name:?}");
    }
    assert_eq!(servers, 2, "two servers on one PostgreSQL");
}

#[test]
fn the_dockerfiles_settings_and_health_check_are_real() {
    let dockerfile = read("Dockerfile");
    let env: Vec<(String, String)> = dockerfile
        .split("ENV ")
        .skip(1)
        .flat_map(|block| {
            block
                .split("\\\n")
                .map(str::trim)
                .take_while(|l| l.starts_with("SONDERA_"))
                .map(|l| {
                    let (k, v) = l.split_once('=').unwrap();
                    (
                        k.to_string(),
                        v.split_whitespace().next().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(env.len() >= 4, "{env:?}");
    let store = tempfile::tempdir().unwrap();
    let env: Vec<(String, String)> = env
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "SONDERA_STORE" => (k, store.path().display().to_string()),
            _ => (k, v),
        })
        .collect();
    serves_with(&["serve"], &env);
    let check = dockerfile
        .lines()
        .find_map(|l| l.trim().strip_prefix("CMD [\"sondera\", \"health\""))
        .expect("a health check with sondera health");
    assert!(check.contains("/healthz"), "{check}");
    assert!(dockerfile.contains("USER 10001"), "not root");
}

#[test]
fn the_systemd_unit_verifies_and_is_sandboxed() {
    let unit = read("sondera.service");
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let mut words = exec.split_whitespace();
    assert_eq!(words.next(), Some("/usr/local/bin/sondera"));
    // The unit's own arguments, with the sample configuration in deploy/.
    let config = deploy("sondera.toml").display().to_string();
    let args: Vec<&str> = words
        .map(|w| {
            if w == "/etc/sondera/sondera.toml" {
                config.as_str()
            } else {
                w
            }
        })
        .collect();
    let printed = serves_with(&args, &[("SONDERA_STORE".into(), "memory".into())]);
    assert!(printed.contains("retain-days = [90]"), "{printed}");

    let Ok(analyze) = which("systemd-analyze") else {
        panic!("systemd-analyze is needed (Debian's systemd package; .ci/test-deps installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("sondera.service");
    std::fs::write(
        &copy,
        unit.replace("/usr/local/bin/sondera", env!("CARGO_BIN_EXE_sondera")),
    )
    .unwrap();
    let verify = Command::new(&analyze)
        .arg("verify")
        .arg(&copy)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stderr);
    assert!(
        verify.status.success() && !said.contains("sondera.service:"),
        "{said}"
    );
    let security = Command::new(&analyze)
        .args(["security", "--offline=true", "--no-pager"])
        .arg(&copy)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&security.stdout);
    let exposure: f64 = report
        .lines()
        .find_map(|l| {
            l.split("Overall exposure level for sondera.service: ")
                .nth(1)
        })
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"));
    assert!(exposure <= 2.0, "exposure {exposure}:\n{report}");
}

fn which(program: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn the_health_check_says_whether_a_server_answers() {
    let server = common::ServerProcess::start(&["--store", "memory"]);
    let url = format!("http://{}/healthz", server.http);
    let healthy = common::sondera(&["health", &url]);
    assert!(healthy.status.success(), "{healthy:?}");
    let missing = common::sondera(&["health", &format!("http://{}/nowhere", server.http)]);
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    let closed = format!("http://127.0.0.1:{}/healthz", common::free_port());
    let unreachable = common::sondera(&["health", &closed]);
    assert_eq!(unreachable.status.code(), Some(2), "{unreachable:?}");
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("cannot be reached"));
}
