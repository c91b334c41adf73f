-- Each recipient's slice of a threshold dealing; the same table as
-- migrations/sqlite (see there for why).

CREATE TABLE threshold_dealing_slices (
    ceremony   TEXT COLLATE "C" NOT NULL,
    dealer     TEXT COLLATE "C" NOT NULL,
    recipient  TEXT COLLATE "C" NOT NULL,
    bytes      BYTEA NOT NULL,
    PRIMARY KEY (ceremony, dealer, recipient),
    FOREIGN KEY (ceremony, dealer) REFERENCES threshold_dealings(ceremony, member)
);
