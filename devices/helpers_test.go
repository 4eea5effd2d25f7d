package devices_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// testSite is a small hospital: service A at counters 1 and 5, emergency E
// at counter 5; counter 5 announces in zone "hall".
func testSite() queue.Site {
	return queue.Site{
		ID: "hospital", Names: map[string]string{"en": "City Hospital", "zh": "市人民医院"}, Location: storetest.Shanghai,
		Rollover: 4 * time.Hour, Languages: []string{"zh", "en"},
		Services: []queue.Service{
			{Code: "A", Names: map[string]string{"en": "First visit", "zh": "初诊"}, Prefix: "A", Width: 3, AvgService: 6 * time.Minute},
			{Code: "E", Names: map[string]string{"en": "Emergency", "zh": "急诊"}, Prefix: "E", Width: 3, AvgService: 10 * time.Minute},
		},
		Counters: []queue.Counter{
			{ID: "1", Services: []queue.CounterService{{Service: "A", Weight: 1}}, Policy: queue.PolicyStrict, Zone: "hall"},
			{ID: "5", Services: []queue.CounterService{{Service: "E", Weight: 1}, {Service: "A", Weight: 1}}, Policy: queue.PolicyStrict, Zone: "hall"},
		},
	}
}

// newEngine opens a real SQLite store in a temporary folder and an engine
// on a fixed clock (2026-11-30 09:30 in Shanghai).
func newEngine(t testing.TB) (*queue.Engine, *storetest.Clock) {
	t.Helper()
	st := storetest.SQLite(t)
	c := storetest.FixedClock(time.Date(2026, 11, 30, 1, 30, 0, 0, time.UTC))
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Clock: c.Now, Committers: 1})
	return eng, c
}

// issue takes n tickets of service A.
func issue(t testing.TB, eng *queue.Engine, svc string, n int) []queue.Ticket {
	t.Helper()
	var out []queue.Ticket
	for range n {
		tk, err := eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "hospital", Device: "kiosk-1"}, Service: svc})
		if err != nil {
			t.Fatalf("issue: %v", err)
		}
		out = append(out, tk)
	}
	return out
}

func callNext(t *testing.T, eng *queue.Engine, counter string) queue.Ticket {
	t.Helper()
	tk, err := eng.CallNext(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-" + counter}, Counter: counter})
	if err != nil {
		t.Fatalf("call next at %s: %v", counter, err)
	}
	return tk
}

// run starts d and stops it at the end of the test.
func run(t testing.TB, d *devices.Dispatcher) {
	t.Helper()
	parttest.Start(t, context.Background(), d)
}

// newPort makes a port on dial (a ledtest.Recorder's Dial, or nil for a
// real line named name).
func newPort(t testing.TB, name string, d led.Driver, dial func(led.PortOpts) (led.Link, error)) *led.Port {
	t.Helper()
	o := led.DefaultPortOpts()
	o.Name, o.Driver, o.Dial = name, d, dial
	o.MinBackoff, o.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	p, err := led.NewPort(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// counterDriver is the "01 addr … 07" template board of the led golden
// file template_01_07.
func counterDriver(t *testing.T) led.Driver {
	t.Helper()
	d, err := led.NewTemplate(led.TemplateOpts{Header: "01", Body: "{number:-4}{counter:2}", Trailer: "07"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// textDriver frames content as "<addr byte>TEXT\n" for readable asserts.
func textDriver(t testing.TB, body string) led.Driver {
	t.Helper()
	d, err := led.NewTemplate(led.TemplateOpts{AddrFormat: "byte", Body: body, LineSep: "|", Trailer: "0a"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ticketStatus reads a ticket of today by number.
func ticketStatus(t *testing.T, eng *queue.Engine, number string) queue.Ticket {
	t.Helper()
	pos, err := eng.Position(context.Background(), "hospital", number)
	if err != nil && !errors.Is(err, queue.ErrNotFound) {
		t.Fatalf("position %s: %v", number, err)
	}
	return pos.Ticket
}

// newDispatcher returns the dispatcher of o on eng, failing t if New
// refuses it.
func newDispatcher(t testing.TB, eng *queue.Engine, o devices.Opts) *devices.Dispatcher {
	t.Helper()
	o.Engine = eng
	d, err := devices.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
