-- Covering indexes for what is read per request (issue 16, the service at
-- scale). SQLite stores a row's columns in order, and a contribution's or a
-- decryption share's `bytes` (262 kB, 131 kB at the default parameter set)
-- come before its `hash` and `signature`: reading those walked the blob's
-- chain of overflow pages (64 per contribution), so listing a round's n
-- uploads read n × 64 pages (80 ms at n = 1,000), and every member's list
-- and result requests made the round quadratic. These indexes hold the
-- listed columns themselves, so a list is read from the index alone (a
-- lookup of one upload by its key still reads its row: O(1) per request).

CREATE INDEX contributions_listed ON contributions (study, round, member, hash, signature);
CREATE INDEX decryption_shares_listed ON decryption_shares (study, round, member, hash, signature);
