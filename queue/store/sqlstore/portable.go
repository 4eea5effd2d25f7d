package sqlstore

import (
	"embed"
	"errors"
	"io/fs"
	"slices"
	"strings"
)

// portable holds the migrations the dialects share, kept once instead of
// once per dialect: as written, or with {{word}} holes where they spell a
// type differently, filled by Dialect.Words.
//
//go:embed migrations/*.sql
var portable embed.FS

// WithPortable is a dialect's own migrations (an fs.FS with NNNN_name.sql
// files at its root, as MigrationsDir gives) over the portable ones: a
// dialect file with the name of a portable one replaces it, and the
// others are added. Each version keeps the name it was applied under, so
// databases migrated before a file moved here see nothing new. MySQL
// shares 0002 only: its other tables and indexes are spelt otherwise
// (sized VARCHARs, keys inside CREATE TABLE, no partial indexes, re-runnable
// DDL), and a shipped migration must keep running the statements it ran.
func WithPortable(own fs.FS) fs.FS {
	return overlay{top: own, base: MigrationsDir(portable)}
}

// overlay reads a name from top, or from base when top does not have it;
// its root lists the files of both.
type overlay struct{ top, base fs.FS }

func (o overlay) Open(name string) (fs.File, error) {
	f, err := o.top.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return o.base.Open(name)
	}
	return f, err
}

func (o overlay) ReadDir(name string) ([]fs.DirEntry, error) {
	top, err := fs.ReadDir(o.top, name)
	if err != nil {
		return nil, err
	}
	base, err := fs.ReadDir(o.base, name)
	if err != nil {
		return nil, err
	}
	for _, e := range base {
		if !slices.ContainsFunc(top, func(t fs.DirEntry) bool { return t.Name() == e.Name() }) {
			top = append(top, e)
		}
	}
	slices.SortFunc(top, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return top, nil
}
