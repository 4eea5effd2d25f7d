package waiting

import (
	"flag"
	"io"
	"testing"
)

func TestParallel(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // -parallel after; "" an error
	}{
		{[]string{"-test.v"}, "8"},
		{[]string{"-test.parallel=3"}, "3"}, // the command line's wins
		{[]string{"-no-such-flag"}, ""},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("test.parallel", 2, "")
		fs.Bool("test.v", false, "")
		err := parallel(fs, c.args, 8)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: no error", c.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got := fs.Lookup("test.parallel").Value.String(); got != c.want {
			t.Errorf("%q: -parallel %s, want %s", c.args, got, c.want)
		}
	}
}
