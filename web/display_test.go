package web

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/queue"
)

// TestDisplayNowCalling: a call stays "calling" only while its counter
// waits for the number: a call time-out, a no-show and a start each end
// it, while the call stays in the list of last calls.
func TestDisplayNowCalling(t *testing.T) {
	e := newEnv(t, func(qo *queue.Opts, _ *Opts) {
		qo.Sites[0].Services[0].CallTimeout = time.Minute
		qo.Sites[0].Services[0].TimeoutAction = queue.TimeoutNoShow
	})
	ctx := context.Background()
	e.issueN(3, "A")
	r := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	r.nextOf("state")
	calling := func(step string, want ...bool) {
		t.Helper()
		st := unmarshal[DisplayState](t, r.nextOf("state").Data)
		var got []bool
		for _, c := range st.Calls {
			got = append(got, c.Calling)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: calling %v, want %v (%+v)", step, got, want, st.Calls)
		}
	}
	req := queue.CounterRequest{Request: queue.Request{Site: "main", Device: "k"}, Counter: "5"}
	e.call("5") // A001
	calling("call A001", true)
	e.clock.Add(2 * time.Minute)
	if _, err := e.eng.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	calling("A001 timed out", false)
	e.call("5") // A002
	calling("call A002", true, false)
	if _, err := e.eng.NoShow(ctx, req); err != nil {
		t.Fatal(err)
	}
	calling("A002 no-show", false, false)
	e.call("5") // A003
	calling("call A003", true, false, false)
	if _, err := e.eng.Start(ctx, req); err != nil {
		t.Fatal(err)
	}
	calling("A003 started", false, false, false)
}

// TestDisplayPing: the display's keep-alive is an event a page sees, so
// it can tell a dead connection from a quiet hall.
func TestDisplayPing(t *testing.T) {
	e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.Heartbeat = 20 * time.Millisecond })
	r := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	if st := unmarshal[DisplayState](t, r.nextOf("state").Data); st.HeartbeatS != 0.02 {
		t.Errorf("heartbeat_s %v, want 0.02", st.HeartbeatS)
	}
	if ev := r.next(); ev.Event != "ping" || ev.Data != "{}" {
		t.Errorf("after a quiet heartbeat: %+v, want event ping", ev)
	}
}

// TestDisplayLanguages: the stream names the site, services and counters
// in each site language, and the pages carry the site's languages before
// any stream answers.
func TestDisplayLanguages(t *testing.T) {
	e := newEnv(t, func(qo *queue.Opts, _ *Opts) {
		s := &qo.Sites[0]
		s.Languages = []string{"pt", "en"}
		s.Names = map[string]string{"en": "Main Hall", "pt": "Salão"}
		s.Services[0].Names = map[string]string{"en": "General", "pt": "Geral"}
	})
	e.issue("A")
	e.call("5")
	r := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	st := unmarshal[DisplayState](t, r.nextOf("state").Data)
	if !slices.Equal(st.Langs, []string{"pt", "en"}) || st.Names["pt"] != "Salão" || st.Names["en"] != "Main Hall" ||
		st.Services[0].Names["pt"] != "Geral" || st.Services[1].Names["pt"] != "F" ||
		st.Calls[0].CounterNames["pt"] != "Counter 5" || st.HeartbeatS != 15 {
		t.Fatalf("state: %+v", st)
	}
	for _, path := range []string{"/display/main", "/t/main/Z999"} {
		b, _ := io.ReadAll(e.do("GET", path, "-", "").Body)
		if !strings.Contains(string(b), `<html lang="pt" data-langs="pt en">`) {
			t.Errorf("%s: no site languages in %.200s", path, b)
		}
	}
}

// TestPageLanguages: the pages have their own words in every language of
// the example configurations, so no shipped site shows English words.
func TestPageLanguages(t *testing.T) {
	have := pageLangs()
	if !slices.Contains(have, "en") || len(have) < 3 {
		t.Fatalf("page languages %v", have)
	}
	files, _ := filepath.Glob("../testdata/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example configurations in ../testdata")
	}
	re := regexp.MustCompile(`(?m)^\s*languages:\s*\[([^\]]*)\]`)
	for _, f := range files {
		for _, m := range re.FindAllSubmatch(golden.Read(t, f), -1) {
			for _, l := range strings.Split(string(m[1]), ",") {
				if l = strings.TrimSpace(l); !slices.Contains(have, l) {
					t.Errorf("%s: site language %q has no page words in static/i18n.js (have %v)", f, l, have)
				}
			}
		}
	}
}
