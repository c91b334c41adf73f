-- Each recipient's slice of a threshold dealing: the dealer's commitment
-- with the one share sealed to that recipient (a ThresholdDealing wire
-- object), cut once when the dealing is accepted. Serving a member its
-- shares then reads one small row per dealer (135 kB at 100 members on the
-- default set) instead of decoding the whole dealing (13 MB) on every
-- request. threshold_dealings keeps the hash and signature of the whole
-- upload; from this migration on its `bytes` holds the dealer's commitment
-- alone (a shamir-commitment wire object).

CREATE TABLE threshold_dealing_slices (
    ceremony   TEXT NOT NULL,
    dealer     TEXT NOT NULL,
    recipient  TEXT NOT NULL,
    bytes      BLOB NOT NULL,
    PRIMARY KEY (ceremony, dealer, recipient),
    FOREIGN KEY (ceremony, dealer) REFERENCES threshold_dealings(ceremony, member)
);
