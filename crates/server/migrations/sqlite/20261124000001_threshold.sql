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
