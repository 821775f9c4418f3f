//! Which marks a relayed line gives its speaker (issue 29, item 3; [`Marks`]): `?` for
//! a nick nobody is logged in to where the network has accounts (the transport says so,
//! [`Inbound::guest`]), and the speaker's network when their bridge joins rooms of two or
//! more networks whose identities are only their network's (IRC), so that `alice` of one
//! and `alice` of another never look alike; unless the name is the same player on every
//! such network (linked identities, `!link`).

use spellbridge_core::{Inbound, PlayerId};

use super::{Place, Router};
use crate::identity::Scope;
use crate::relay::speaker::Marks;

impl Router {
    /// The marks of `inbound`'s speaker, who plays as `me`, relayed from `here`.
    pub(super) fn speaker_marks(&self, inbound: &Inbound, me: &PlayerId, here: &Place) -> Marks {
        let network_scoped =
            |network: &spellbridge_core::NetworkId| self.options.scopes.get(network) == Some(&Scope::Network);
        let own = &inbound.network;
        let others: Vec<_> = self
            .relay
            .rooms(here)
            .into_iter()
            .map(|place| place.network)
            .filter(|network| network != own && network_scoped(network))
            .collect();
        let name = PlayerId::new(inbound.display_name.as_str());
        let same_player_everywhere =
            others.iter().all(|network| self.identities.directory.player(network, &name) == *me);
        Marks {
            guest: inbound.guest,
            network: network_scoped(own) && !others.is_empty() && !same_player_everywhere,
        }
    }
}
