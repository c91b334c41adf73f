-- Covering indexes for a round's upload lists (issue 16, the service at
-- scale): on SQLite reading a contribution's `hash` and `signature` walked
-- the chain of overflow pages of its `bytes`, which come first in the row.
-- PostgreSQL keeps large values out of line (TOAST), so it never read them
-- for a list; these indexes let it answer a list from the index alone, like
-- SQLite now does. (The round row needs none here: its blobs are out of
-- line too, and a `result` may exceed a btree entry's size limit.)

CREATE INDEX contributions_listed ON contributions (study, round, member) INCLUDE (hash, signature);
CREATE INDEX decryption_shares_listed ON decryption_shares (study, round, member) INCLUDE (hash, signature);
