//! In-memory transports.
