package notify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

func message(body string) *sqlstore.OutboxMessage {
	return &sqlstore.OutboxMessage{ID: 1, EventID: "7d44b6a2-5a3e-4c1e-9f00-0123456789ab", Receiver: "sms", Site: "hq",
		Version: 42, Type: "BOOKING_BOOKED", Body: []byte(body), Attempt: 2}
}

// TestCommandDelivers: a worker runs a real shell command per message,
// the JSON on its standard input and the event in its environment.
func TestCommandDelivers(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"sms": {"CALLED"}})})
		dir := t.TempDir()
		run := `cat > "` + dir + `/$NOWSERVING_EVENT_ID.$NOWSERVING_EVENT_TYPE.$NOWSERVING_SITE.v$NOWSERVING_VERSION.$NOWSERVING_ATTEMPT"`
		start(t, fast(s, notify.Receiver{Name: "sms", Events: []string{"CALLED"}, Deliverer: &notify.Command{Run: run}}))
		appendEvents(t, s, queue.EventCalled, 2)
		drained(t, s)
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(files) != 2 {
			t.Fatalf("files %v, want one per event", files)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				ID, Type, Site string
				Version        int64
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %s: %v", f, b, err)
			}
			if want := doc.ID + ".CALLED.s1.v" + strconv.FormatInt(doc.Version, 10) + ".1"; filepath.Base(f) != want || doc.Type != "CALLED" {
				t.Errorf("file %s holds %s, want it named %s", filepath.Base(f), b, want)
			}
		}
	})
}

// TestCommandFails: a non-zero exit is a failure with its status and the
// start of its standard error.
func TestCommandFails(t *testing.T) {
	c := &notify.Command{Run: `cat >/dev/null; echo "gateway says no" >&2; exit 3`}
	err := c.Deliver(t.Context(), message(`{"id":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "exited with status 3: gateway says no") {
		t.Errorf("Deliver = %v, want exit status 3 and the message", err)
	}
	if err := (&notify.Command{Run: "read line; test \"$line\" = ok"}).Deliver(t.Context(), message("ok\n")); err != nil {
		t.Errorf("a command reading its input: %v", err)
	}
}

// TestCommandTimeout: a command past its time is killed with everything it
// started, and the attempt fails at once.
func TestCommandTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := &notify.Command{Run: `sleep 30 & echo $! > ` + pidFile + `; wait`}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.Deliver(ctx, message("{}"))
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("Deliver = %v, want a time-out", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Deliver returned after %s", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	poll.Until(t, "the command's child killed", func() bool { return syscall.Kill(pid, 0) != nil })
}
