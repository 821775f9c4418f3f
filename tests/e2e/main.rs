//! End-to-end tests (scenarios land with the console).
