package devices

import (
	"sort"
	"time"

	"github.com/nowserving/nowserving/devices/voice"
)

// Status is the state of every device, for metrics and the console.
type Status struct {
	Boards   []BoardStatus
	Printers []PrinterStatus
	Zones    []ZoneStatus
	Keypads  []KeypadStatus
}

// BoardStatus is one LED board.
type BoardStatus struct {
	Port    string
	Addr    int
	Site    string
	Counter string // empty for a hall board
	Online  bool   // the board took its last frame
}

// PrinterStatus is a printer's outcome of its last job.
type PrinterStatus struct {
	ID   string
	Addr string
	// Status is "unknown" (nothing printed yet), "ok", "paper_out",
	// "cover_open", "offline", "no_answer" or "error".
	Status string
	Err    error
	At     time.Time // of the last job
}

// ZoneStatus is one voice zone's counters.
type ZoneStatus struct {
	Name  string
	Site  string
	Stats voice.Stats
}

// KeypadStatus is one wired keypad.
type KeypadStatus struct {
	Bus     string
	Addr    int
	Site    string
	Counter string
	Online  bool // answered its last poll
}

// Status returns the state of the boards, printers, voice zones and
// keypads. It is safe to call at any time.
func (d *Dispatcher) Status() Status {
	var s Status
	for _, b := range d.o.Boards {
		s.Boards = append(s.Boards, BoardStatus{Port: b.Port.Name(), Addr: b.Addr, Site: b.Site, Counter: b.Counter, Online: b.Port.Online(b.Addr)})
	}
	d.mu.Lock()
	for _, p := range d.status {
		s.Printers = append(s.Printers, p)
	}
	d.mu.Unlock()
	sort.Slice(s.Printers, func(i, j int) bool { return s.Printers[i].ID < s.Printers[j].ID })
	for _, z := range d.o.Zones {
		s.Zones = append(s.Zones, ZoneStatus{Name: z.Name, Site: z.Site, Stats: z.Announcer.Stats()})
	}
	for _, k := range d.o.Keypads {
		addrs := make([]int, 0, len(k.Counters))
		for a := range k.Counters {
			addrs = append(addrs, a)
		}
		sort.Ints(addrs)
		for _, a := range addrs {
			s.Keypads = append(s.Keypads, KeypadStatus{Bus: k.Name, Addr: a, Site: k.Site, Counter: k.Counters[a], Online: k.Bus.Online(a)})
		}
	}
	return s
}
