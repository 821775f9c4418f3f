//! The daemon's integration tests, one binary (each test file would otherwise link
//! matrix-sdk, rustls and SQLite on its own). A module per feature; run one with
//! `cargo test -p spellbridge --test daemon ops::`. The ones that start servers need
//! InspIRCd, Atheme or Synapse (`bash scripts/test.sh` installs them); without them they
//! fail with the harness's message, they never skip.

mod common;

mod appservice;
mod board_pictures;
mod bridge;
mod components;
mod connect;
mod dice;
mod durability;
mod failover;
mod irc;
mod irc_login;
mod irc_security;
mod key_files;
mod leader;
mod matrix;
mod ops;
mod ops_listener;
mod reload;
mod router_bridges;
mod router_identities;
mod router_prefix;
mod router_properties;
mod router_turns;
mod rules;
mod run_on_postgres;
mod site;
mod standby;
mod store;
mod store_engines;
mod store_tls;
