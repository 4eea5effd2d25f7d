package follow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// A reader takes the site's state first, then the events after it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "follow")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"), sqlite.Opts{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	site := queue.Site{ID: "hq", Location: time.UTC, Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3}}}
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{site}})
	if err != nil {
		panic(err)
	}
	defer eng.Close(ctx)
	issue := func() {
		if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "kiosk-1"}, Service: "A"}); err != nil {
			panic(err)
		}
	}
	issue()
	issue()

	f := follow.New(eng, "hq", follow.Opts{Recent: 1})
	u, _ := f.Next(ctx)
	fmt.Printf("snapshot at %d, %d waiting, last event %s %s\n", u.Snapshot.Version, u.Snapshot.Services[0].Waiting, u.Recent[0].Type, u.Recent[0].Number)
	issue()
	u, _ = f.Next(ctx)
	fmt.Printf("event %d: %s %s\n", u.Events[0].Version, u.Events[0].Type, u.Events[0].Number)
	// Output:
	// snapshot at 2, 2 waiting, last event ISSUED A002
	// event 3: ISSUED A003
}
