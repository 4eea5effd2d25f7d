package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Board is the state of one LED board, as the device layer reports it.
type Board struct {
	Port    string
	Address int
	Online  bool
}

// Printer is the state of one ticket printer: Status is one of
// PrinterStatuses.
type Printer struct {
	Name   string
	Status string
}

// PrinterStatuses are the values Printer.Status takes.
var PrinterStatuses = []string{"ok", "paper_out", "cover_open", "no_answer"}

// Zone is the announcement counts of one voice zone.
type Zone struct {
	Zone    string
	Pending int    // announcements waiting now
	Queued  uint64 // accepted since start
	Dropped uint64 // dropped since start
}

// DeviceSources are read at every scrape; any may be nil.
type DeviceSources struct {
	Boards   func() []Board
	Printers func() []Printer
	Zones    func() []Zone
}

// RegisterDevices registers a collector that reads src at scrape time:
//
//	nowserving_led_board_online{port, address}            1 or 0
//	nowserving_printer_status{printer, status}            1 for the current status, 0 for the others
//	nowserving_voice_announcements_pending{zone}          gauge
//	nowserving_voice_announcements_queued_total{zone}
//	nowserving_voice_announcements_dropped_total{zone}
func RegisterDevices(reg prometheus.Registerer, src DeviceSources) error {
	c := &deviceCollector{
		src:     src,
		board:   prometheus.NewDesc("nowserving_led_board_online", "Whether an LED board answers (1) or not (0).", []string{"port", "address"}, nil),
		printer: prometheus.NewDesc("nowserving_printer_status", "Printer status: 1 for the current one.", []string{"printer", "status"}, nil),
		pending: prometheus.NewDesc("nowserving_voice_announcements_pending", "Announcements waiting to be played.", []string{"zone"}, nil),
		queued:  prometheus.NewDesc("nowserving_voice_announcements_queued_total", "Announcements accepted.", []string{"zone"}, nil),
		dropped: prometheus.NewDesc("nowserving_voice_announcements_dropped_total", "Announcements dropped (overflow or shutdown).", []string{"zone"}, nil),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register device metrics: %w", err)
	}
	return nil
}

type deviceCollector struct {
	src                                      DeviceSources
	board, printer, pending, queued, dropped *prometheus.Desc
}

func (c *deviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.board, c.printer, c.pending, c.queued, c.dropped} {
		ch <- d
	}
}

func (c *deviceCollector) Collect(ch chan<- prometheus.Metric) {
	// A duplicate label set would fail the scrape: the first of each is kept.
	for _, b := range unique(c.src.Boards, func(b Board) string { return b.Port + "\x00" + fmt.Sprint(b.Address) }) {
		v := 0.0
		if b.Online {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.board, prometheus.GaugeValue, v, b.Port, fmt.Sprint(b.Address))
	}
	for _, p := range unique(c.src.Printers, func(p Printer) string { return p.Name }) {
		for _, s := range PrinterStatuses {
			v := 0.0
			if s == p.Status {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.printer, prometheus.GaugeValue, v, p.Name, s)
		}
	}
	for _, z := range unique(c.src.Zones, func(z Zone) string { return z.Zone }) {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(z.Pending), z.Zone)
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.CounterValue, float64(z.Queued), z.Zone)
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(z.Dropped), z.Zone)
	}
}

// unique reads src (none when it is nil) and keeps the first item of each
// key.
func unique[T any](src func() []T, key func(T) string) []T {
	if src == nil {
		return nil
	}
	var out []T
	seen := map[string]bool{}
	for _, it := range src() {
		if k := key(it); !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	return out
}
