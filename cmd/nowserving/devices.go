package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/web"
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
		Engine: eng, Logger: log, Kiosks: map[string]string{},
		PrinterPoll: printerPoll,
	}
	if base := cfg.HTTP.PublicURL; base != "" {
		// The QR code opens the ticket's status page.
		o.QR = func(t queue.Ticket) string { return web.TicketURL(base, t.Site, t.Number, t.Day) }
	}
	if err := addLED(&o, cfg.LED, log); err != nil {
		return nil, err
	}
	for i, z := range cfg.Voice.Zones {
		a, err := newAnnouncer(z, log)
		if err != nil {
			return nil, fmt.Errorf("devices: voice.zones[%d]: %w", i, err)
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
	if err := addKeypads(&o, cfg.Keypads, log); err != nil {
		return nil, err
	}
	d, err := devices.New(o)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// addLED adds the LED ports and boards of c to o.
func addLED(o *devices.Opts, c config.LED, log *slog.Logger) error {
	ports := map[string]*led.Port{}
	for i, pc := range c.Ports {
		k := fmt.Sprintf("led.ports[%d]", i)
		drv, err := led.NewDriver(pc.Driver)
		if err != nil {
			return fmt.Errorf("devices: %s.driver: %w", k, err)
		}
		po := led.DefaultPortOpts()
		po.Name, po.Driver, po.Logger = pc.Name, drv, log
		po.Mode = pc.Mode
		po.OnStatus = func(s led.BoardStatus) {
			if s.Online {
				log.Info("led board online", "port", s.Port, "address", s.Addr)
			} else {
				log.Warn("led board offline", "port", s.Port, "address", s.Addr, "err", s.Err)
			}
		}
		if err := makeFileDir(pc.Name); err != nil {
			return fmt.Errorf("devices: %s.name: %w", k, err)
		}
		p, err := led.NewPort(po)
		if err != nil {
			return fmt.Errorf("devices: %s: %w", k, err)
		}
		ports[pc.Name] = p
		o.Ports = append(o.Ports, p)
	}
	for _, b := range c.Boards {
		o.Boards = append(o.Boards, devices.Board{
			Port: ports[b.Port], Addr: b.Addr, Site: b.Site, Counter: b.Counter, HallLines: b.Lines, Idle: b.Idle,
		})
	}
	return nil
}

// addKeypads adds the wired keypad buses of kcs to o.
func addKeypads(o *devices.Opts, kcs []config.Keypads, log *slog.Logger) error {
	for i, kc := range kcs {
		k := fmt.Sprintf("keypads[%d]", i)
		addrs := kc.AddrNumbers()
		ko := led.KeypadOpts{}
		ko.PortOpts = led.DefaultPortOpts()
		ko.Name, ko.Logger = kc.Port, log
		ko.Mode = kc.Mode
		for a := range addrs {
			ko.Addrs = append(ko.Addrs, a)
		}
		if err := makeFileDir(kc.Port); err != nil {
			return fmt.Errorf("devices: %s.port: %w", k, err)
		}
		bus, err := led.NewKeypadBus(ko)
		if err != nil {
			return fmt.Errorf("devices: %s: %w", k, err)
		}
		o.Keypads = append(o.Keypads, devices.Keypad{Bus: bus, Site: kc.Site, Counters: addrs, Name: kc.Port})
	}
	return nil
}
