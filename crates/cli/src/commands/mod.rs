//! One module per `fedhe` subcommand.
