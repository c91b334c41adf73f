-- fedhe server schema, version 1. Deadlines are columns (unix ms); every
-- state change is a compare-and-swap on `version`.

CREATE TABLE ceremonies (
    id             TEXT PRIMARY KEY,
    parameter_set  TEXT NOT NULL,
    allow_insecure INTEGER NOT NULL,
    phase          TEXT NOT NULL,
    version        INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    deadline_at    INTEGER NOT NULL,
    crs_seed       BLOB NOT NULL,
    collective_key BLOB,
    transcript     TEXT,
    reason         TEXT
);

CREATE TABLE ceremony_members (
    ceremony             TEXT NOT NULL REFERENCES ceremonies(id),
    member               TEXT NOT NULL,
    identity_key         BLOB NOT NULL,
    share_hash           BLOB,
    commitment_signature TEXT,
    share                BLOB,
    PRIMARY KEY (ceremony, member)
);

CREATE TABLE studies (
    id                   TEXT PRIMARY KEY,
    ceremony             TEXT NOT NULL REFERENCES ceremonies(id),
    spec                 TEXT NOT NULL,
    min_contributors     INTEGER NOT NULL,
    round_timeout_ms     INTEGER NOT NULL,
    decrypt_timeout_ms   INTEGER NOT NULL,
    created_at           INTEGER NOT NULL
);

CREATE TABLE rounds (
    study          TEXT NOT NULL REFERENCES studies(id),
    round          INTEGER NOT NULL,
    state          TEXT NOT NULL,
    version        INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    deadline_at    INTEGER NOT NULL,
    reason         TEXT,
    shape          TEXT,
    aggregate      BLOB,
    aggregate_hash BLOB,
    parts          INTEGER,
    result         TEXT,
    PRIMARY KEY (study, round)
);

CREATE TABLE contributions (
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

CREATE TABLE decryption_shares (
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

-- Request nonces seen, per identity key, for replay protection. Rows older
-- than the accepted clock skew are pruned.
CREATE TABLE nonces (
    identity_key BLOB NOT NULL,
    nonce        TEXT NOT NULL,
    seen_at      INTEGER NOT NULL,
    PRIMARY KEY (identity_key, nonce)
);
CREATE INDEX nonces_seen_at ON nonces(seen_at);
