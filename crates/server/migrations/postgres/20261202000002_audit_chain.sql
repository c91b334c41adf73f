-- The audit trail's hash chain (issue 45, item 9); see the SQLite migration
-- of the same name.
ALTER TABLE audit ADD COLUMN prev BYTEA;
ALTER TABLE audit ADD COLUMN chain BYTEA;

-- Each ceremony's latest chain value, locked FOR UPDATE by the transaction
-- that appends to the ceremony's chain (fedhe_server::store::audit::insert).
CREATE TABLE audit_heads (
    ceremony  TEXT COLLATE "C" PRIMARY KEY,
    seq       BIGINT NOT NULL,
    chain     BYTEA NOT NULL
);
