-- The audit trail's hash chain (issue 45, item 9; fedhe_api::audit): every
-- row of a ceremony, and of its studies, carries the chain value of the
-- ceremony's row before it (`prev`, the ceremony's genesis for its first)
-- and its own (`chain`, BLAKE3 over a domain tag, prev and the row's
-- fields). Rows written before this migration keep NULL in both: a member's
-- check covers them not (they can only precede the chained rows).
-- The triggers of 20261123000002_audit.sql still refuse updates and deletes.
ALTER TABLE audit ADD COLUMN prev BLOB;
ALTER TABLE audit ADD COLUMN chain BLOB;

-- Each ceremony's latest chain value: a row is inserted after reading (on
-- PostgreSQL, locking) its ceremony's, so a ceremony's rows chain in one
-- line in the order of their seq.
CREATE TABLE audit_heads (
    ceremony  TEXT PRIMARY KEY,
    seq       INTEGER NOT NULL,
    chain     BLOB NOT NULL
);
