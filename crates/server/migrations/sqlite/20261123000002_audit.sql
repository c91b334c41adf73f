-- The audit trail (DESIGN.md §5): one row per state change, appended after
-- the change committed; never updated or deleted (the triggers refuse it).
-- Hashes and ids only: never a secret key, a plaintext value or a token.

CREATE TABLE audit (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    actor     TEXT NOT NULL,
    action    TEXT NOT NULL,
    ceremony  TEXT,
    study     TEXT,
    round     INTEGER,
    member    TEXT,
    hash      TEXT,
    detail    TEXT
);

CREATE INDEX audit_by_study ON audit (study, seq);
CREATE INDEX audit_by_ceremony ON audit (ceremony, seq);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit table is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit table is append-only');
END;
