package sim

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBookSaysWhyNoSlot: a day the API lists no slot for is told as the
// API tells it: past, not open yet (with when), or how many slots it has
// (a past day was "0 slots that day").
func TestBookSaysWhyNoSlot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ answer, want string }{
		{`{"date":"2026-11-01","slots":[],"total":0,"past":true}`, "no slot of dr-li on 2026-11-01 free (the day is past)"},
		{`{"date":"2026-11-01","slots":[],"total":0,"opening":{"dr-li":"2026-10-25T08:00:00+08:00"}}`,
			"no slot of dr-li on 2026-11-01 free (its slots open at 2026-10-25 08:00 +08:00)"},
		{`{"date":"2026-11-01","slots":[{"id":1,"start":"2020-11-01T08:00:00+08:00","free":0}],"total":32}`,
			"no slot of dr-li on 2026-11-01 free (32 slots that day)"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, c.answer)
		}))
		e := &Env{o: Opts{Timeout: 5 * time.Second}}
		err := e.Book(context.Background(), BookOpts{URL: srv.URL, Token: "t", Site: "hospital", Resource: "dr-li",
			Date: "2026-11-01", Patient: "HIS-1"}, io.Discard)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("answer %s: err %v, want %q", c.answer, err, c.want)
		}
	}
}
