//! What a player is told when their message could not be saved: one of a few Fluent
//! messages (`notice-store-…` in locales/*/notice.ftl), chosen by the kind of store
//! failure. The failure itself (which names the database's host, user and port, or the
//! SQLite file's path) goes to the log only, never to a player.

use spellbridge_core::Language;
use spellbridge_core::locale::{self, Args};

use super::StoreError;

/// Why a message was not saved, in `language`'s words, without any detail of the store.
pub fn reason(error: &StoreError, language: Language) -> String {
    locale::text(language, reason_id(error), &Args::new())
}

/// The Fluent id of [`reason`].
fn reason_id(error: &StoreError) -> &'static str {
    match error {
        StoreError::Unreachable { .. } | StoreError::Postgres { .. } | StoreError::Thread { .. } => {
            "notice-store-unreachable"
        }
        StoreError::CommitUnknown { .. } => "notice-store-broke",
        StoreError::Fenced { .. } | StoreError::NoLease { .. } => "notice-store-handover",
        StoreError::Locked { .. } => "notice-store-busy",
        StoreError::Full { .. } => "notice-store-full",
        _ => "notice-store-failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Failures as the PostgreSQL and SQLite engines make them, naming a host, a user, a
    /// port and a path a player must never see.
    fn failures() -> Vec<StoreError> {
        let target = "postgres://bridge_admin@db-7.internal.example:6432/games".to_owned();
        vec![
            StoreError::Unreachable {
                target: target.clone(),
                why: "error connecting to server: Connection refused (db-7.internal.example:6432)".to_owned(),
            },
            StoreError::CommitUnknown { target: target.clone() },
            StoreError::NoLease { target },
            StoreError::Locked { path: "/srv/secret-dir/games.db".into() },
            StoreError::BadRow { path: "/srv/secret-dir/games.db".into(), detail: "x".to_owned() },
        ]
    }

    #[test]
    fn an_unreachable_store_is_told_in_both_languages() {
        let error = &failures()[0];
        assert_eq!(reason(error, Language::En), "the store cannot be reached just now; I will keep trying");
        assert_eq!(reason(error, Language::ZhCn), "暂时连不上存储；我会继续尝试");
    }

    #[test]
    fn no_reason_names_the_database_host_user_port_or_path() {
        for error in failures() {
            let logged = error.to_string();
            assert!(logged.contains("db-7") || logged.contains("secret-dir"), "the log has it: {logged}");
            for language in [Language::En, Language::ZhCn] {
                let told = reason(&error, language);
                assert!(!told.is_empty());
                for secret in
                    ["db-7", "internal", "bridge_admin", "6432", "postgres", "secret-dir", "games.db"]
                {
                    assert!(!told.contains(secret), "{language:?} {told:?} names {secret}");
                }
            }
        }
    }
}
