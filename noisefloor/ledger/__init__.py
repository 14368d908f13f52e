"""The SQLite ledger: one row per stored sample, with the target kind's columns, for SQL queries."""
