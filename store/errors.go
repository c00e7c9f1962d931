package store

import "errors"

var (
	// ErrUnsupportedURL is returned by Open for a database URL that names
	// no supported back end.
	ErrUnsupportedURL = errors.New("store: database URL must start with postgres:// or postgresql:// (empty means embedded SQLite)")
	// ErrMigration is returned by Open when the schema cannot be brought up
	// to date.
	ErrMigration = errors.New("store: migration failed")
	// ErrNewerSchema is returned by Open when the database was migrated by
	// a newer Earshot than this one.
	ErrNewerSchema = errors.New("store: the database schema is newer than this binary")
)
