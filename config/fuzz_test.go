package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary documents to the loader: it must never panic,
// and must return either a valid config or an *Error.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	files = append(files, "../testdata/hospital.yaml", "../testdata/bank.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
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
