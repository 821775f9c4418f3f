//! TLS to PostgreSQL (issue 34): `sslmode` and `sslrootcert` in `[store] url`, against a
//! real PostgreSQL with `ssl = on` and a throwaway CA (tests/harness/certs.rs). The server
//! itself says, in `pg_stat_ssl`, whether a connection of the store or of the lease is
//! encrypted.

use std::time::{Duration, Instant};

use spellbridge::leader::{Holder, Lease, LeaseSettings};
use spellbridge::store::Store;
use spellbridge::store::postgres::StoreUrl;
use spellbridge_tests::harness::certs::{TestCa, Validity};
use spellbridge_tests::harness::postgres::{self, Postgres};

/// The name the server's certificate is for (reached at 127.0.0.1 through `hostaddr`).
const NAME: &str = "db.spellbridge.test";

/// A cluster with TLS on, its certificate for [`NAME`] signed by a new CA; and the CA's
/// certificate file and another CA's, in `dir`.
fn tls_cluster(dir: &std::path::Path) -> (Postgres, String, String) {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let other = TestCa::new("someone else's CA").unwrap_or_else(|e| panic!("{e}"));
    let server = ca.sign(&[NAME], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let (ca_file, _) = ca.pem.write(dir, "ca").unwrap_or_else(|e| panic!("{e}"));
    let (other_file, _) = other.pem.write(dir, "other").unwrap_or_else(|e| panic!("{e}"));
    let cluster = Postgres::start_with(postgres::Options { tls: Some(server), ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}"));
    (cluster, ca_file.display().to_string(), other_file.display().to_string())
}

/// The cluster's URL with `query` added, to the host `host`.
fn with(cluster: &Postgres, host: &str, query: &str) -> StoreUrl {
    let url = cluster.url().replacen("127.0.0.1", host, 1);
    let url = if host == "127.0.0.1" { url } else { format!("{url}?hostaddr=127.0.0.1") };
    let joined = if url.contains('?') { format!("{url}&{query}") } else { format!("{url}?{query}") };
    StoreUrl::parse(&joined).unwrap_or_else(|e| panic!("{joined}: {e}"))
}

/// Whether the one open connection named `application` is encrypted, by the server's
/// word (waits for the ones closed earlier to be gone).
fn encrypted(cluster: &Postgres, application: &str) -> bool {
    let sql = format!(
        "SELECT count(*) || ' ' || coalesce(bool_and(s.ssl), false) FROM pg_stat_ssl s \
         JOIN pg_stat_activity a USING (pid) WHERE a.application_name = '{application}'"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = cluster.query(&sql).unwrap_or_else(|e| panic!("{e}"));
        match answer.trim().split_once(' ') {
            Some(("1", ssl)) => return ssl == "true",
            _ if Instant::now() > deadline => panic!("not one {application} connection: {answer:?}"),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Opens a read-only store at `url`: its error's text, or whether it is encrypted.
fn open(cluster: &Postgres, url: &StoreUrl) -> Result<bool, String> {
    let store = Store::open_postgres(url, None).map_err(|e| e.to_string())?;
    let ssl = encrypted(cluster, "spellbridge-store");
    drop(store);
    Ok(ssl)
}

#[test]
fn verify_full_with_the_right_ca_connects_encrypted_and_a_wrong_ca_or_name_is_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (cluster, ca, other) = tls_cluster(dir.path());

    let full = with(&cluster, NAME, &format!("sslmode=verify-full&sslrootcert={ca}"));
    assert_eq!(open(&cluster, &full), Ok(true), "verify-full with the CA that signed it");

    // The lease's own connection takes the same TLS.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let settings = LeaseSettings::new(Duration::from_secs(60), Duration::from_secs(10)).expect("settings");
    let url = format!(
        "{}?hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}",
        cluster.url().replacen("127.0.0.1", NAME, 1)
    );
    let lease = runtime.block_on(async {
        let mut lease = Lease::open(&url, Holder::new("tls@test").expect("holder"), settings)
            .await
            .unwrap_or_else(|e| panic!("the lease over verify-full: {e}"));
        // A round trip: the migration's ROLLBACK is sent before this runtime stops.
        lease.current().await.unwrap_or_else(|e| panic!("{e}"));
        lease
    });
    assert!(encrypted(&cluster, "spellbridge-lease"), "the lease's connection is encrypted");
    drop(lease);

    let wrong = with(&cluster, NAME, &format!("sslmode=verify-full&sslrootcert={other}"));
    let error = open(&cluster, &wrong).expect_err("a certificate from another CA is refused");
    assert!(
        error.contains("PostgreSQL's certificate was refused")
            && error.contains(&format!("signed by the CA in sslrootcert={other}")),
        "{error}"
    );
    assert!(!error.contains(&cluster.url()), "the password is not shown: {error}");

    let by_address = with(&cluster, "127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}"));
    let error = open(&cluster, &by_address).expect_err("a certificate for another name is refused");
    assert!(error.contains("be for the host 127.0.0.1"), "{error}");
    let ca_only = with(&cluster, "127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}"));
    assert_eq!(open(&cluster, &ca_only), Ok(true), "verify-ca does not check the name");
}

#[test]
fn prefer_and_require_encrypt_when_the_server_offers_tls() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (cluster, _, _) = tls_cluster(dir.path());
    let plain = StoreUrl::parse(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(open(&cluster, &plain), Ok(true), "no sslmode is prefer, as libpq: encrypted");
    assert_eq!(open(&cluster, &with(&cluster, "127.0.0.1", "sslmode=require")), Ok(true));
    assert_eq!(open(&cluster, &with(&cluster, "127.0.0.1", "sslmode=disable")), Ok(false));
}

#[test]
fn require_is_refused_by_a_server_without_tls_and_prefer_goes_plain() {
    let cluster = Postgres::start_new().unwrap_or_else(|e| panic!("{e}"));
    let error =
        open(&cluster, &with(&cluster, "127.0.0.1", "sslmode=require")).expect_err("no TLS, no login");
    assert!(error.contains("server does not support TLS"), "{error}");
    let plain = StoreUrl::parse(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(open(&cluster, &plain), Ok(false), "prefer falls back to plain, as libpq");
}
