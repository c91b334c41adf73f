-- Each contributor's signed digest of its own contribution on the round's
-- public challenge (fedhe_crypto::sum_digest, issue 16): members check the
-- aggregate against the sum of these digests instead of downloading every
-- contribution. `bytes` is the digest (8 bytes per residue), `hash` BLAKE3
-- of it, `signature` the contributor's signature of the digest statement.

CREATE TABLE sum_digests (
    study      TEXT NOT NULL,
    round      INTEGER NOT NULL,
    member     TEXT NOT NULL,
    bytes      BLOB NOT NULL,
    hash       BLOB NOT NULL,
    signature  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);
