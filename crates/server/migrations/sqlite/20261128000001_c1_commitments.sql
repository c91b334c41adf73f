-- c1 commitments (issue 16, fedhe_crypto::c1_commitment): each round
-- commitment names the hash of its contribution's Pedersen commitment to c1,
-- and an aggregate is stored with its carries, so a member checks the
-- aggregate's c1 against every contribution with one multiscalar
-- multiplication instead of downloading contributions. NULL for rows made
-- before.

ALTER TABLE round_commitments ADD COLUMN c1_commitment_hash BLOB;
ALTER TABLE rounds ADD COLUMN aggregate_carries BLOB;
