package golden

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// recorder keeps what the helpers report instead of failing the test.
type recorder struct {
	testing.TB
	errs, fatals []string
}

func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, a...))
}

func TestAssert(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.golden")
	for _, tc := range []struct {
		name          string
		update        bool
		got           string
		errs, fatals  int
		wantInMessage string
	}{
		{name: "missing", got: "x\n", errs: 1, fatals: 1, wantInMessage: "go test -update creates it"},
		{name: "update creates", update: true, got: "one\ntwo\n"},
		{name: "same", got: "one\ntwo\n"},
		{name: "differs", got: "one\nthree\n", errs: 1, wantInMessage: `first difference at line 2
 got: "three\n"
want: "two\n"`},
		{name: "shorter", got: "one\n", errs: 1, wantInMessage: "got: (end of file)"},
		{name: "binary", got: "one\x00\x01", errs: 1, wantInMessage: "first difference at byte 3 (got 5 bytes, want 8)\n got: 00 01\nwant: 0a 74 77 6f 0a"},
		{name: "update rewrites", update: true, got: "three\n"},
		{name: "rewritten", got: "three\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := *update
			*update = tc.update
			defer func() { *update = old }()
			r := recorder{TB: t}
			Assert(&r, path, []byte(tc.got))
			if len(r.errs) != tc.errs || len(r.fatals) != tc.fatals {
				t.Fatalf("errors %q, fatals %q; want %d and %d", r.errs, r.fatals, tc.errs, tc.fatals)
			}
			all := strings.Join(append(r.fatals, r.errs...), "\n")
			if !strings.Contains(all, tc.wantInMessage) {
				t.Errorf("messages\n%s\ndo not contain\n%s", all, tc.wantInMessage)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	old := *update
	defer func() { *update = old }()
	for _, v := range []bool{false, true} {
		*update = v
		if Update() != v {
			t.Errorf("Update() = %v with -update=%v", Update(), v)
		}
	}
}
