//! Config validation: defaults, bad values with clear messages, the shipped example.

use std::path::Path;
use std::time::Duration;

use super::*;

fn parse(text: &str) -> Result<Settings, ConfigError> {
    Settings::parse(text, Path::new("/etc/spellbridge/spellbridge.toml"))
}

/// The configured IRC networks, as the IRC kind read them.
/// An IRC network `libera` and a Matrix network `matrix` whose access token is a file
/// written in `dir`.
fn libera_and_matrix(dir: &Path) -> String {
    let token = dir.join("token");
    std::fs::write(&token, "secret\n").expect("write");
    format!(
        "[[irc]]\nname = \"libera\"\nserver = \"irc.libera.chat\"\nnick = \"sb\"\n\
         [[matrix]]\nname = \"matrix\"\nhomeserver = \"http://127.0.0.1:8008\"\n\
         user_id = \"@bot:localhost\"\naccess_token = {{ file = {:?} }}\n",
        token.display().to_string()
    )
}

fn irc(settings: &Settings) -> Vec<&IrcSettings> {
    settings.of_kind::<IrcSettings>()
}

/// The configured Matrix accounts, as the Matrix kind read them.
fn matrix(settings: &Settings) -> Vec<&MatrixSettings> {
    settings.of_kind::<MatrixSettings>()
}

#[test]
fn a_minimal_network_gets_safe_defaults() {
    let settings = parse(
        "[[irc]]\nname = \"libera\"\nserver = \"irc.libera.chat\"\nnick = \"sb\"\nchannels = [\"#magic\"]\n",
    )
    .expect("valid");
    let irc = &irc(&settings)[0];
    assert_eq!((irc.port, irc.tls), (6697, true));
    assert_eq!(irc.nicks, ["sb", "sb_", "sb__"]);
    assert_eq!(irc.flood, Some((4, Duration::from_secs(2))), "large-network safe flood control by default");
    assert_eq!(settings.database, Path::new("/etc/spellbridge/spellbridge.db"));
    assert_eq!(settings.prefix, "!");
}

#[test]
fn unknown_keys_and_bad_values_are_refused_with_the_fix() {
    let unknown = parse("prefx = \"!\"\n").expect_err("unknown key");
    assert!(unknown.to_string().contains("prefx"), "{unknown}");
    let channel = parse("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\nchannels = [\"magic\"]\n")
        .expect_err("bad channel");
    assert!(channel.to_string().contains("channels start with #"), "{channel}");
    let flood =
        parse("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\n[irc.flood]\ninterval = \"fast\"\n")
            .expect_err("bad duration");
    assert!(flood.to_string().contains("e.g. \"2s\""), "{flood}");
    let twice = parse("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\n[[irc]]\nname = \"x\"\nserver = \"t\"\nnick = \"m\"\n")
        .expect_err("duplicate");
    assert!(twice.to_string().contains("different name"), "{twice}");
    // A value of the wrong type names its key, in a network's section and in a game's.
    let port = parse("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\nport = \"six\"\n")
        .expect_err("a port in words");
    assert!(
        port.to_string().ends_with("[[irc]] `x`: `port`: invalid type: string \"six\", expected u16"),
        "{port}"
    );
    let cap = parse("[games.thaum]\ncoin_debt = \"yes\"\n").expect_err("a word for a flag");
    assert!(cap.to_string().contains("[games.thaum]: `coin_debt`: invalid type"), "{cap}");
}

/// Issue 31: an IRC network may ask for games' full form (a line per step).
#[test]
fn an_irc_network_is_told_games_compactly_unless_it_asks_for_the_full_form() {
    use spellbridge_core::Form;
    let network = |extra: &str| format!("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\n{extra}");
    assert_eq!(irc(&parse(&network("")).expect("valid"))[0].form, Form::Compact);
    for (value, form) in [("compact", Form::Compact), ("full", Form::Full)] {
        let settings = parse(&network(&format!("form = \"{value}\"\n"))).expect("valid");
        assert_eq!(irc(&settings)[0].form, form, "{value}");
    }
    let bad = parse(&network("form = \"long\"\n")).expect_err("not a form");
    assert_eq!(
        bad.to_string(),
        "/etc/spellbridge/spellbridge.toml: [[irc]] `x`: form `long` is not a form; write form = \"compact\" (the default: \
         a Duel round in three lines) or \"full\" (a line per step, as on Matrix)"
    );
}

#[test]
fn code_style_is_bold_unless_the_network_says_otherwise() {
    use spellbridge_adapters::irc::format::CodeStyle;
    let network = |extra: &str| format!("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\n{extra}");
    assert_eq!(irc(&parse(&network("")).expect("valid"))[0].code_style, CodeStyle::Bold);
    for (value, style) in
        [("bold", CodeStyle::Bold), ("monospace", CodeStyle::Monospace), ("plain", CodeStyle::Plain)]
    {
        let settings = parse(&network(&format!("code_style = \"{value}\"\n"))).expect("valid");
        assert_eq!(irc(&settings)[0].code_style, style, "{value}");
    }
    let bad = parse(&network("code_style = \"mono\"\n")).expect_err("not a style");
    assert_eq!(
        bad.to_string(),
        "/etc/spellbridge/spellbridge.toml: [[irc]] `x`: code_style `mono` is not a style; write code_style = \"bold\" (the default), \
         \"monospace\" (irssi shows it as a reverse Q) or \"plain\""
    );
}

#[test]
fn a_secret_from_an_unset_variable_names_it() {
    let error = parse("[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\npassword = { env = \"SB_TEST_UNSET_PASSWORD\" }\n")
        .expect_err("unset secret");
    assert!(error.to_string().contains("SB_TEST_UNSET_PASSWORD"), "{error}");
}

#[test]
fn the_shipped_example_config_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/spellbridge.example.toml");
    let text = std::fs::read_to_string(&path).expect("the example config exists");
    // The example reads its passwords from variables this test does not set.
    let dir = tempfile::tempdir().expect("temp dir");
    let secret = dir.path().join("sasl");
    std::fs::write(&secret, "pw\n").expect("write");
    let file = format!("{{ file = {:?} }}", secret.display().to_string());
    let text = text
        .replace("{ env = \"LIBERA_SASL_PASSWORD\" }", &file)
        .replace("{ env = \"MATRIX_PASSWORD\" }", &file);
    let settings = Settings::parse(&text, &path).expect("the example is valid");
    assert_eq!(matrix(&settings)[0].user_id, "@spellbridge:example.org");
    assert!(matrix(&settings)[0].board_images, "board pictures are on");
    let off = Settings::parse(&text.replace("board_images = true", "board_images = false"), &path)
        .expect("the example without pictures is valid");
    assert!(!matrix(&off)[0].board_images);
    assert!(!matrix(&settings)[0].dm_encryption, "the direct rooms the bot creates are unencrypted");
    let encrypted = Settings::parse(&text.replace("dm_encryption = false", "dm_encryption = true"), &path)
        .expect("the example with encrypted direct rooms is valid");
    assert!(matrix(&encrypted)[0].dm_encryption);
    assert_eq!(settings.bridges[0].edits, crate::relay::Edits::Diff);
    assert_eq!(
        irc(&settings)[0]
            .sasl
            .as_ref()
            .map(|s| (s.account.as_str(), s.password.as_ref().map(|p| p.expose()))),
        Some(("spellbridge", Some("pw")))
    );
}

#[test]
fn game_options_are_read_and_checked() {
    let snapshot = |settings: &Settings, game: &str| {
        use spellbridge_core::{PlayerId, Seat, TableSetup, Timestamp};
        let seat = |name: &str| Seat { player: PlayerId::new(name), choice: None };
        let setup = TableSetup {
            room: RoomId::new("#magic"),
            seats: vec![seat("alice"), seat("bob")],
            now: Timestamp(0),
        };
        settings.games.get(game).expect("the game").open(&setup).expect("opens").snapshot()
    };
    // The older sections and `[games.<name>]` read the same.
    for text in [
        "[thaum]\nschedule = \"manual\"\n[duel]\nstep_timeout = \"90s\"\n",
        "[games.thaum]\nschedule = \"manual\"\n[games.duel]\nstep_timeout = \"90s\"\n",
    ] {
        let settings = parse(text).expect("valid");
        assert_eq!(snapshot(&settings, "thaum")["options"]["schedule"], "manual", "{text}");
        assert_eq!(snapshot(&settings, "duel")["rules"]["step_timeout_secs"], 90, "{text}");
    }
    let twice =
        parse("[duel]\nstep_timeout = \"90s\"\n[games.duel]\nstep_timeout = \"90s\"\n").expect_err("twice");
    assert!(twice.to_string().contains("keep one of them"), "{twice}");
    let unknown = parse("[games.chess]\n").expect_err("no such game");
    assert!(unknown.to_string().contains("the games are: thaum, duel"), "{unknown}");
    let typo = parse("[games.thaum]\nschedul = \"manual\"\n").expect_err("unknown option");
    assert!(typo.to_string().contains("[games.thaum]: unknown field `schedul`"), "{typo}");
    let bad = parse("[duel]\nstep_timeout = \"soon\"\n").expect_err("bad duration");
    assert!(bad.to_string().contains("e.g. \"10m\""), "{bad}");
    let missing = parse("[duel]\nwizards = \"no-such-wizards.toml\"\n").expect_err("missing file");
    assert!(missing.to_string().contains("no-such-wizards.toml"), "{missing}");
}

#[test]
fn a_matrix_account_needs_one_way_to_log_in() {
    let both = parse(
        "[[matrix]]\nname = \"m\"\nhomeserver = \"http://127.0.0.1:8008\"\nuser_id = \"@bot:localhost\"\n",
    )
    .expect_err("no login");
    assert!(both.to_string().contains("exactly one of `password` or `access_token`"), "{both}");
    let bad_id = parse("[[matrix]]\nname = \"m\"\nhomeserver = \"http://h\"\nuser_id = \"bot\"\n")
        .expect_err("bad id");
    assert!(bad_id.to_string().contains("full Matrix id"), "{bad_id}");
}

#[test]
fn a_matrix_room_in_a_bridge_is_given_by_its_id_or_alias() {
    let dir = tempfile::tempdir().expect("temp dir");
    let networks = libera_and_matrix(dir.path());
    let bridge = |matrix_room: &str| {
        format!(
            "{networks}[[bridge]]\nname = \"magic\"\nrooms = [{{ network = \"libera\", room = \"#magic\" }}, \
             {{ network = \"matrix\", room = \"{matrix_room}\" }}]\n"
        )
    };
    let alias = parse(&bridge("#magic:localhost")).expect("an alias (issue 17)");
    assert_eq!(alias.bridges[0].rooms[1].1.as_str(), "#magic:localhost", "looked up when the daemon runs");
    let neither = parse(&bridge("magic")).expect_err("neither an id nor an alias");
    assert!(
        neither.to_string().contains("`magic` on matrix is neither a Matrix room id nor an alias"),
        "{neither}"
    );
    assert!(neither.to_string().contains("room = \"#magic:example.org\""), "{neither}");
    assert!(neither.to_string().contains("room = \"!abc:example.org\""), "{neither}");
    let no_server = parse(&bridge("#magic")).expect_err("an alias without its server");
    assert!(no_server.to_string().contains("neither a Matrix room id nor an alias"), "{no_server}");
    let settings = parse(&bridge("!abc:localhost")).expect("a room id");
    assert_eq!(settings.bridges[0].rooms[1].1.as_str(), "!abc:localhost");
    assert_eq!(settings.bridges[0].relay_lines, 5, "five lines of a relayed message by default");
    let capped = parse(&format!("{}relay_lines = 2\n", bridge("!abc:localhost"))).expect("relay_lines");
    assert_eq!(capped.bridges[0].relay_lines, 2);
    let none = parse(&format!("{}relay_lines = 0\n", bridge("!abc:localhost"))).expect_err("zero lines");
    assert!(none.to_string().contains("give at least 1"), "{none}");
    use crate::relay::rate::SpeakerRate;
    assert_eq!(settings.bridges[0].speaker_rate, Some(SpeakerRate::default()), "a speaker rate by default");
    let rate = |text: &str| parse(&format!("{}speaker_rate = {text}\n", bridge("!abc:localhost")));
    assert_eq!(rate("false").expect("off").bridges[0].speaker_rate, None);
    let slow = rate("{ burst = 2, every = 3 }").expect("a rate").bridges[0].speaker_rate;
    assert_eq!(slow, Some(SpeakerRate { burst: 2, every_secs: 3 }));
    let zero = rate("{ burst = 0, every = 1 }").expect_err("no burst");
    assert!(
        zero.to_string().contains("burst at least 1") && zero.to_string().contains("speaker_rate = false"),
        "{zero}"
    );
    assert_eq!(settings.bridges[0].edits, crate::relay::Edits::Diff, "edits as `s/old/new/` by default");
    for (word, edits) in [("resend", crate::relay::Edits::Resend), ("off", crate::relay::Edits::Off)] {
        let set = parse(&format!("{}edits = \"{word}\"\n", bridge("!abc:localhost"))).expect("edits");
        assert_eq!(set.bridges[0].edits, edits);
    }
    let wrong = parse(&format!("{}edits = \"all\"\n", bridge("!abc:localhost"))).expect_err("no such way");
    assert!(wrong.to_string().contains("edits = \"all\" is not a way to relay edits"), "{wrong}");
    assert!(wrong.to_string().contains("\"resend\""), "it says what to write instead: {wrong}");
}

#[test]
fn every_network_has_a_command_limit_by_default() {
    let dir = tempfile::tempdir().expect("temp dir");
    let networks = libera_and_matrix(dir.path());
    let settings = parse(&networks).expect("valid");
    assert_eq!(irc(&settings)[0].user_limit, Some((8, Duration::from_secs(10))));
    assert_eq!(matrix(&settings)[0].user_limit, Some((8, Duration::from_secs(10))), "Matrix is limited too");
    let off = parse(&format!("{networks}[matrix.user_limit]\nenabled = false\n")).expect("valid");
    assert_eq!(matrix(&off)[0].user_limit, None);
    let long = parse(&format!("{networks}[matrix.user_limit]\nwindow = \"2h\"\n")).expect_err("too long");
    assert!(long.to_string().contains("up to an hour"), "{long}");
}

#[test]
fn the_challenge_lifetime_defaults_to_ten_minutes_and_a_bad_one_is_refused() {
    assert_eq!(parse("").expect("valid").challenge_lifetime, 600);
    assert_eq!(parse("[duel]\nchallenge_lifetime = \"1h\"\n").expect("valid").challenge_lifetime, 3600);
    for bad in ["30s", "2d", "soon"] {
        let error = parse(&format!("[duel]\nchallenge_lifetime = \"{bad}\"\n")).expect_err(bad);
        assert!(error.to_string().contains("from 1m to 24h; write e.g. \"10m\""), "{error}");
    }
}

#[test]
fn an_ecdsa_key_is_read_with_the_config_and_needs_no_password() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("spellbridge.toml");
    let network = "[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\n";
    let with =
        |sasl: &str| Settings::parse(&format!("{network}[irc.sasl]\naccount = \"bot\"\n{sasl}"), &config);
    let missing = with("ecdsa_key = \"bot.pem\"\n").expect_err("no such file");
    assert!(missing.to_string().contains("sasl.ecdsa_key: cannot read the ECDSA key"), "{missing}");
    let secret = p256_key_pem();
    std::fs::write(dir.path().join("bot.pem"), secret).expect("write");
    let settings = with("ecdsa_key = \"bot.pem\"\n").expect("a key, no password");
    let sasl = irc(&settings)[0].sasl.as_ref().expect("sasl");
    assert_eq!(
        sasl.ecdsa_key.as_deref(),
        Some(dir.path().join("bot.pem").as_path()),
        "relative to the config"
    );
    let listed = with("mechanisms = [\"ECDSA-NIST256P-CHALLENGE\"]\n").expect_err("no key");
    assert!(listed.to_string().contains("add ecdsa_key"), "{listed}");
}

/// A P-256 private key in SEC1 PEM, made for this test by `openssl ecparam -genkey`.
fn p256_key_pem() -> &'static str {
    "-----BEGIN EC PRIVATE KEY-----\n\
     MHcCAQEEIL8DbeGJvgF/4q+yljZ9mwNyYovSAuzeS4+m+rbrcHs2oAoGCCqGSM49\n\
     AwEHoUQDQgAEUEYLPPI9lPxBWIISx9GLtTCS+YbV3yGyQzxjEx68JI4/cOGSemC3\n\
     eb4i6f0Q+XOjDLxxjeDYuATfpXz49Km63Q==\n\
     -----END EC PRIVATE KEY-----\n"
}

/// Issue 19: a network's `language`, its `languages` per room and a bridge room's
/// `language`; a value spellbridge does not speak says what to write.
#[test]
fn languages_are_chosen_per_network_room_and_bridge_room() {
    let text = "[[irc]]\nname = \"libera\"\nserver = \"s\"\nnick = \"n\"\nchannels = [\"#magic\", \"#mofa\"]\n\
                languages = { \"#mofa\" = \"zh-CN\" }\n\
                [[irc]]\nname = \"oftc\"\nserver = \"t\"\nnick = \"n\"\nlanguage = \"zh\"\n\
                [[bridge]]\nname = \"b\"\nrooms = [{ network = \"libera\", room = \"#magic\" }, \
                { network = \"oftc\", room = \"#magic\", language = \"en\" }]\n";
    let settings = parse(text).expect("valid");
    let languages = &settings.languages;
    let (libera, oftc) = (NetworkId::new("libera"), NetworkId::new("oftc"));
    assert_eq!(languages.room(&libera, &RoomId::new("#magic")), spellbridge_core::Language::En);
    assert_eq!(languages.room(&libera, &RoomId::new("#mofa")), spellbridge_core::Language::ZhCn);
    assert_eq!(languages.room(&oftc, &RoomId::new("#magic")), spellbridge_core::Language::En);
    assert_eq!(languages.network(&oftc), spellbridge_core::Language::ZhCn);
    let bad = parse(&text.replace("\"zh\"", "\"fr\"")).expect_err("no French");
    assert!(
        bad.to_string().contains("[[irc]] `oftc`: language = \"fr\" is not a language")
            && bad.to_string().contains("\"zh-CN\""),
        "{bad}"
    );
    let stray = parse(&text.replace("\"#mofa\" =", "\"#nowhere\" =")).expect_err("not a room");
    assert!(stray.to_string().contains("languages names #nowhere"), "{stray}");
    let bridge = parse(&text.replace("language = \"en\" }", "language = \"de\" }")).expect_err("bad");
    assert!(bridge.to_string().contains("[[bridge]] `b`: the language of #magic on oftc"), "{bridge}");
}

#[test]
fn hidden_rooms_are_read_as_their_network_names_rooms_and_malformed_ones_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let networks = libera_and_matrix(dir.path());
    let config =
        |rooms: &str| format!("{networks}[http]\nlisten = \"127.0.0.1:9180\"\nhidden_rooms = [{rooms}]\n");
    let settings =
        parse(&config(r#""libera/#secret", "libera/#a/b", "matrix/#staff:localhost", "matrix/!abc""#))
            .expect("valid");
    let place = |n: &str, r: &str| (NetworkId::new(n), RoomId::new(r));
    assert_eq!(
        settings.hidden_rooms,
        [
            place("libera", "#secret"),
            place("libera", "#a/b"),
            place("matrix", "#staff:localhost"),
            place("matrix", "!abc")
        ]
    );
    let matrix = settings.networks.iter().find(|n| n.name() == "matrix").expect("matrix");
    let alias = http::describe_hidden(matrix.as_ref(), &RoomId::new("#staff:localhost"));
    assert!(alias.contains("matrix/#staff:localhost (an alias: looked up"), "{alias}");
    let id = http::describe_hidden(matrix.as_ref(), &RoomId::new("!abc"));
    assert!(id.contains("matrix/!abc (a room as its messages name it)"), "{id}");
    for (bad, says) in [
        ("oftc/#secret", "must be network/room with a configured network"),
        ("libera/", "must be network/room"),
        ("#secret", "must be network/room"),
        ("", "must be network/room"),
        ("matrix/staff", "neither a Matrix room id nor an alias"),
        ("matrix/#staff", "neither a Matrix room id nor an alias"),
        ("matrix/#staff:local host", "neither a Matrix room id nor an alias"),
    ] {
        let error = parse(&config(&format!("{bad:?}"))).expect_err(bad).to_string();
        assert!(error.contains(says) && error.contains(&format!("`{bad}`")), "{bad}: {error}");
        assert!(
            error.contains("e.g. \"") || error.contains("write it as \"matrix/<room>\""),
            "{bad}: {error}"
        );
    }
}

#[test]
fn tls_trust_with_tls_off_is_for_the_sts_upgrade_but_a_client_certificate_is_refused() {
    let network = "[[irc]]\nname = \"x\"\nserver = \"s\"\nnick = \"n\"\ntls = false\n";
    let pin = "tls_pin = \"sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\"\n";
    let settings = parse(&format!("{network}{pin}")).expect("a pin for the TLS an STS policy moves to");
    assert!(!irc(&settings)[0].tls && irc(&settings)[0].tls_options.pin.is_some());
    let certificate =
        parse(&format!("{network}client_cert = \"bot.pem\"\n")).expect_err("no TLS to present it");
    assert!(
        certificate.to_string().contains("client_cert and client_key apply only to TLS"),
        "{certificate}"
    );
}

#[test]
fn store_url_selects_postgresql_and_a_bad_one_is_refused_without_its_password() {
    let settings =
        parse("[store]\nurl = \"postgres://bridge:s3cret@127.0.0.1:5433/games\"\n").expect("valid");
    let url = settings.postgres.as_ref().expect("PostgreSQL chosen");
    assert_eq!(url.shown(), "postgres://bridge@127.0.0.1:5433/games");
    assert!(!format!("{settings:?}").contains("s3cret"), "the settings never show the password");
    assert!(
        parse("[store]\npath = \"games.db\"\n").expect("valid").postgres.is_none(),
        "SQLite stays the default"
    );
    let both = parse("[store]\npath = \"games.db\"\nurl = \"postgres://bridge:s3cret@db/games\"\n")
        .expect_err("both engines");
    let both = both.to_string();
    assert!(both.contains("keep path for SQLite") && both.contains("or url for PostgreSQL"), "{both}");
    assert!(!both.contains("s3cret"), "{both}");
    for bad in [
        "mysql://bridge:s3cret@db/games",
        "postgres://bridge:s3cret@db:port/games",
        "postgres://bridge:s3cret@db",
    ] {
        let error = parse(&format!("[store]\nurl = \"{bad}\"\n")).expect_err("bad url").to_string();
        assert!(error.contains("postgres://USER:PASSWORD@HOST:PORT/DATABASE"), "{bad}: {error}");
        assert!(!error.contains("s3cret"), "{bad}: {error}");
    }
}

#[test]
fn store_lease_is_read_with_postgresql_only_and_a_bad_one_says_what_to_write() {
    let url = "url = \"postgres://bridge:s3cret@127.0.0.1:5433/games\"\n";
    let settings = parse(&format!("[store]\n{url}lease = \"10s\"\n")).expect("valid");
    assert_eq!(settings.lease.ttl(), std::time::Duration::from_secs(10));
    assert_eq!(settings.lease.renew_every(), std::time::Duration::from_secs(2), "a fifth of it");
    let default = parse(&format!("[store]\n{url}")).expect("valid").lease;
    assert_eq!(default, crate::leader::LeaseSettings::default(), "5 s, renewed every second");
    for bad in ["0s", "601s", "5", "soon", "-5s", "\u{202e}5s"] {
        let error = parse(&format!("[store]\n{url}lease = \"{bad}\"\n")).expect_err(bad).to_string();
        assert!(error.contains("lease = \"5s\"") && error.contains("1s to 600s"), "{bad}: {error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
    let on_sqlite = parse("[store]\nlease = \"5s\"\n").expect_err("no lease on SQLite").to_string();
    assert!(on_sqlite.contains("remove it"), "{on_sqlite}");
}

#[test]
fn matrix_bot_mode_on_postgresql_takes_an_access_token_and_a_password_says_what_to_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "hunter2\n").expect("write");
    let matrix = |login: &str| {
        format!(
            "[[matrix]]\nname = \"matrix\"\nhomeserver = \"http://127.0.0.1:8008\"\n\
             user_id = \"@bot:localhost\"\n{login} = {{ file = {:?} }}\n",
            secret.display().to_string()
        )
    };
    let url = "[store]\nurl = \"postgres://bridge:s3cret@127.0.0.1:5433/games\"\n";
    let error = parse(&format!("{url}{}", matrix("password"))).expect_err("a password on PostgreSQL");
    let error = error.to_string();
    assert!(error.contains("[[matrix]] `matrix`") && error.contains("access_token = { file"), "{error}");
    assert!(!error.contains("hunter2") && !error.contains("s3cret"), "no secret in {error}");
    parse(&format!("{url}{}", matrix("access_token"))).expect("an access token on PostgreSQL");
    parse(&matrix("password")).expect("a password on SQLite, as before");
}
