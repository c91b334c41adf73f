-- The audit trail (DESIGN.md §5): one row per state change, appended after
-- the change committed; never updated or deleted (the trigger refuses it).
-- Hashes and ids only: never a secret key, a plaintext value or a token.

CREATE TABLE audit (
    seq       BIGSERIAL PRIMARY KEY,
    at        BIGINT NOT NULL,
    actor     TEXT NOT NULL,
    action    TEXT NOT NULL,
    ceremony  TEXT,
    study     TEXT,
    round     BIGINT,
    member    TEXT,
    hash      TEXT,
    detail    TEXT
);

CREATE INDEX audit_by_study ON audit (study, seq);
CREATE INDEX audit_by_ceremony ON audit (ceremony, seq);

CREATE FUNCTION audit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit table is append-only';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
