package config

import (
	"errors"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// FuzzLoad feeds arbitrary documents to the loader: it must never panic,
// and must return either a valid config or an *Error.
func FuzzLoad(f *testing.F) {
	for _, name := range append(badFiles(f), "../testdata/hospital.yaml", "../testdata/bank.yaml") {
		f.Add(golden.Read(f, name))
	}
	f.Add([]byte(minimal))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := load(data, Opts{LookupEnv: noEnv})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %v is not an *Error with problems", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded config fails Validate: %v", err)
		}
	})
}
