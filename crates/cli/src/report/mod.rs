//! `fedhe report`: summaries, significance tests, the comparison with a
//! published table and convergence plots, from a `results.json`.
//!
//! Entities and algorithms are kept apart: [`results`] reads and groups the
//! runs, `fedhe_stats` holds the tests, [`compare`] applies them the way the
//! paper's Tables 1 and 5 do, [`baseline`] reads a published table,
//! [`peers`] sets other libraries' runs beside the reference, and [`table`]
//! and [`plot`] write the Markdown and the PNGs.

pub mod baseline;
pub mod compare;
pub mod peers;
pub mod plot;
pub mod results;
pub mod table;
