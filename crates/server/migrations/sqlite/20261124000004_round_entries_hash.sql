-- The canonical hash of a round's contribution list
-- (ContributionList::entries_hash), stored once when the round aggregates:
-- every sum digest's statement names it, and recomputing it on each digest
-- upload read the whole list (n rows per upload, n² per round; issue 16).
-- NULL for rounds aggregated before this column existed (the server then
-- computes it from the list).

ALTER TABLE rounds ADD COLUMN contribution_entries_hash BLOB;
