package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Back ends.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Store is Earshot's database. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	backend string
	stmts   sync.Map        // query -> *sql.Stmt, prepared on first use
	pgCfg   *pgx.ConnConfig // PostgreSQL only: for the listening connection
}

// Open connects to the database named by databaseURL and migrates it. An
// empty databaseURL opens the embedded SQLite database earshot.db in
// dataDir, creating the directory (mode 0700) if needed.
func Open(ctx context.Context, databaseURL, dataDir string) (*Store, error) {
	var (
		s   *Store
		err error
	)
	switch {
	case databaseURL == "":
		s, err = openSQLite(filepath.Join(dataDir, "earshot.db"))
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		s, err = openPostgres(databaseURL)
	default:
		return nil, ErrUnsupportedURL
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

func openSQLite(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := restrictFiles(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Writers take the lock when a transaction begins, not when it first
	// writes, so that two transactions never deadlock upgrading a read lock.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", path, err)
	}
	// One connection. SQLite runs one writer at a time whatever the
	// number of connections, and contending connections wait in its busy
	// handler, which sleeps for milliseconds between tries: under 2,000
	// sessions finishing together the pool opened hundreds of connections
	// (each with its own page cache), writes starved for the whole busy
	// timeout and failed with SQLITE_BUSY. With one connection, callers
	// queue in database/sql instead, in order, and each statement takes
	// tens of microseconds. Nothing in this package holds the connection
	// while asking for another (rows are scanned to the end first;
	// transactions use only their Tx), which would deadlock.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return &Store{db: db, backend: BackendSQLite}, nil
}

// restrictFiles makes the database file, and its -wal and -shm files if
// they exist, readable by their owner only: they hold sealed secrets and
// key digests. SQLite creates -wal and -shm with the mode of the database
// file, so creating that one 0600 before SQLite does covers the others;
// files of an older start are tightened.
func restrictFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("store: %w", err)
			}
		}
	}
	return nil
}

func openPostgres(databaseURL string) (*Store, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: parsing database URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{db: db, backend: BackendPostgres, pgCfg: cfg}, nil
}

// Backend returns BackendSQLite or BackendPostgres.
func (s *Store) Backend() string { return s.backend }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database. It is idempotent.
func (s *Store) Close() error {
	s.stmts.Range(func(k, v any) bool {
		v.(*sql.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
	return s.db.Close()
}

// prepared returns the statement of a query, preparing it once. Hot
// queries go through it: parsing SQL costs more than running these.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// queryRow runs a prepared single-row query.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	st, err := s.prepared(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// exec runs a prepared statement.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// errRow is a row whose query could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// migrationLockID is the PostgreSQL advisory lock held while migrating.
const migrationLockID = 0x6561727368 // "earsh"

// migrate applies every embedded migration newer than the database's
// schema, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connecting: %w", err)
	}
	defer conn.Close()
	if s.backend == BackendPostgres {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
			return fmt.Errorf("store: taking migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockID) //nolint:errcheck // released with the session anyway
	}
	if _, err := conn.ExecContext(ctx,
		"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("%w: %w", ErrMigration, err)
	}
	var current int
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("%w: %w", ErrMigration, err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	latest := 0
	for _, f := range files {
		v, err := strconv.Atoi(strings.SplitN(filepath.Base(f), "_", 2)[0])
		if err != nil {
			return fmt.Errorf("%w: bad migration name %s", ErrMigration, f)
		}
		latest = v
		if v <= current {
			continue
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return err
		}
		if err := applyMigration(ctx, conn, v, string(body)); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrMigration, filepath.Base(f), err)
		}
	}
	if current > latest {
		return fmt.Errorf("%w: database at version %d, binary knows %d", ErrNewerSchema, current, latest)
	}
	return nil
}

func applyMigration(ctx context.Context, conn *sql.Conn, version int, body string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for _, stmt := range splitStatements(body) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%q: %w", firstLine(stmt), err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
		version, time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// splitStatements splits a migration at semicolons that end a line, after
// dropping -- comments. Migrations hold no semicolons inside literals.
func splitStatements(body string) []string {
	var b strings.Builder
	for line := range strings.Lines(body) {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i] + "\n"
		}
		b.WriteString(line)
	}
	var stmts []string
	for stmt := range strings.SplitSeq(b.String(), ";\n") {
		if stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";")); stmt != "" {
			stmts = append(stmts, stmt)
		}
	}
	return stmts
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isUniqueViolation reports whether err is a unique-constraint violation.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// millis converts between time.Time and the stored Unix milliseconds.
func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
