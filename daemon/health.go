package daemon

import (
	"fmt"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// DeviceSources reads the dispatcher's status (e.g. Dispatcher.Status)
// for the device metrics.
func DeviceSources(status func() devices.Status) metrics.DeviceSources {
	return metrics.DeviceSources{
		Boards: func() []metrics.Board {
			return convert(status().Boards, func(b devices.BoardStatus) metrics.Board {
				return metrics.Board{Port: b.Port, Address: b.Addr, Online: b.Online}
			})
		},
		Printers: func() []metrics.Printer {
			return convert(status().Printers, func(p devices.PrinterStatus) metrics.Printer {
				status := p.Status
				switch status {
				case "unknown":
					status = "ok" // nothing printed yet: no failure known
				case "offline", "error":
					status = "no_answer"
				}
				return metrics.Printer{Name: p.ID, Status: status}
			})
		},
		Zones: func() []metrics.Zone {
			zs := status().Zones
			return convert(zs, func(z devices.ZoneStatus) metrics.Zone {
				name := z.Name
				if multiSite(zs) {
					name = z.Site + "/" + z.Name
				}
				return metrics.Zone{Zone: name, Pending: z.Stats.Pending, Queued: z.Stats.Queued, Dropped: z.Stats.Dropped}
			})
		},
	}
}

// convert maps every item of in with f.
func convert[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, it := range in {
		out = append(out, f(it))
	}
	return out
}

// multiSite reports whether zones of several sites are configured, so their
// names need the site to stay unique.
func multiSite(zs []devices.ZoneStatus) bool {
	for _, z := range zs {
		if z.Site != zs[0].Site {
			return true
		}
	}
	return false
}

// DeviceHealth reports a site's hardware for the console's SNAPSHOT: LED
// boards and wired keypads that answer or not, printers' last status, voice
// zones that dropped announcements.
func DeviceHealth(status func() devices.Status) protocol.HealthFunc {
	return func(site string) []wire.DeviceInfo {
		st := status()
		var out []wire.DeviceInfo
		for _, b := range st.Boards {
			if b.Site == site {
				out = append(out, onLine("led", b.Port, b.Addr, b.Counter, b.Online))
			}
		}
		for _, k := range st.Keypads {
			if k.Site == site {
				out = append(out, onLine("keypad", k.Bus, k.Addr, k.Counter, k.Online))
			}
		}
		for _, p := range st.Printers {
			di := wire.DeviceInfo{ID: p.ID, Kind: "printer", Online: p.Status == "ok" || p.Status == "unknown"}
			if !di.Online {
				di.Detail = p.Status
			}
			out = append(out, di)
		}
		for _, z := range st.Zones {
			if z.Site != site {
				continue
			}
			di := wire.DeviceInfo{ID: z.Name, Kind: "voice", Online: true}
			if z.Stats.Dropped > 0 || z.Stats.Failed > 0 {
				di.Detail = fmt.Sprintf("%d dropped, %d failed", z.Stats.Dropped, z.Stats.Failed)
			}
			out = append(out, di)
		}
		return out
	}
}

// onLine describes a device of kind at addr on a serial line.
func onLine(kind, line string, addr int, counter string, online bool) wire.DeviceInfo {
	di := wire.DeviceInfo{ID: fmt.Sprintf("%s#%d", line, addr), Kind: kind, Counter: queue.CounterNumber(counter), Online: online}
	if !online {
		di.Detail = "not answering"
	}
	return di
}
