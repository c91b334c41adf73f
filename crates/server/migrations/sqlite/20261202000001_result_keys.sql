-- The members' result key (issue 44; fedhe_crypto::result_key): the
-- ceremony's first member deals a key sealed to every member, and every
-- decryption share is blinded with it, so the server combines shares it
-- cannot decode. One row per recipient: its sealed key as served, and the
-- hash of the whole dealing (an upload again is idempotent only if equal).
CREATE TABLE result_keys (
    ceremony      TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    dealer        TEXT NOT NULL,
    bytes         BLOB NOT NULL,
    dealing_hash  BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (ceremony, recipient),
    FOREIGN KEY (ceremony) REFERENCES ceremonies(id)
);

-- The server no longer holds decrypted values: results stored before are
-- erased (members keep their own decodings).
UPDATE rounds SET result = NULL WHERE result IS NOT NULL;
