// Package waiting lets a test package whose tests wait (on heartbeats,
// time-outs, other processes) rather than compute run more of them side
// by side than go test's default: -parallel is GOMAXPROCS, which on a
// 2-core machine leaves such a package's time the sum of its waits, two
// at a time. It is for tests only.
package waiting

import (
	"flag"
	"fmt"
	"os"
	"strconv"
)

// Parallel, called from TestMain before m.Run, makes -parallel n unless
// the command line gave it: go test's own flags are registered by then,
// and parsed here. m.Run reads -parallel when it starts the tests.
func Parallel(n int) {
	if err := parallel(flag.CommandLine, os.Args[1:], n); err != nil {
		fmt.Fprintf(os.Stderr, "waiting: %v\n", err)
		os.Exit(2)
	}
}

// parallel parses args into fs and sets its test.parallel to n unless
// args set it.
func parallel(fs *flag.FlagSet, args []string, n int) error {
	if !fs.Parsed() {
		if err := fs.Parse(args); err != nil {
			return err
		}
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return nil
	}
	if err := fs.Set("test.parallel", strconv.Itoa(n)); err != nil {
		return fmt.Errorf("set -parallel %d: %w", n, err)
	}
	return nil
}
