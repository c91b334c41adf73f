//! Identities of the protocol: members, ceremonies, rounds.

use crate::ChannelError;
use std::fmt;

fn validate(what: &'static str, value: &str) -> Result<(), ChannelError> {
    let ok = (1..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ChannelError::InvalidIdentifier {
            what,
            value: crate::text::quote(value, 80),
        })
    }
}

macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates and wraps an identifier (1-64 characters from [A-Za-z0-9._-]).
            pub fn new(value: impl Into<String>) -> Result<Self, ChannelError> {
                let value = value.into();
                validate($what, &value)?;
                Ok(Self(value))
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl TryFrom<String> for $name {
            type Error = ChannelError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::new(value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

identifier!(
    /// A member of a federation (an institution). Later issues bind it to an
    /// ed25519 identity key; it is a type, never a bare index.
    MemberId,
    "member id"
);
identifier!(
    /// A key ceremony: one collective key for a fixed set of members.
    CeremonyId,
    "ceremony id"
);

/// One aggregation round of a study.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RoundId(pub u64);

impl fmt::Display for RoundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_validated() {
        assert!(MemberId::new("hospital-01.eu_west").is_ok());
        for bad in ["", "a b", "é", "x/y", &"a".repeat(65)] {
            let err = MemberId::new(bad).unwrap_err();
            assert!(err.to_string().contains("member id"), "{err}");
        }
        assert!(CeremonyId::new("c1").is_ok());
        // Deserialisation goes through the validating constructor.
        assert!(MemberId::try_from("ok-1".to_string()).is_ok());
        assert!(MemberId::try_from("not ok".to_string()).is_err());
    }
}
