package main

import (
	"errors"
	"io/fs"
	"os"

	"go.uber.org/zap"
)

// warnOpenDataDir logs a warning when the data directory exists and other
// users may enter or list it. The files in it are created readable by the
// owner only, but an operator who made the directory open may have meant
// to share it, or may have copied files into it with looser modes; the
// service says so rather than change the operator's directory.
func warnOpenDataDir(log *zap.Logger, dir string) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return // created 0700 by the first start
	}
	if err != nil {
		log.Warn("cannot check the data directory's permissions", zap.String("path", dir), zap.Error(err))
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		log.Warn("the data directory is accessible to other users; it holds the master key and the database: chmod 700 it",
			zap.String("path", dir), zap.String("mode", perm.String()))
	}
}
