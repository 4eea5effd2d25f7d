package daemon

import (
	"fmt"
	"strconv"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// DeviceSources reads the dispatcher's status (e.g. Dispatcher.Status)
// for the device metrics.
func DeviceSources(status func() devices.Status) metrics.DeviceSources {
	return metrics.DeviceSources{
		Boards: func() []metrics.Board {
			st := status()
			out := make([]metrics.Board, 0, len(st.Boards))
			for _, b := range st.Boards {
				out = append(out, metrics.Board{Port: b.Port, Address: b.Addr, Online: b.Online})
			}
			return out
		},
		Printers: func() []metrics.Printer {
			st := status()
			out := make([]metrics.Printer, 0, len(st.Printers))
			for _, p := range st.Printers {
				status := p.Status
				switch status {
				case "unknown":
					status = "ok" // nothing printed yet: no failure known
				case "offline", "error":
					status = "no_answer"
				}
				out = append(out, metrics.Printer{Name: p.ID, Status: status})
			}
			return out
		},
		Zones: func() []metrics.Zone {
			st := status()
			out := make([]metrics.Zone, 0, len(st.Zones))
			for _, z := range st.Zones {
				name := z.Name
				if multiSite(st.Zones) {
					name = z.Site + "/" + z.Name
				}
				out = append(out, metrics.Zone{Zone: name, Pending: z.Stats.Pending, Queued: z.Stats.Queued, Dropped: z.Stats.Dropped})
			}
			return out
		},
	}
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
	di := wire.DeviceInfo{ID: fmt.Sprintf("%s#%d", line, addr), Kind: kind, Counter: wireCounter(counter), Online: online}
	if !online {
		di.Detail = "not answering"
	}
	return di
}

// wireCounter is a configured counter id (validated as a number) on the
// wire; 0 for a hall board.
func wireCounter(id string) uint32 {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}
