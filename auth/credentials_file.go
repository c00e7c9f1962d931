package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CredentialsFileName is the name of the file, in the data directory, that
// the first start writes its credentials to.
const CredentialsFileName = "bootstrap-credentials.json"

// WriteCredentialsFile writes c as JSON to path with mode 0600, creating
// the directory (mode 0700) if needed. It never overwrites: an existing
// file is an error wrapping os.ErrExist, so the credentials of an earlier
// first start are not lost to a later one. The file holds the secrets in
// the clear, like the log entry: the operator reads it once, rotates what
// must be rotated and deletes it.
func WriteCredentialsFile(path string, c *Credentials) (err error) {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("auth: credentials file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("auth: credentials file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			// Half a file of secrets helps nobody; the log entry has them.
			err = errors.Join(err, os.Remove(path))
		}
	}()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("auth: credentials file: %w", err)
	}
	// The umask may have narrowed the mode but never widens it; make sure.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("auth: credentials file: %w", err)
	}
	return f.Sync()
}
