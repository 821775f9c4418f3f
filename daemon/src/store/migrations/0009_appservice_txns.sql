-- Version 9: the Matrix appservice transactions taken in (issue 17). The homeserver sends
-- a transaction until it is acknowledged; one whose id is here was handed over already
-- and is acknowledged without being read again, after a restart too. One row per
-- (network, transaction id).
CREATE TABLE IF NOT EXISTS appservice_txns (
    network TEXT NOT NULL,
    txn_id  TEXT NOT NULL,
    PRIMARY KEY (network, txn_id)
);
