//! Typed identifiers. A string that names a network, a room or a player is never passed
//! around bare, so one cannot be used where another is meant.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps a name as this kind of id.
            pub fn new(name: impl Into<String>) -> Self {
                Self(name.into())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(name: &str) -> Self {
                Self(name.to_owned())
            }
        }
    };
}

id_type! {
    /// A chat network the daemon is connected to, by its configured name (`libera`,
    /// `matrix`, `console`).
    NetworkId
}

id_type! {
    /// A room on a network: an IRC channel (`#magic`) or a Matrix room id. Never parsed:
    /// Matrix room ids of room version 12 have no server part.
    RoomId
}

id_type! {
    /// A player as the games know them: an IRC account or nick, a Matrix user id, a linked
    /// player name, or in the console the name before the colon.
    PlayerId
}
