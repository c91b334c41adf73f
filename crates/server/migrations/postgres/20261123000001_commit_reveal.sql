-- Commit-then-reveal of round contributions (DESIGN.md §6) and signed study
-- specs; the same tables as migrations/sqlite (types as in the first
-- PostgreSQL migration).

CREATE TABLE round_commitments (
    study       TEXT COLLATE "C" NOT NULL,
    round       BIGINT NOT NULL,
    member      TEXT COLLATE "C" NOT NULL,
    hash        BYTEA NOT NULL,
    value_count BIGINT NOT NULL,
    signature   TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);

ALTER TABLE rounds ADD COLUMN value_count BIGINT;
ALTER TABLE rounds ADD COLUMN commitment_list_hash TEXT;

ALTER TABLE ceremonies ADD COLUMN admin_key TEXT;
ALTER TABLE studies ADD COLUMN admin_signature TEXT;
