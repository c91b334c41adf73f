-- The members' result key (issue 44; fedhe_crypto::result_key); see the
-- SQLite migration of the same name.
CREATE TABLE result_keys (
    ceremony      TEXT COLLATE "C" NOT NULL,
    recipient     TEXT COLLATE "C" NOT NULL,
    dealer        TEXT COLLATE "C" NOT NULL,
    bytes         BYTEA NOT NULL,
    dealing_hash  BYTEA NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (ceremony, recipient),
    FOREIGN KEY (ceremony) REFERENCES ceremonies(id)
);

UPDATE rounds SET result = NULL WHERE result IS NOT NULL;
