-- fedhe server schema, version 1, PostgreSQL: the same tables as
-- migrations/sqlite. Deadlines are columns (unix ms); every state change is a
-- compare-and-swap on `version`.
--
-- Integers are BIGINT (the store reads and binds 64-bit integers), bytes are
-- BYTEA, and booleans are 0/1 integers as in SQLite. Identifiers sort in
-- byte order (COLLATE "C"), as SQLite's BINARY collation does: members are
-- listed ORDER BY member, and that order (transcripts, the members a
-- decryption combines) must not depend on the server's locale.

CREATE TABLE ceremonies (
    id             TEXT COLLATE "C" PRIMARY KEY,
    parameter_set  TEXT NOT NULL,
    allow_insecure BIGINT NOT NULL,
    phase          TEXT NOT NULL,
    version        BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    deadline_at    BIGINT NOT NULL,
    crs_seed       BYTEA NOT NULL,
    collective_key BYTEA,
    transcript     TEXT,
    reason         TEXT
);

CREATE TABLE ceremony_members (
    ceremony             TEXT COLLATE "C" NOT NULL REFERENCES ceremonies(id),
    member               TEXT COLLATE "C" NOT NULL,
    identity_key         BYTEA NOT NULL,
    share_hash           BYTEA,
    commitment_signature TEXT,
    share                BYTEA,
    PRIMARY KEY (ceremony, member)
);

CREATE TABLE studies (
    id                   TEXT COLLATE "C" PRIMARY KEY,
    ceremony             TEXT COLLATE "C" NOT NULL REFERENCES ceremonies(id),
    spec                 TEXT NOT NULL,
    min_contributors     BIGINT NOT NULL,
    round_timeout_ms     BIGINT NOT NULL,
    decrypt_timeout_ms   BIGINT NOT NULL,
    created_at           BIGINT NOT NULL
);

CREATE TABLE rounds (
    study          TEXT COLLATE "C" NOT NULL REFERENCES studies(id),
    round          BIGINT NOT NULL,
    state          TEXT NOT NULL,
    version        BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    deadline_at    BIGINT NOT NULL,
    reason         TEXT,
    shape          TEXT,
    aggregate      BYTEA,
    aggregate_hash BYTEA,
    parts          BIGINT,
    result         TEXT,
    PRIMARY KEY (study, round)
);

CREATE TABLE contributions (
    study      TEXT COLLATE "C" NOT NULL,
    round      BIGINT NOT NULL,
    member     TEXT COLLATE "C" NOT NULL,
    bytes      BYTEA NOT NULL,
    hash       BYTEA NOT NULL,
    signature  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);

CREATE TABLE decryption_shares (
    study      TEXT COLLATE "C" NOT NULL,
    round      BIGINT NOT NULL,
    member     TEXT COLLATE "C" NOT NULL,
    bytes      BYTEA NOT NULL,
    hash       BYTEA NOT NULL,
    signature  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);

-- Request nonces seen, per identity key, for replay protection. Rows older
-- than the accepted clock skew are pruned.
CREATE TABLE nonces (
    identity_key BYTEA NOT NULL,
    nonce        TEXT NOT NULL,
    seen_at      BIGINT NOT NULL,
    PRIMARY KEY (identity_key, nonce)
);
CREATE INDEX nonces_seen_at ON nonces(seen_at);
