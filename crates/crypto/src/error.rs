use crate::MemberId;
use fedhe_ring::RingError;
use thiserror::Error;

/// Everything that can go wrong in the encrypted-sum channel. Messages name the
/// offending value or setting and never contain secret material.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ChannelError {
    /// No parameter set has this name or identifier.
    #[error("unknown parameter set '{0}' (known: n8192-q124, n8192-q186, toy-n1024)")]
    UnknownParameterSet(String),
    /// The parameter set is below 128-bit security and insecure sets were not allowed.
    #[error(
        "parameter set {name} gives less than 128-bit security (log2 q = {log_q} at N = {degree} \
         exceeds the HomomorphicEncryption.org bound); it is for tests only: pass --allow-insecure \
         to use it anyway"
    )]
    InsecureParameters {
        /// The set's name.
        name: &'static str,
        /// ⌈log2 q⌉.
        log_q: u32,
        /// N.
        degree: usize,
    },
    /// A ring-level error (mismatched operands, malformed residues).
    #[error("ring: {0}")]
    Ring(#[from] RingError),
    /// An identifier is empty, too long or uses characters outside [A-Za-z0-9._-].
    #[error("invalid {what} {value}: use 1 to 64 characters from A-Z a-z 0-9 . _ -")]
    InvalidIdentifier {
        /// What kind of identifier.
        what: &'static str,
        /// The value given, quoted with control characters escaped
        /// ([`crate::text::quote`]; public: identifiers are not secret).
        value: String,
    },
    /// A member appears twice where each must appear once.
    #[error("member {0} appears more than once")]
    DuplicateMember(MemberId),
    /// A member is not part of the ceremony.
    #[error("member {0} is not a member of this ceremony")]
    UnknownMember(MemberId),
    /// A member's decryption share is missing (n-of-n decryption needs all of them).
    #[error("the decryption share of member {0} is missing; every member's share is needed")]
    MissingShare(MemberId),
    /// Objects built for different ceremonies, parameter sets or encodings were mixed.
    #[error("mismatch: {0}")]
    Mismatch(String),
    /// A member was asked to decrypt the same round twice.
    #[error("member {member} already produced a decryption share for round {round}")]
    AlreadyDecrypted {
        /// The member.
        member: MemberId,
        /// The round.
        round: u64,
    },
    /// Too few members contributed to a round.
    #[error("round {round} has {got} contributions; at least {required} are required")]
    TooFewContributors {
        /// The round.
        round: u64,
        /// Contributions received.
        got: usize,
        /// Contributions required.
        required: usize,
    },
    /// The fixed-point codec refused a value or a configuration.
    #[error("codec: {0}")]
    Codec(#[from] CodecError),
    /// A wire object could not be decoded.
    #[error("wire format: {0}")]
    Wire(#[from] WireError),
    /// Threshold ceremony or decryption ([`crate::threshold`]).
    #[error("threshold: {0}")]
    Threshold(#[from] crate::threshold::ThresholdError),
    /// A networked channel failed (server unreachable, round failed, a member
    /// refused to decrypt); the message says which and why.
    #[error("network channel: {0}")]
    Transport(String),
}

/// Errors of the fixed-point codec (DESIGN.md §3). It never wraps silently.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CodecError {
    /// A value is NaN or infinite.
    #[error("value {index} is not finite ({value})")]
    NotFinite {
        /// Position in the vector.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A value exceeds the declared bound.
    #[error("value {index} = {value} exceeds the declared bound |x| <= {bound}")]
    OutOfBound {
        /// Position in the vector.
        index: usize,
        /// The value.
        value: f64,
        /// The declared bound B.
        bound: f64,
    },
    /// The declared bound is not a positive finite number.
    #[error("the declared bound must be positive and finite, got {0}")]
    InvalidBound(f64),
    /// The number of members must be at least one.
    #[error("the number of members must be at least 1")]
    NoMembers,
    /// n·B·2^f could reach the plaintext range: the sum might wrap around.
    #[error(
        "{members} members x bound {bound} x 2^{fractional_bits} could reach the plaintext range \
         2^{plaintext_bits:.1} of parameter set {set} (with {guard_bits} guard bits); lower the \
         bound, the fractional bits or the number of members, or use a wider parameter set"
    )]
    Overflow {
        /// Number of members n.
        members: usize,
        /// Declared bound B.
        bound: f64,
        /// Fractional bits f.
        fractional_bits: u32,
        /// log2 t of the plaintext modulus.
        plaintext_bits: f64,
        /// Guard bits kept above the largest valid sum.
        guard_bits: u32,
        /// The parameter set.
        set: &'static str,
    },
    /// The two-limb encoding cannot keep the precision it promises.
    #[error(
        "the two-limb encoding cannot split at {split_bits} bits: {members} members with bound \
         {bound} leave {fractional_bits} fractional bits on parameter set {set}, and the split \
         needs 1 <= split bits <= fractional bits and a bound of at least 1; lower the split, \
         the bound or the number of members, or use one limb"
    )]
    TwoLimbPrecision {
        /// Number of members n.
        members: usize,
        /// Declared bound B.
        bound: f64,
        /// Fractional bits f the codec keeps.
        fractional_bits: u32,
        /// The split bits s asked for.
        split_bits: u32,
        /// The parameter set.
        set: &'static str,
    },
    /// The decryption noise of this many members would not fit the modulus.
    #[error("parameter set {set} cannot hold the decryption noise of {members} members")]
    TooManyMembers {
        /// The parameter set.
        set: &'static str,
        /// Number of members n.
        members: usize,
    },
    /// A decoded sum lies outside every valid sum: a share is missing or the aggregate is corrupt.
    #[error(
        "decoded sum at index {index} is outside the range of any valid sum; a decryption share \
         is missing or the aggregate is corrupt"
    )]
    DecodedOutOfRange {
        /// Position in the vector.
        index: usize,
    },
    /// The plaintexts do not hold the requested number of values.
    #[error("{values} values do not fit {plaintexts} plaintexts of {slots} slots")]
    Length {
        /// Values requested.
        values: usize,
        /// Plaintexts given.
        plaintexts: usize,
        /// Slots per plaintext.
        slots: usize,
    },
}

/// Errors of the wire format. Every decoder returns one of these on malformed input.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The input ends before the object does.
    #[error("truncated: needed {needed} bytes at offset {offset}, {available} available")]
    Truncated {
        /// Where reading stopped.
        offset: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The input does not start with the fedhe magic bytes.
    #[error("not a fedhe object (bad magic bytes)")]
    BadMagic,
    /// The format version is not supported.
    #[error("unsupported format version {0}")]
    UnsupportedVersion(u16),
    /// The object kind is unknown or not the one expected.
    #[error("unexpected object kind {found:#06x} (expected {expected})")]
    UnexpectedKind {
        /// Kind found.
        found: u16,
        /// What was expected.
        expected: &'static str,
    },
    /// The parameter set is unknown or not the one expected.
    #[error("parameter set id {found:#06x} does not match the expected {expected:#06x}")]
    ParameterSetMismatch {
        /// Id found.
        found: u16,
        /// Id expected.
        expected: u16,
    },
    /// The checksum does not match the content: the object was corrupted.
    #[error("checksum mismatch: the object is corrupted")]
    Checksum,
    /// The declared payload length disagrees with the input.
    #[error("declared payload length {declared} but {actual} bytes follow the header")]
    LengthMismatch {
        /// Length declared in the header.
        declared: u64,
        /// Length present.
        actual: u64,
    },
    /// A field has an invalid value.
    #[error("invalid field {field}: {reason}")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// Bytes remain after the payload was decoded.
    #[error("{0} unexpected trailing bytes in the payload")]
    TrailingBytes(usize),
}
