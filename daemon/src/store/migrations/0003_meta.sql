-- Version 3: small named values kept with the games, such as the console's virtual clock.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
