package main

import (
	"fmt"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/web"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/sim"
)

// printerPoll is how often the daemon asks each network printer's status,
// so that a printer out of paper shows on the console and in the metrics
// before a kiosk needs it.
const printerPoll = 30 * time.Second

// buildDevices builds the LED ports and boards, voice zones, printers and
// keypad buses of the configuration and the dispatcher that drives them.
// Nothing is opened yet: the dispatcher's Run opens the lines. Folders of
// file: lines and dir: outputs are created here, so the demo runs in a
// fresh checkout.
func buildDevices(cfg *config.Config, eng *queue.Engine, log *slog.Logger) (*devices.Dispatcher, error) {
	o := devices.Opts{
		Engine: eng, Logger: log, Languages: map[string][]string{}, Kiosks: map[string]string{},
		PrinterPoll: printerPoll,
	}
	for _, s := range cfg.Sites {
		o.Languages[s.ID] = s.Languages
	}
	if base := cfg.HTTP.PublicURL; base != "" {
		// The QR code opens the ticket's status page.
		o.QR = func(t queue.Ticket) string { return web.TicketURL(base, t.Site, t.Number, t.Day) }
	}

	ports := map[string]*led.Port{}
	for i, pc := range cfg.LED.Ports {
		k := fmt.Sprintf("led.ports[%d]", i)
		drv, err := led.NewDriver(ledDriverOpts(pc.Driver))
		if err != nil {
			return nil, fmt.Errorf("devices: %s.driver: %w", k, err)
		}
		po := led.DefaultPortOpts()
		po.Name, po.Driver, po.Logger = pc.Name, drv, log
		setMode(&po, pc.Baud, pc.DataBits, pc.Parity, pc.StopBits)
		po.OnStatus = func(s led.BoardStatus) {
			if s.Online {
				log.Info("led board online", "port", s.Port, "address", s.Addr)
			} else {
				log.Warn("led board offline", "port", s.Port, "address", s.Addr, "err", s.Err)
			}
		}
		if err := makeFileDir(pc.Name); err != nil {
			return nil, fmt.Errorf("devices: %s.name: %w", k, err)
		}
		p, err := led.NewPort(po)
		if err != nil {
			return nil, fmt.Errorf("devices: %s: %w", k, err)
		}
		ports[pc.Name] = p
		o.Ports = append(o.Ports, p)
	}
	for _, b := range cfg.LED.Boards {
		o.Boards = append(o.Boards, devices.Board{
			Port: ports[b.Port], Addr: b.Addr, Site: b.Site, Counter: b.Counter, HallLines: b.Lines, Idle: b.Idle,
		})
	}

	for i, z := range cfg.Voice.Zones {
		k := fmt.Sprintf("voice.zones[%d]", i)
		a, err := newAnnouncer(z, log)
		if err != nil {
			return nil, fmt.Errorf("devices: %s: %w", k, err)
		}
		o.Zones = append(o.Zones, devices.Zone{Name: z.Name, Site: z.Site, Announcer: a})
	}

	for i, pc := range cfg.Printers {
		qr, err := escpos.ParseQRMode(pc.QR)
		if err != nil {
			return nil, fmt.Errorf("devices: printers[%d].qr: %w", i, err)
		}
		l := escpos.DefaultLayout()
		l.PaperMM, l.QR, l.Lang = pc.PaperMM, qr, pc.Lang
		eo := escpos.DefaultOpts()
		eo.Addr, eo.Logger = pc.Addr, log.With("printer", pc.ID)
		o.Printers = append(o.Printers, devices.Printer{ID: pc.ID, Printer: escpos.NewPrinter(eo), Layout: l, Footer: pc.Footer})
	}
	for _, d := range cfg.Devices {
		if d.Printer != "" {
			o.Kiosks[d.ID] = d.Printer
		}
	}

	for i, kc := range cfg.Keypads {
		k := fmt.Sprintf("keypads[%d]", i)
		addrs := kc.AddrNumbers()
		ko := led.KeypadOpts{}
		ko.PortOpts = led.DefaultPortOpts()
		ko.Name, ko.Logger = kc.Port, log
		setMode(&ko.PortOpts, kc.Baud, kc.DataBits, kc.Parity, kc.StopBits)
		for a := range addrs {
			ko.Addrs = append(ko.Addrs, a)
		}
		if err := makeFileDir(kc.Port); err != nil {
			return nil, fmt.Errorf("devices: %s.port: %w", k, err)
		}
		bus, err := led.NewKeypadBus(ko)
		if err != nil {
			return nil, fmt.Errorf("devices: %s: %w", k, err)
		}
		o.Keypads = append(o.Keypads, devices.Keypad{Bus: bus, Site: kc.Site, Counters: addrs, Name: kc.Port})
	}
	d, err := devices.New(o)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ledDriverOpts maps a config driver onto the led package's options.
func ledDriverOpts(c config.LEDDriver) led.DriverOpts {
	o := led.DriverOpts{Kind: c.Kind}
	switch c.Kind {
	case "modbus":
		o.Modbus = led.ModbusOpts{Start: uint16(c.Start), Chars: c.Chars, Encoding: c.Encoding, Template: c.Template}
	case "onbon":
		o.Onbon = led.OnbonOpts{
			Preamble: c.Preamble, SrcAddr: uint16(c.SrcAddr), DeviceType: byte(c.DeviceType),
			ProtocolVersion: byte(c.ProtocolVersion), Area: byte(c.Area),
			X: uint16(c.X), Y: uint16(c.Y), Width: uint16(c.Width), Height: uint16(c.Height),
			Charset: c.Charset, Template: c.Template, WantReply: c.WantReply,
		}
	case "alpha":
		o.Alpha = led.AlphaOpts{StringSize: c.StringSize, Template: c.Template}
		if c.TypeCode != "" {
			o.Alpha.TypeCode = c.TypeCode[0]
		}
	case "template":
		// Validate checked the hex.
		header, _ := led.ParseHex(c.Header)
		trailer, _ := led.ParseHex(c.Trailer)
		o.Template = led.TemplateOpts{
			Header: header, Trailer: trailer, AddrFormat: c.AddrFormat, Charset: c.Charset,
			Checksum: c.Checksum, ChecksumFrom: c.ChecksumFrom, ChecksumTo: c.ChecksumTo,
			Body: c.Template, LineSep: c.LineSep,
		}
	}
	return o
}

// setMode sets a line's mode; zeros keep the defaults.
func setMode(po *led.PortOpts, baud, dataBits int, parity string, stopBits int) {
	if baud > 0 {
		po.Baud = baud
	}
	if dataBits > 0 {
		po.DataBits = dataBits
	}
	if parity != "" {
		po.Parity = parity
	}
	if stopBits > 0 {
		po.StopBits = stopBits
	}
}

// newAnnouncer builds a voice zone's engine, sink and announcer.
func newAnnouncer(z config.VoiceZone, log *slog.Logger) (*voice.Announcer, error) {
	vo := voice.DefaultOpts()
	vo.Langs, vo.Chime, vo.Repeat = z.Langs, z.Chime, z.Repeat
	vo.Logger = log.With("zone", z.Name)
	if z.Engine == "command" {
		co := voice.DefaultCommandOpts()
		co.Commands = z.Commands
		co.Timeout = 20 * time.Second
		eng, err := voice.NewCommand(co)
		if err != nil {
			return nil, fmt.Errorf("commands: %w", err)
		}
		vo.Engine = eng
	}
	if dir, ok := z.OutputDir(); ok {
		s, err := voice.NewDirSink(dir, nil)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		vo.Sink = s
	} else {
		s, err := voice.NewCommandSink(z.Output, 60*time.Second, "")
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		vo.Sink = s
	}
	a, err := voice.New(vo)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// makeFileDir creates the folder of a "file:PATH" line.
func makeFileDir(name string) error {
	path, ok := strings.CutPrefix(name, "file:")
	if !ok {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create folder for %s: %w", name, err)
	}
	return nil
}

// deviceSources reads the dispatcher's status for the device metrics.
func deviceSources(d *devices.Dispatcher) metrics.DeviceSources {
	return metrics.DeviceSources{
		Boards: func() []metrics.Board {
			st := d.Status()
			out := make([]metrics.Board, 0, len(st.Boards))
			for _, b := range st.Boards {
				out = append(out, metrics.Board{Port: b.Port, Address: b.Addr, Online: b.Online})
			}
			return out
		},
		Printers: func() []metrics.Printer {
			st := d.Status()
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
			st := d.Status()
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

// deviceHealth reports a site's hardware for the console's SNAPSHOT: LED
// boards and wired keypads that answer or not, printers' last status, voice
// zones that dropped announcements.
func deviceHealth(d *devices.Dispatcher) protocol.HealthFunc {
	return func(site string) []wire.DeviceInfo {
		st := d.Status()
		var out []wire.DeviceInfo
		for _, b := range st.Boards {
			if b.Site != site {
				continue
			}
			di := wire.DeviceInfo{ID: fmt.Sprintf("%s#%d", b.Port, b.Addr), Kind: "led", Counter: wireCounter(b.Counter), Online: b.Online}
			if !b.Online {
				di.Detail = "not answering"
			}
			out = append(out, di)
		}
		for _, k := range st.Keypads {
			if k.Site != site {
				continue
			}
			di := wire.DeviceInfo{ID: fmt.Sprintf("%s#%d", k.Bus, k.Addr), Kind: "keypad", Counter: wireCounter(k.Counter), Online: k.Online}
			if !k.Online {
				di.Detail = "not answering"
			}
			out = append(out, di)
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

// wireCounter is a configured counter id (validated as a number) on the
// wire; 0 for a hall board.
func wireCounter(id string) uint32 {
	n, _ := sim.CounterNum(id)
	return n
}
