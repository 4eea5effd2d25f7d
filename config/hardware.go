package config

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/nowserving/nowserving/devices/led"
)

// Hardware sections of the configuration: network ticket printers, LED
// boards on serial lines, voice zones and wired keypads. They are plain
// values; cmd/nowserving builds the drivers (packages devices/...) from them.
// A board driver's options are led's own (led.DriverOpts), checked by the
// driver.

// Printer is a network ticket printer (ESC/POS over raw TCP). Kiosks that
// have only a button print on one: devices[].printer names it.
type Printer struct {
	// ID is unique; devices[].printer refers to it.
	ID string `mapstructure:"id"`
	// Addr is host:port; the port defaults to 9100.
	Addr string `mapstructure:"addr"`
	// PaperMM is the paper width, 58 or 80 (default 80).
	PaperMM int `mapstructure:"paper_mm"`
	// QR is how the ticket's QR code is printed: native (GS ( k), raster
	// (GS v 0, printers without a QR command) or none (default native).
	QR string `mapstructure:"qr"`
	// Lang is the ticket language (en or zh); empty means the site's main
	// language.
	Lang string `mapstructure:"lang"`
	// Footer is printed at the bottom of every ticket.
	Footer string `mapstructure:"footer"`
}

// LED holds the serial lines and the boards on them.
type LED struct {
	Ports  []LEDPort  `mapstructure:"ports"`
	Boards []LEDBoard `mapstructure:"boards"`
}

// LEDPort is one serial line (or serial device server) and the protocol
// its boards speak.
type LEDPort struct {
	// Name is a serial device ("/dev/ttyUSB0"), "tcp://host:port" for a
	// serial device server, or "file:PATH" to append the frames to a file
	// (demos without hardware).
	Name string `mapstructure:"name"`
	// Mode is the line mode, keys baud, data_bits, parity and stop_bits
	// (default 9600 8N1), checked by led.
	Mode led.Mode `mapstructure:",squash"`
	// Driver is the boards' protocol and its options: the keys are those
	// of led.DriverOpts (kind, then the options of that kind), and the
	// driver's own check validates them.
	Driver led.DriverOpts `mapstructure:"driver"`
}

// LEDBoard is one board: a counter board (Counter set) showing the
// counter's ticket, or a hall board (Hall) listing the last calls.
type LEDBoard struct {
	// Port is the name of the led.ports entry the board is on.
	Port string `mapstructure:"port"`
	// Addr is the board's address on the line.
	Addr int    `mapstructure:"addr"`
	Site string `mapstructure:"site"`
	// Counter is the counter id whose ticket the board shows.
	Counter string `mapstructure:"counter"`
	// Hall makes a hall board showing the last Lines calls (default 4).
	Hall  bool `mapstructure:"hall"`
	Lines int  `mapstructure:"lines"`
	// Idle is shown on a counter board while its counter has no ticket;
	// empty blanks it.
	Idle string `mapstructure:"idle"`
}

// Voice holds the voice zones.
type Voice struct {
	Zones []VoiceZone `mapstructure:"zones"`
}

// VoiceZone is one set of speakers: counters name their zone
// (sites[].counters[].zone; empty means the site's first zone).
type VoiceZone struct {
	// Name is unique in the site, [a-z0-9-]+.
	Name string `mapstructure:"name"`
	Site string `mapstructure:"site"`
	// Engine is pack (the recorded voice built into the binary, default) or
	// command (an external TTS command per language, see Commands).
	Engine string `mapstructure:"engine"`
	// Commands maps a language to a TTS command, e.g.
	// {en: "espeak-ng -v en -w {out} {text}"}; engine command only.
	Commands map[string]string `mapstructure:"commands"`
	// Output is "dir:PATH" (write WAV files into a folder) or an audio
	// command such as "aplay -q -D default {file}".
	Output string `mapstructure:"output"`
	// Langs are the announcement languages in speaking order, en and/or
	// zh (default: the site's languages among those).
	Langs []string `mapstructure:"langs"`
	// Chime plays a chime before each announcement (default true).
	Chime bool `mapstructure:"chime"`
	// Repeat is how many times an announcement is spoken, 1..5 (default 1).
	Repeat int `mapstructure:"repeat"`
}

// Keypads is one RS-485 bus of wired keypads (QSystem-style, see package
// devices/led), each address mapped to a counter of the site.
type Keypads struct {
	// Port is the serial line (same forms as led.ports[].name), not
	// shared with LED boards.
	Port string `mapstructure:"port"`
	// Mode is the line mode, as for led.ports.
	Mode led.Mode `mapstructure:",squash"`
	Site string   `mapstructure:"site"`
	// Addrs maps a keypad's bus address (1..254) to a counter id.
	Addrs map[string]string `mapstructure:"addrs"`
}

// AddrNumbers returns the keypad addresses as numbers, with their
// counters; entries that Validate rejects are left out.
func (k *Keypads) AddrNumbers() map[int]string {
	out := map[int]string{}
	for a, c := range k.Addrs {
		if n, err := strconv.Atoi(a); err == nil {
			out[n] = c
		}
	}
	return out
}

// OutputDir returns the folder of a "dir:PATH" output and true, or false for
// an audio command.
func (z *VoiceZone) OutputDir() (string, bool) {
	return strings.CutPrefix(z.Output, "dir:")
}

// Printer returns the printer with the given id.
func (c *Config) Printer(id string) (*Printer, bool) {
	for i := range c.Printers {
		if c.Printers[i].ID == id {
			return &c.Printers[i], true
		}
	}
	return nil, false
}

// voiceLangs are the languages the voice engines speak (the voice pack's).
var voiceLangs = []string{"en", "zh", "pt"}

// printerLangs are the languages printed tickets have labels in.
var printerLangs = []string{"en", "zh"}

// applyHardwareDefaults fills omitted hardware values; isSet as in
// applyDefaults.
func applyHardwareDefaults(c *Config, isSet func(key string) bool) {
	for i := range c.Printers {
		p := &c.Printers[i]
		if p.PaperMM == 0 {
			p.PaperMM = 80
		}
		if p.QR == "" {
			p.QR = "native"
		}
		if p.Addr != "" {
			if _, _, err := net.SplitHostPort(p.Addr); err != nil && strings.Contains(err.Error(), "missing port") {
				p.Addr = net.JoinHostPort(strings.Trim(p.Addr, "[]"), "9100")
			}
		}
	}
	for i := range c.LED.Boards {
		b := &c.LED.Boards[i]
		if b.Hall && b.Lines == 0 {
			b.Lines = 4
		}
	}
	for i := range c.Voice.Zones {
		z := &c.Voice.Zones[i]
		k := keyf("voice.zones[%d]", i)
		if z.Engine == "" {
			z.Engine = "pack"
		}
		orDefault(isSet, k+".chime", &z.Chime, true)
		if z.Repeat == 0 && !isSet(k+".repeat") {
			z.Repeat = 1
		}
		if len(z.Langs) == 0 && !isSet(k+".langs") {
			if s, ok := c.Site(z.Site); ok {
				for _, l := range s.Languages {
					if slices.Contains(voiceLangs, l) {
						z.Langs = append(z.Langs, l)
					}
				}
			}
		}
	}
}

// validateHardware checks the hardware sections, in the order of the
// messages: printers, LED ports and boards, voice zones, keypads.
func (c *Config) validateHardware(ps *problems) {
	c.validatePrinters(ps)
	lines, portAt := c.validatePorts(ps)
	c.validateBoards(portAt, ps)
	c.validateZones(ps)
	c.validateZoneRefs(ps)
	c.validateKeypads(lines, ps)
}

// validatePrinters checks the printers and the kiosks that name one.
func (c *Config) validatePrinters(ps *problems) {
	ids := newIDList("printers", "printer id", reDeviceID, deviceIDRule)
	for i := range c.Printers {
		p := &c.Printers[i]
		k := ids.check(i, p.ID, ps)
		if p.Addr == "" {
			ps.add(k+".addr", "required (host:port of the printer, port 9100 by default)")
		} else if err := checkAddr(p.Addr); err != "" {
			ps.add(k+".addr", "%s", err)
		}
		if p.PaperMM != 58 && p.PaperMM != 80 {
			ps.add(k+".paper_mm", "must be 58 or 80, got %d", p.PaperMM)
		}
		switch p.QR {
		case "native", "raster", "none":
		default:
			ps.add(k+".qr", "must be native, raster or none, got %q", p.QR)
		}
		if p.Lang != "" && !slices.Contains(printerLangs, p.Lang) {
			ps.add(k+".lang", "must be en or zh (empty: the site's main language), got %q", p.Lang)
		}
	}
	for i := range c.Devices {
		d := &c.Devices[i]
		if d.Printer == "" {
			continue
		}
		k := keyf("devices[%d].printer", i)
		if d.Role != RoleKiosk {
			ps.add(k, "only a kiosk prints (role %s)", d.Role)
		} else if _, ok := ids.at[d.Printer]; !ok {
			ps.add(k, "unknown printer %q", d.Printer)
		}
	}
}

// validatePorts checks the LED lines; it returns the serial lines in use
// (name to key), so that two owners are refused, and each port's index.
func (c *Config) validatePorts(ps *problems) (lines map[string]string, portAt map[string]int) {
	lines, portAt = map[string]string{}, map[string]int{}
	for i := range c.LED.Ports {
		p := &c.LED.Ports[i]
		k := keyf("led.ports[%d]", i)
		checkLine(k+".name", p.Name, ps)
		if ps.unique(portAt, i, p.Name, k+".name", "port", "led.ports") {
			lines[p.Name] = k
		}
		addOptErrors(k, p.Mode.Check(), ps)
		addOptErrors(k+".driver", p.Driver.Check(), ps)
		if strings.HasPrefix(p.Name, "file:") && p.Driver.WantsReply() {
			ps.add(k+".driver.kind", "%s boards answer each frame and a file: line never does: use a serial line or a pty", p.Driver.Kind)
		}
	}
	return lines, portAt
}

// validateBoards checks the LED boards against the ports of portAt.
func (c *Config) validateBoards(portAt map[string]int, ps *problems) {
	boardAt := map[string]int{}
	for i := range c.LED.Boards {
		b := &c.LED.Boards[i]
		k := keyf("led.boards[%d]", i)
		if b.Port == "" {
			ps.add(k+".port", "required (the name of a led.ports entry)")
		} else if _, ok := portAt[b.Port]; !ok {
			ps.add(k+".port", "unknown port %q (not in led.ports)", b.Port)
		}
		if b.Addr < 0 || b.Addr > 65535 {
			ps.add(k+".addr", "must be 0..65535, got %d", b.Addr)
		}
		id := b.Port + "\x00" + strconv.Itoa(b.Addr)
		if j, dup := boardAt[id]; dup {
			ps.add(k+".addr", "address %d already used on port %q by led.boards[%d]", b.Addr, b.Port, j)
		} else {
			boardAt[id] = i
		}
		site := c.siteRef(k+".site", b.Site, ps)
		switch {
		case b.Hall && b.Counter != "":
			ps.add(k+".counter", "a hall board shows every counter: set counter or hall, not both")
		case !b.Hall && b.Counter == "":
			ps.add(k+".counter", "required (or hall: true for a hall board)")
		case b.Counter != "" && site != nil:
			if _, ok := site.Counter(b.Counter); !ok {
				ps.add(k+".counter", "unknown counter %q in site %q", b.Counter, b.Site)
			}
		}
		if b.Hall && (b.Lines < 1 || b.Lines > 9) {
			ps.add(k+".lines", "must be 1..9, got %d", b.Lines)
		}
		if !b.Hall && b.Lines != 0 {
			ps.add(k+".lines", "only a hall board has lines")
		}
	}
}

// validateZones checks the voice zones.
func (c *Config) validateZones(ps *problems) {
	zoneAt := map[string]int{}
	for i := range c.Voice.Zones {
		z := &c.Voice.Zones[i]
		k := keyf("voice.zones[%d]", i)
		ps.match(k+".name", z.Name, reZone, "must be lowercase letters, digits and dashes")
		site := c.siteRef(k+".site", z.Site, ps)
		id := z.Site + "\x00" + z.Name
		if j, dup := zoneAt[id]; dup && z.Name != "" {
			ps.add(k+".name", "duplicate zone %q in site %q (also voice.zones[%d])", z.Name, z.Site, j)
		} else {
			zoneAt[id] = i
		}
		if len(z.Langs) == 0 {
			ps.add(k+".langs", "at least one language is required: en, zh, pt (default: those of the site)")
		}
		for j, l := range z.Langs {
			if !slices.Contains(voiceLangs, l) {
				ps.add(keyf("%s.langs[%d]", k, j), "must be en, zh or pt (the languages of the voice pack), got %q", l)
			} else if site != nil && !slices.Contains(site.Languages, l) {
				ps.add(keyf("%s.langs[%d]", k, j), "language %q is not in the site languages (%s)", l, strings.Join(site.Languages, ", "))
			}
		}
		switch z.Engine {
		case "pack":
			if len(z.Commands) > 0 {
				ps.add(k+".commands", "only for engine command")
			}
		case "command":
			for _, l := range z.Langs {
				if slices.Contains(voiceLangs, l) && strings.TrimSpace(z.Commands[l]) == "" {
					ps.add(k+".commands."+l, "required: a TTS command for each language, e.g. \"espeak-ng -v en -w {out} {text}\"")
				}
			}
		default:
			ps.add(k+".engine", "must be pack or command, got %q", z.Engine)
		}
		if dir, ok := z.OutputDir(); ok && dir == "" {
			ps.add(k+".output", "want dir:PATH with a folder")
		} else if strings.TrimSpace(z.Output) == "" {
			ps.add(k+".output", "required: dir:PATH for WAV files, or an audio command such as \"aplay -q {file}\"")
		}
		if z.Repeat < 1 || z.Repeat > 5 {
			ps.add(k+".repeat", "must be 1..5, got %d", z.Repeat)
		}
	}
}

// validateZoneRefs checks that a site with zones knows the zone of each of
// its counters.
func (c *Config) validateZoneRefs(ps *problems) {
	for i := range c.Sites {
		s := &c.Sites[i]
		var names []string
		for _, z := range c.Voice.Zones {
			if z.Site == s.ID && !slices.Contains(names, z.Name) {
				names = append(names, z.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		for j, ct := range s.Counters {
			if ct.Zone != "" && !slices.Contains(names, ct.Zone) {
				ps.add(keyf("sites[%d].counters[%d].zone", i, j), "unknown voice zone %q (zones of site %q: %s)", ct.Zone, s.ID, strings.Join(names, ", "))
			}
		}
	}
}

// validateKeypads checks the keypad buses; lines are the serial lines the
// LED ports use.
func (c *Config) validateKeypads(lines map[string]string, ps *problems) {
	for i := range c.Keypads {
		kp := &c.Keypads[i]
		k := keyf("keypads[%d]", i)
		checkLine(k+".port", kp.Port, ps)
		if other, dup := lines[kp.Port]; dup && kp.Port != "" {
			ps.add(k+".port", "line %q is already used by %s", kp.Port, other)
		} else {
			lines[kp.Port] = k
		}
		addOptErrors(k, kp.Mode.Check(), ps)
		site := c.siteRef(k+".site", kp.Site, ps)
		if len(kp.Addrs) == 0 {
			ps.add(k+".addrs", "at least one keypad is required, e.g. {\"1\": \"5\"} (address: counter)")
		}
		for _, a := range sortedKeys(kp.Addrs) {
			ak := k + ".addrs." + a
			if n, err := strconv.Atoi(a); err != nil || n < 1 || n > 254 {
				ps.add(ak, "keypad address must be 1..254")
			}
			if site != nil {
				if _, ok := site.Counter(kp.Addrs[a]); !ok {
					ps.add(ak, "unknown counter %q in site %q", kp.Addrs[a], kp.Site)
				}
			}
		}
	}
}

// siteRef checks a required reference to a site.
func (c *Config) siteRef(k, id string, ps *problems) *Site {
	if id == "" {
		ps.add(k, "required")
		return nil
	}
	s, ok := c.Site(id)
	if !ok {
		ps.add(k, "unknown site %q", id)
		return nil
	}
	return s
}

// checkLine checks a serial line name.
func checkLine(k, name string, ps *problems) {
	switch {
	case name == "":
		ps.add(k, "required: a serial device (/dev/ttyUSB0), tcp://host:port or file:PATH")
	case strings.HasPrefix(name, "tcp://"):
		if err := checkAddr(strings.TrimPrefix(name, "tcp://")); err != "" {
			ps.add(k, "%s", err)
		}
	case strings.HasPrefix(name, "file:") && len(name) == len("file:"):
		ps.add(k, "want file:PATH with a path")
	}
}

// addOptErrors adds the problems a device package's own check found (err
// from a Check method of led), each under k and the option's key.
func addOptErrors(k string, err error, ps *problems) {
	if err == nil {
		return
	}
	var oe led.OptErrors
	if !errors.As(err, &oe) {
		ps.add(k, "%s", err)
		return
	}
	for _, e := range oe {
		ps.add(k+"."+e.Key, "%s", e.Msg)
	}
}
