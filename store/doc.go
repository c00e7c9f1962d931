// Package store persists Earshot's records: embedded SQLite by default
// (modernc.org/sqlite, pure Go, WAL mode) and PostgreSQL
// (github.com/jackc/pgx/v5) for several replicas sharing one database.
//
// Both back ends run the same SQL: the schema uses only types both accept
// (TEXT, BIGINT, DOUBLE PRECISION, BYTEA; SQLite stores BYTEA values as
// blobs), timestamps are Unix milliseconds, and parameters are numbered
// ($1, $2, …). Versioned migrations are embedded in the binary and applied
// at Open, under a lock so that replicas starting together apply each once.
//
// Store implements the persistence interfaces that package session
// (session.Store) and package auth (auth.Store) declare, and returns their
// sentinel errors where those interfaces say so.
package store
