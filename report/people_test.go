package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestPeople: a day at the clinic with two people at counters (one at
// two of them) and a keypad; the people's figures are theirs alone, the
// keypad's are not a person's, and the day after is not counted.
func TestPeople(t *testing.T) {
	site := testSite(t)
	c := storetest.FixedClock(time.Date(2026, 3, 2, 8, 0, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: storetest.SQLite(t), Sites: []queue.Site{site}, Clock: c.Now})
	ctx := context.Background()
	for _, sv := range []string{"A", "A", "B", "B", "A", "C"} {
		if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "clinic", Device: "kiosk-1"}, Service: sv}); err != nil {
			t.Fatal(err)
		}
	}
	cr := func(actor, counter string) queue.CounterRequest {
		return queue.CounterRequest{Request: queue.Request{Site: "clinic", Device: actor}, Counter: counter}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	li1, li2, wang := "user:li.na@counter-1", "user:li.na@counter-2", "user:wang@counter-2"
	must(eng.CallNext(ctx, cr(li1, "1"))) // A001
	must(eng.Recall(ctx, cr(li1, "1")))
	must(eng.Start(ctx, cr(li1, "1")))
	c.Add(6 * time.Minute)
	must(eng.Complete(ctx, cr(li1, "1")))
	must(eng.CallNext(ctx, cr(li1, "1"))) // A002
	must(eng.NoShow(ctx, cr(li1, "1")))
	must(eng.Pause(ctx, cr(li1, "1")))
	must(eng.CallNext(ctx, cr(wang, "2"))) // B001
	must(eng.Transfer(ctx, queue.TransferRequest{Request: queue.Request{Site: "clinic", Device: wang}, Counter: "2", ToService: "A"}))
	must(eng.CallNext(ctx, cr(li2, "2"))) // B002
	must(eng.Start(ctx, cr(li2, "2")))
	c.Add(4 * time.Minute)
	must(eng.Complete(ctx, cr(li2, "2")))
	must(eng.CallNext(ctx, cr("keypad-3", "3")))
	c.Add(24 * time.Hour) // the next day: not in the report of the first
	must(eng.Resume(ctx, cr(li1, "1")))

	people, err := People(ctx, eng, "clinic", "2026-03-02", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Person{
		{Name: "li.na", Counters: []string{"1", "2"}, Called: 3, Recalled: 1, Served: 2, NoShows: 1, Paused: 1, AvgService: 5 * time.Minute},
		{Name: "wang", Counters: []string{"2"}, Called: 1, Transferred: 1},
	}
	if got, w := asJSON(t, people), asJSON(t, want); got != w {
		t.Fatalf("people\n%s\nwant\n%s", got, w)
	}
	var b bytes.Buffer
	if err := WritePeople(&b, "clinic", "2026-03-02", "", people, "table"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"site clinic, service day 2026-03-02, by person",
		"person  counters  called  recalled  served  no-show  transferred  paused  avg service",
		" li.na       1 2       3         1       2        1            0       1         5:00",
		"  wang         2       1         0       0        0            1       0         0:00"} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("table has no line %q:\n%s", line, b.String())
		}
	}
	b.Reset()
	if err := WritePeople(&b, "clinic", "2026-03-02", "", people, "csv"); err != nil {
		t.Fatal(err)
	}
	if want := "site,from,to,person,counters,called,recalled,served,no_shows,transferred,paused,avg_service_s\n" +
		"clinic,2026-03-02,2026-03-02,li.na,1 2,3,1,2,1,0,1,300\nclinic,2026-03-02,2026-03-02,wang,2,1,0,0,0,1,0,0\n"; b.String() != want {
		t.Errorf("csv\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WritePeople(&b, "clinic", "2026-03-02", "", nil, "json"); err != nil || !strings.Contains(b.String(), `"people": []`) {
		t.Errorf("json of nobody: %s, %v", b.String(), err)
	}
	if err := WritePeople(&b, "clinic", "2026-03-02", "", nil, "xml"); err == nil {
		t.Error("xml accepted")
	}
	if _, err := People(ctx, eng, "clinic", "2026-03-03", "2026-03-02"); err == nil {
		t.Error("a range that ends before it starts accepted")
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
