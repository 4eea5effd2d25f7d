package storetest

import (
	"errors"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Classified is a driver error and what a dialect must make of it.
type Classified struct {
	Name string
	Err  error
	// Want is the sentinel errors.Is must find; nil: none of the store's.
	Want error
	// Drops: the error leaves the connection useless (sqlstore.Drops).
	Drops bool
}

// RunClassify checks d.Err on each case: the sentinel it must match (or
// none of the store's), whether it drops the connection, and that the
// result no longer wraps the driver's own error type (driverErr finds it).
func RunClassify(t *testing.T, d *sqlstore.Dialect, cases []Classified, driverErr func(error) bool) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := d.Err(c.Err)
			if c.Want != nil && !errors.Is(got, c.Want) {
				t.Errorf("Err(%v) = %v, want it to match %v", c.Err, got, c.Want)
			}
			if c.Want == nil && (errors.Is(got, queue.ErrUnavailable) || errors.Is(got, queue.ErrAborted)) {
				t.Errorf("Err(%v) = %v, want no store sentinel", c.Err, got)
			}
			if dr := sqlstore.Drops(got); dr != c.Drops {
				t.Errorf("Drops(%v) = %v, want %v", got, dr, c.Drops)
			}
			if driverErr(got) {
				t.Errorf("Err(%v) still wraps the driver's error", c.Err)
			}
		})
	}
}

// Class is a Classified, for case tables.
func Class(name string, err, want error, drops bool) Classified {
	return Classified{Name: name, Err: err, Want: want, Drops: drops}
}
