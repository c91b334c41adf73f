-- Commit-then-reveal of round contributions (DESIGN.md §6) and signed study
-- specs. A round starts `committing`: members store signed hashes of their
-- contributions here; when the round moves to `collecting` the commitments
-- of the round's shape are frozen (`value_count`, `commitment_list_hash`) and
-- only contributions with a committed hash are accepted.

CREATE TABLE round_commitments (
    study       TEXT NOT NULL,
    round       INTEGER NOT NULL,
    member      TEXT NOT NULL,
    hash        BLOB NOT NULL,
    value_count INTEGER NOT NULL,
    signature   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (study, round, member),
    FOREIGN KEY (study, round) REFERENCES rounds(study, round)
);

ALTER TABLE rounds ADD COLUMN value_count INTEGER;
ALTER TABLE rounds ADD COLUMN commitment_list_hash TEXT;

-- The administrator's ed25519 public key (hex), which signs study specs.
ALTER TABLE ceremonies ADD COLUMN admin_key TEXT;
-- The administrator's signature of the study spec's hash (hex).
ALTER TABLE studies ADD COLUMN admin_signature TEXT;
