//! Test fixtures shared by the workspace's test suites.
//!
//! [`postgres_database`] gives each test a fresh, empty database on a real
//! PostgreSQL server: the one `SONDERA_TEST_POSTGRES` names (a
//! `postgres://` URL with rights to create databases), or else a throwaway
//! server this process starts from the installed PostgreSQL binaries
//! (`initdb` and `postgres` on `PATH` or under `/usr/lib/postgresql/*/bin`).
//! The throwaway server lives in a temporary directory, listens on a free
//! loopback port and stops when the test process exits, however it exits.
//! Without either, the tests fail and say how to provide one: a suite that
//! silently skipped its database would prove nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The variable naming an existing server to test against.
pub const POSTGRES_VAR: &str = "SONDERA_TEST_POSTGRES";

struct Server {
    /// `postgres://user@host:port` without a database.
    base: String,
    _dir: Option<tempfile::TempDir>,
    _keeper: Option<Child>,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static TLS_SERVER: OnceLock<Result<(Server, PathBuf), String>> = OnceLock::new();

/// A fresh database on a throwaway server that accepts TLS connections
/// only (plain TCP is refused for every database but `postgres`), and the
/// PEM file of the authority that issued its certificate for `127.0.0.1`.
/// Always a server of this process's own, whatever `SONDERA_TEST_POSTGRES`
/// says.
pub fn postgres_tls_database() -> (String, PathBuf) {
    std::thread::spawn(|| {
        let (server, ca) = TLS_SERVER
            .get_or_init(start_tls_server)
            .as_ref()
            .unwrap_or_else(|e| panic!("no TLS PostgreSQL server for the tests: {e}"));
        (create_database(server), ca.clone())
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The URL of a new, empty database. Panics with instructions when no
/// PostgreSQL server can be had. Callable from inside a Tokio runtime: the
/// work runs on a thread of its own.
pub fn postgres_database() -> String {
    std::thread::spawn(new_database)
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn new_database() -> String {
    let server = SERVER
        .get_or_init(|| match std::env::var(POSTGRES_VAR) {
            Ok(url) => Ok(Server {
                base: url.trim_end_matches('/').to_string(),
                _dir: None,
                _keeper: None,
            }),
            Err(_) => start_server(),
        })
        .as_ref()
        .unwrap_or_else(|e| panic!("no PostgreSQL server for the tests: {e}"));
    create_database(server)
}

fn create_database(server: &Server) -> String {
    let name = format!("sondera_test_{}", uuid::Uuid::new_v4().simple());
    let admin = format!("{}/postgres", server.base);
    block_on(async {
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {admin}: {e}"));
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
    });
    format!("{}/{name}", server.base)
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime starts")
        .block_on(future)
}

/// Where `program` is: on `PATH`, or in the newest `/usr/lib/postgresql/*/bin`.
fn find(program: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .map(|e| e.path().join("bin").join(program))
            .filter(|p| p.is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program args`, as the `postgres` user when this process is root
/// (PostgreSQL refuses to run as root).
fn as_server_user(program: &Path, args: &[&str]) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command
            .args(["-u", "postgres", "--"])
            .arg(program)
            .args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

fn start_server() -> Result<Server, String> {
    start_server_with(false)
}

/// Server settings for TLS: a certificate, its key and client rules.
struct TlsSetup {
    settings: String,
}

fn start_tls_server() -> Result<(Server, PathBuf), String> {
    let server = start_server_with(true)?;
    let ca = server
        ._dir
        .as_ref()
        .map(|d| d.path().join("ca.pem"))
        .ok_or("the TLS server has no directory")?;
    Ok((server, ca))
}

/// A certificate authority, a server certificate for 127.0.0.1 it issued,
/// and client rules that refuse plain TCP but for the admin database.
fn write_tls_files(dir: &Path) -> Result<TlsSetup, String> {
    let fail = |e: &dyn std::fmt::Display| format!("test certificates: {e}");
    let ca_key = rcgen::KeyPair::generate().map_err(|e| fail(&e))?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::new()).map_err(|e| fail(&e))?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| fail(&e))?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().map_err(|e| fail(&e))?;
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .and_then(|p| p.signed_by(&key, &issuer))
        .map_err(|e| fail(&e))?;
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| fail(&e))?;
        Ok::<_, String>(path)
    };
    write("ca.pem", pem("CERTIFICATE", ca_cert.der()))?;
    let cert = write("server.pem", pem("CERTIFICATE", cert.der()))?;
    let key = write("server.key", pem("PRIVATE KEY", &key.serialize_der()))?;
    let hba = write(
        "pg_hba.conf",
        "hostssl all all 127.0.0.1/32 trust\n\
         hostnossl postgres all 127.0.0.1/32 trust\n\
         hostnossl all all 127.0.0.1/32 reject\n"
            .to_string(),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).map_err(|e| fail(&e))?;
    Ok(TlsSetup {
        settings: format!(
            "-c ssl=on -c ssl_cert_file={} -c ssl_key_file={} -c hba_file={}",
            cert.display(),
            key.display(),
            hba.display()
        ),
    })
}

/// DER as PEM text (RFC 7468).
fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut text = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        text.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        text.push('\n');
    }
    text.push_str(&format!("-----END {label}-----\n"));
    text
}

/// A throwaway server; with `tls`, one that takes TLS only (see
/// [`write_tls_files`]).
fn start_server_with(tls: bool) -> Result<Server, String> {
    let missing = |p: &str| {
        format!(
            "`{p}` is not installed. Install the PostgreSQL server (Debian: apt-get install postgresql; \
             .ci/run does this) or set {POSTGRES_VAR} to a postgres:// URL that may create databases"
        )
    };
    let initdb = find("initdb").ok_or_else(|| missing("initdb"))?;
    let postgres = find("postgres").ok_or_else(|| missing("postgres"))?;
    let dir = tempfile::Builder::new()
        .prefix("sondera-pg-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let data = dir.path().join("data");
    let tls = tls.then(|| write_tls_files(dir.path())).transpose()?;
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status()
            .map_err(|e| format!("chown: {e}"))?;
        if !status.success() {
            return Err("cannot hand the test database directory to the postgres user".into());
        }
    }
    let data_arg = data.display().to_string();
    let output = as_server_user(
        &initdb,
        &["-D", &data_arg, "-A", "trust", "-U", "sondera", "--no-sync"],
    )
    .output()
    .map_err(|e| format!("initdb: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    // The server stops when this process exits: the shell waits for its
    // standard input, a pipe this process holds, to close.
    let socket_dir = dir.path().display().to_string();
    let postgres_command = format!(
        "{} -D {data_arg} -p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c max_connections=200 {}",
        postgres.display(),
        tls.as_ref().map_or("", |t| t.settings.as_str())
    );
    let script = format!(
        "{postgres_command} & pid=$!; cat >/dev/null; kill -INT $pid; wait $pid; rm -rf {socket_dir}"
    );
    let keeper = as_server_user(Path::new("/bin/sh"), &["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start postgres: {e}"))?;
    let base = format!("postgres://sondera@127.0.0.1:{port}");
    wait_until_ready(&format!("{base}/postgres"))?;
    Ok(Server {
        base,
        _dir: Some(dir),
        _keeper: Some(keeper),
    })
}

fn wait_until_ready(url: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let attempt = block_on(async {
            tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .map(|_| ())
        });
        match attempt {
            Ok(()) => return Ok(()),
            Err(e) if Instant::now() > deadline => {
                return Err(format!(
                    "the test server at {url} never accepted connections: {e}"
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Runs `sql` (one or more statements) on the database at `url`, as a
/// test's own hand on the server: ending another connection, say. Callable
/// from inside a Tokio runtime. Panics when the statements fail.
pub fn execute(url: &str, sql: &str) {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
            tokio::spawn(connection);
            client
                .batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("`{sql}` failed: {e}"));
        })
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
