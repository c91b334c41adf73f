-- Verify after decrypt on digests (issue 16): when a round's decryption
-- shares are combined, the server stores the combined share D = Σ_j d_j
-- (CombinedShare bytes), its BLAKE3 hash and the decryption-share list's
-- entries hash (DecryptionShareList::entries_hash, with the decrypting set);
-- members decode C0 + D themselves and check D against the share makers'
-- signed digests of their shares (share_digests: `bytes` the digest, `hash`
-- BLAKE3 of it, `signature` the share maker's signature of the
-- share-digest statement), downloading only a few shares in full.

ALTER TABLE rounds ADD COLUMN combined BLOB;
ALTER TABLE rounds ADD COLUMN combined_hash BLOB;
ALTER TABLE rounds ADD COLUMN share_entries_hash BLOB;

CREATE TABLE share_digests (
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
