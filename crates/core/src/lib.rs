//! recount's core: the rules and the domain's words, with no I/O but the progress line on
//! stderr. Every other crate of the workspace may use it; it uses none of them.
//!
//! The few functions a parser calls for every line (a business date, the window's verdicts, a
//! checked sum) are `#[inline]`: the release profile has no link-time optimisation, so a
//! non-generic function is not inlined across a crate boundary without it.

pub mod env;
pub mod error;
pub mod money;
pub mod progress;
pub mod rules;
pub mod sanitize;
pub mod tz;
