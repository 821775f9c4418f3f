//! A command's answer as the router builds it, before it knows whether the command
//! changed anything.

use crate::turn::Outbound;

/// A command's answer, before the router knows whether it changed anything: `query` is
/// set by the paths that answer questions.
pub(super) struct Answer {
    pub(super) outbound: Vec<Outbound>,
    pub(super) query: bool,
}

impl From<Vec<Outbound>> for Answer {
    fn from(outbound: Vec<Outbound>) -> Answer {
        Answer { outbound, query: false }
    }
}
