//! One module per `fedhe` subcommand.

pub mod gp;
pub mod json_input;
pub mod objective;
