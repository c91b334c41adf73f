-- Verify after decrypt on digests (issue 16): when a round's decryption
-- shares are combined, the server stores the combined share D = Σ_j d_j
-- (CombinedShare bytes), its BLAKE3 hash and the decryption-share list's
-- entries hash (DecryptionShareList::entries_hash, with the decrypting set);
-- members decode C0 + D themselves and check D against the share makers'
-- signed digests of their shares (share_digests: `bytes` the digest, `hash`
-- BLAKE3 of it, `signature` the share maker's signature of the
-- share-digest statement), downloading only a few shares in full.

ALTER TABLE rounds ADD COLUMN combined BYTEA;
ALTER TABLE rounds ADD COLUMN combined_hash BYTEA;
ALTER TABLE rounds ADD COLUMN share_entries_hash BYTEA;

CREATE TABLE share_digests (
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
