-- t-of-n ceremonies (issue 15); the same tables as migrations/sqlite.

ALTER TABLE ceremonies ADD COLUMN threshold BIGINT;

CREATE TABLE threshold_dealings (
    ceremony   TEXT COLLATE "C" NOT NULL REFERENCES ceremonies(id),
    member     TEXT COLLATE "C" NOT NULL,
    bytes      BYTEA NOT NULL,
    hash       BYTEA NOT NULL,
    signature  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (ceremony, member)
);

CREATE TABLE dealing_verdicts (
    ceremony   TEXT COLLATE "C" NOT NULL REFERENCES ceremonies(id),
    member     TEXT COLLATE "C" NOT NULL,
    accepted   BIGINT NOT NULL,
    dealer     TEXT,
    reason     TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (ceremony, member)
);

CREATE TABLE decryption_claims (
    study      TEXT COLLATE "C" NOT NULL,
    round      BIGINT NOT NULL,
    member     TEXT COLLATE "C" NOT NULL,
    position   BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);
