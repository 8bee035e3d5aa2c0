//! How the PostgreSQL store reaches its server: the `sslmode` and
//! `sslrootcert` of the URL, as libpq reads them, over rustls.
//!
//! Where TLS is used the server's certificate is always verified, host name
//! included, against `sslrootcert` (a PEM file) or the system's roots:
//! `require` and `verify-ca` are as strict as `verify-full`, since an
//! unverified connection to a database of agents' records is not worth
//! having. `prefer` (the default, as in libpq) uses TLS when the server
//! offers it and plain TCP otherwise; `disable` never uses it.

use std::sync::Arc;

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_rustls::rustls;

/// A parsed connection URL and the TLS connector it asks for.
pub(crate) struct Target {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: MakeRustlsConnect,
}

/// Reads `url`, taking out what tokio-postgres does not know
/// (`sslrootcert`, and `sslmode`'s `allow`, `verify-ca` and `verify-full`).
pub(crate) fn target(url: &str) -> Result<Target, String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let (mut mode, mut root) = (SslMode::Prefer, None);
    let mut rest = Vec::new();
    for (key, value) in parsed.query_pairs() {
        match &*key {
            "sslmode" => mode = ssl_mode(&value)?,
            "sslrootcert" => root = Some(value.into_owned()),
            _ => rest.push((key.into_owned(), value.into_owned())),
        }
    }
    parsed.set_query(None);
    if !rest.is_empty() {
        parsed.query_pairs_mut().extend_pairs(rest);
    }
    let mut config: tokio_postgres::Config = parsed.as_str().parse().map_err(|e| format!("{e}"))?;
    config.ssl_mode(mode);
    let roots = match root.as_deref() {
        None | Some("system") => system_roots(),
        Some(path) => roots_from(path)?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Target {
        config,
        tls: MakeRustlsConnect::new(client),
    })
}

fn ssl_mode(value: &str) -> Result<SslMode, String> {
    Ok(match value {
        "disable" => SslMode::Disable,
        "allow" | "prefer" => SslMode::Prefer,
        "require" | "verify-ca" | "verify-full" => SslMode::Require,
        other => {
            return Err(format!(
                "sslmode `{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ));
        }
    })
}

fn roots_from(path: &str) -> Result<rustls::RootCertStore, String> {
    let unreadable = |e: &dyn std::fmt::Display| format!("sslrootcert {path}: {e}");
    let pem = std::fs::read(path).map_err(|e| unreadable(&e))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| unreadable(&e))?;
        roots.add(cert).map_err(|e| unreadable(&e))?;
    }
    if roots.is_empty() {
        return Err(unreadable(&"no certificate in the file"));
    }
    Ok(roots)
}

fn system_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    // Unreadable entries are skipped, as every TLS client does; none at all
    // only matters once a server is asked for TLS, where verification fails.
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_keeps_what_tokio_postgres_reads_and_loses_the_rest() {
        let t = target("postgres://u:p@db:5433/x?sslmode=verify-full&application_name=a").unwrap();
        assert_eq!(t.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(t.config.get_application_name(), Some("a"));
        assert_eq!(t.config.get_dbname(), Some("x"));
        assert_eq!(
            target("postgres://db/x").unwrap().config.get_ssl_mode(),
            SslMode::Prefer
        );
        let bad = target("postgres://db/x?sslmode=maybe").err().unwrap();
        assert!(bad.contains("sslmode `maybe`"), "{bad}");
        let missing = target("postgres://db/x?sslrootcert=/no/such.pem")
            .err()
            .unwrap();
        assert!(missing.contains("/no/such.pem"), "{missing}");
    }
}
