-- t-of-n ceremonies (issue 15): T per ceremony (NULL: n-of-n), each
-- member's dealing (its Shamir commitment and shares sealed to their
-- recipients, relayed as is) and each member's verdict on the shares it
-- received. The server cannot open a sealed share.

ALTER TABLE ceremonies ADD COLUMN threshold INTEGER;

CREATE TABLE threshold_dealings (
    ceremony   TEXT NOT NULL REFERENCES ceremonies(id),
    member     TEXT NOT NULL,
    bytes      BLOB NOT NULL,
    hash       BLOB NOT NULL,
    signature  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (ceremony, member)
);

CREATE TABLE dealing_verdicts (
    ceremony   TEXT NOT NULL REFERENCES ceremonies(id),
    member     TEXT NOT NULL,
    accepted   INTEGER NOT NULL,
    dealer     TEXT,
    reason     TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (ceremony, member)
);

-- A t-of-n round's decrypting set: the first T members that claim a place
-- once the aggregate exists (`position` 0..T-1); only they decrypt.
CREATE TABLE decryption_claims (
    study      TEXT NOT NULL,
    round      INTEGER NOT NULL,
    member     TEXT NOT NULL,
    position   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);
