// Package golden compares what a test rendered with a file checked in next
// to it (a golden file), and rewrites the file when the test binary runs
// with -update:
//
//	go test ./devices/led -run TestGolden -update
//
// The -update flag is registered here, once, on the test binary's command
// line: import this package from tests only (a program importing it would
// grow the flag too).
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files (and anything else a test records) instead of comparing")

// Update reports whether the test binary runs with -update: a test that
// records more than one file (an event log, fuzz seeds) rewrites them then.
func Update() bool { return *update }

// Assert compares got with the file at path; with -update it first writes
// got there (creating its folder). A missing file or a difference fails the
// test, naming the file and the first difference.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		Write(t, path, got)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (go test -update creates it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	t.Errorf("%s differs (go test -update rewrites it): %s", path, difference(got, want))
}

// Write writes data to path, creating its folder; a test that compares in
// its own way (metrics through testutil) calls it under Update.
func Write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("golden: %v", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatalf("golden: %v", err)
	}
}

// Read returns the file at path, one checked in that a test compares
// with or checks (a golden file, a document, a configuration, a unit
// file), failing the test when it cannot be read.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	return b
}

// difference describes where got and want part: text by line (short texts
// printed whole), binary by offset.
func difference(got, want []byte) string {
	if !isText(got) || !isText(want) {
		i := firstDiff(got, want)
		return fmt.Sprintf("first difference at byte %d (got %d bytes, want %d)\n got: % x\nwant: % x",
			i, len(got), len(want), window(got, i), window(want, i))
	}
	gl, wl := lines(got), lines(want)
	n := 0
	for n < len(gl) && n < len(wl) && bytes.Equal(gl[n], wl[n]) {
		n++
	}
	line := func(l [][]byte) string {
		if n < len(l) {
			return fmt.Sprintf("%q", l[n])
		}
		return "(end of file)"
	}
	msg := fmt.Sprintf("first difference at line %d\n got: %s\nwant: %s", n+1, line(gl), line(wl))
	if len(gl) <= shortFile && len(wl) <= shortFile {
		msg += fmt.Sprintf("\n--- got\n%s\n--- want\n%s", got, want)
	}
	return msg
}

// shortFile is the most lines a golden text may have for a difference to
// print it whole.
const shortFile = 60

// lines splits b after each newline; a final newline starts no line.
func lines(b []byte) [][]byte {
	l := bytes.SplitAfter(b, []byte("\n"))
	if len(l[len(l)-1]) == 0 {
		l = l[:len(l)-1]
	}
	return l
}

func isText(b []byte) bool { return utf8.Valid(b) && !bytes.ContainsRune(b, 0) }

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// window is up to 16 bytes of b from i.
func window(b []byte, i int) []byte { return b[min(i, len(b)):min(i+16, len(b))] }
