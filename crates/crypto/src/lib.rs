//! Encrypted-sum channel.
