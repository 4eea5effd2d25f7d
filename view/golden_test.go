package view_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/view"
)

// scripts are the recorded days: testdata/NAME.events holds the log the
// script produced on the real engine (one JSON event a line), and
// testdata/NAME.golden the view replayed from it.
var scripts = map[string]string{
	// A transfer keeps the ticket counted as issued by A while it waits,
	// and is served, in E (the console once counted it under E).
	"transfer": `issue A; issue A; issue A; wait 2m; next 1; start 1; transfer-service 1 E; next 8; wait 1m; start 8; wait 3m; done 8
		next 1; noshow 1; reenter A002; next 2; recall 2; wait 30s; start 2; done 2`,
	// Counters pausing, a transfer to a counter, a cancel of a called
	// ticket, a no-show not re-entered and the call list.
	"counters": `issue P; issue V vip; issue V; issue P; pause 5; next 4; transfer-counter 4 5; resume 5; next 5; wait 90s
		next 4; cancel P004; next 4; noshow 4; issue V; next 4; start 4; wait 4m; done 4`,
	// The day rolls over while counter 1 still holds yesterday's ticket:
	// yesterday's figures are cleared, the counter keeps its ticket and
	// finishes it, the waiting ticket expires at the sweep.
	"rollover": `issue A; issue A; next 1; start 1; wait 20h; sweep; issue A; done 1; next 1`,
}

func TestGolden(t *testing.T) {
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			logPath := filepath.Join("testdata", name+".events")
			if golden.Update() {
				record(t, script, logPath)
			}
			evs := readLog(t, logPath)
			v := view.Replay(storetest.TestSite(), view.Opts{Calls: 4}, evs)
			got := render(v, v.At)
			golden.Assert(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}

// record runs a script on the engine and writes its event log.
func record(t *testing.T, script, path string) {
	d := newDriver(t)
	for _, line := range strings.Split(script, "\n") {
		for _, st := range strings.Split(line, ";") {
			f := strings.Fields(st)
			if len(f) == 0 {
				continue
			}
			d.step(f[0], f[1:]...)
		}
	}
	var b bytes.Buffer
	for _, e := range d.events() {
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLog(t *testing.T, path string) []queue.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []queue.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e queue.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

// render writes a view as indented JSON with the time-dependent figures
// computed at now.
func render(v *view.Site, now time.Time) []byte {
	type svc struct {
		view.Service
		LongestWait, AvgWait, AvgService string
	}
	out := struct {
		*view.Site
		Services []svc
	}{Site: v}
	for _, sv := range v.Services {
		out.Services = append(out.Services, svc{sv, sv.LongestWait(now).String(), sv.AvgWait().String(), sv.AvgService().String()})
	}
	j, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(j, '\n')
}
