//! `spellbridge check-config` reads the ECDSA key files operators make (issue 31): the
//! key Libera's guide makes (`openssl ecparam -genkey`: an `EC PARAMETERS` block, then
//! the SEC1 key), SEC1 alone, PKCS#8 with and without its public key, each made here by
//! `openssl`; and it refuses a key on another curve, naming the curve and how to make
//! a P-256 key.

use spellbridge_tests::harness::daemon::{CONFIG, Daemon};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");

/// Runs `openssl` in `daemon`'s directory.
fn openssl(daemon: &Daemon, args: &str) {
    let output = std::process::Command::new("openssl")
        .args(args.split(' '))
        .current_dir(daemon.dir())
        .output()
        .unwrap_or_else(|e| panic!("openssl is needed to make the test keys (apt-get install openssl): {e}"));
    assert!(output.status.success(), "openssl {args}: {}", String::from_utf8_lossy(&output.stderr));
}

/// `check-config` with `bot.pem` as the network's SASL key: exit success, and its output.
fn check(daemon: &Daemon) -> (bool, String) {
    let config = "prefix = \"!\"\n[store]\npath = \"games.db\"\n[[irc]]\nname = \"libera\"\n\
                  server = \"irc.libera.chat\"\nnick = \"spellbridge\"\nchannels = [\"#magic\"]\n\
                  [irc.sasl]\naccount = \"spellbridge\"\necdsa_key = \"bot.pem\"\n";
    daemon.set_config(config).unwrap_or_else(|e| panic!("{e}"));
    let output = daemon.command(&["check-config", "--config", CONFIG]).unwrap_or_else(|e| panic!("{e}"));
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn check_config_accepts_the_usual_p256_key_files() {
    for make in [
        "ecparam -genkey -name prime256v1 -out bot.pem",
        "ecparam -genkey -name prime256v1 -noout -out bot.pem",
        "genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out bot.pem",
    ] {
        let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
        openssl(&daemon, make);
        let (ok, out) = check(&daemon);
        assert!(ok, "openssl {make}: {out}");
    }
    // PKCS#8 without the public key.
    let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    openssl(&daemon, "ecparam -genkey -name prime256v1 -noout -out sec1.pem");
    openssl(&daemon, "ec -in sec1.pem -no_public -out sec1-bare.pem");
    openssl(&daemon, "pkcs8 -topk8 -nocrypt -in sec1-bare.pem -out bot.pem");
    let (ok, out) = check(&daemon);
    assert!(ok, "PKCS#8 without its public key: {out}");
}

#[test]
fn check_config_names_a_key_on_another_curve() {
    let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    openssl(&daemon, "ecparam -genkey -name secp384r1 -out bot.pem");
    let (ok, out) = check(&daemon);
    assert!(!ok, "refused: {out}");
    assert!(out.contains("sasl.ecdsa_key: ") && out.contains("holds a secp384r1 (P-384) key"), "{out}");
    assert!(out.contains("openssl ecparam -name prime256v1 -genkey -noout -out bot.pem"), "{out}");
}
