//! The world generator (`recount generate`): deterministic worlds of till uploads by seed and
//! preset, their corrections, the same world in other shapes, and a plant's world for the
//! manufacturing model. The lab never depends on it: it reads worlds only through the raw zone.

pub mod world;

// The lower crates under the names the code has always used.
use recount_core::money;
use recount_raw::{model, raw};
use recount_store as store;
