package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/devices/led"
)

func TestLoadHardware(t *testing.T) {
	c := mustLoad(t, Opts{File: "testdata/good/hardware.yaml", LookupEnv: noEnv})
	wantPrinters := []Printer{
		{ID: "p1", Addr: "10.0.0.5:9100", PaperMM: 80, QR: "native"},
		{ID: "p2", Addr: "printer.local:9101", PaperMM: 58, QR: "raster", Lang: "en", Footer: "Thanks"},
	}
	if !reflect.DeepEqual(c.Printers, wantPrinters) {
		t.Errorf("printers\n got %+v\nwant %+v", c.Printers, wantPrinters)
	}
	if d, _ := c.Device("k1"); d.Printer != "p1" {
		t.Errorf("devices[0].printer = %q, want p1", d.Printer)
	}
	if p, ok := c.Printer("p2"); !ok || p.PaperMM != 58 {
		t.Errorf("Printer(p2) = %+v, %v", p, ok)
	}
	// Keys shared by several kinds (template, charset) land in each; only
	// the named kind's options are compared.
	wantPorts := []LEDPort{
		{Name: "/dev/ttyUSB0", Mode: led.Mode{Baud: 19200, Parity: "even"}, Driver: led.DriverOpts{Kind: "modbus"}},
		{Name: "tcp://10.0.0.9:4001", Driver: led.DriverOpts{Kind: "template"}},
	}
	ports := slices.Clone(c.LED.Ports)
	for i := range ports {
		ports[i].Driver = led.DriverOpts{Kind: ports[i].Driver.Kind}
	}
	if !reflect.DeepEqual(ports, wantPorts) {
		t.Errorf("led.ports\n got %+v\nwant %+v", ports, wantPorts)
	}
	if got, want := c.LED.Ports[0].Driver.Modbus, (led.ModbusOpts{Start: 16, Chars: 6}); got != want {
		t.Errorf("led.ports[0].driver: got %+v, want %+v", got, want)
	}
	wantTemplate := led.TemplateOpts{Header: "0xAA 0x55", AddrFormat: "ascii2", Checksum: "sum8", ChecksumFrom: 2, Body: "{number}", Trailer: "0d"}
	if got := c.LED.Ports[1].Driver.Template; got != wantTemplate {
		t.Errorf("led.ports[1].driver: got %+v, want %+v", got, wantTemplate)
	}
	wantBoards := []LEDBoard{
		{Port: "/dev/ttyUSB0", Addr: 5, Site: "s", Counter: "5", Idle: "----"},
		{Port: "tcp://10.0.0.9:4001", Addr: 1, Site: "s", Hall: true, Lines: 4},
	}
	if !reflect.DeepEqual(c.LED.Boards, wantBoards) {
		t.Errorf("led.boards\n got %+v\nwant %+v", c.LED.Boards, wantBoards)
	}
	wantZones := []VoiceZone{
		{Name: "hall", Site: "s", Engine: "pack", Output: "dir:out/voice", Langs: []string{"zh", "en"}, Chime: true, Repeat: 1},
		{Name: "desk", Site: "s", Engine: "command", Commands: map[string]string{"en": "espeak-ng -v en -w {out} {text}"},
			Langs: []string{"en"}, Output: "aplay -q -D default {file}", Chime: false, Repeat: 2},
	}
	if !reflect.DeepEqual(c.Voice.Zones, wantZones) {
		t.Errorf("voice.zones\n got %+v\nwant %+v", c.Voice.Zones, wantZones)
	}
	if dir, ok := c.Voice.Zones[0].OutputDir(); !ok || dir != "out/voice" {
		t.Errorf("OutputDir = %q, %v", dir, ok)
	}
	if _, ok := c.Voice.Zones[1].OutputDir(); ok {
		t.Error("an audio command taken for a folder")
	}
	if len(c.Keypads) != 1 {
		t.Fatalf("keypads = %+v", c.Keypads)
	}
	if got, want := c.Keypads[0].AddrNumbers(), map[int]string{1: "1", 2: "5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keypads[0] addresses %v, want %v", got, want)
	}
}

// TestHospitalHardware: the demo runs without hardware: boards on files,
// voice into folders, no printer.
func TestHospitalHardware(t *testing.T) {
	c := mustLoad(t, Opts{File: "../testdata/hospital.yaml", LookupEnv: noEnv})
	if len(c.Printers) != 0 || len(c.Keypads) != 0 {
		t.Errorf("demo has printers %v or keypads %v", c.Printers, c.Keypads)
	}
	for i, p := range c.LED.Ports {
		if !strings.HasPrefix(p.Name, "file:out/") {
			t.Errorf("led.ports[%d].name = %q, want a file under out/", i, p.Name)
		}
	}
	counters := map[string]bool{}
	halls := 0
	for _, b := range c.LED.Boards {
		if b.Hall {
			halls++
		}
		counters[b.Counter] = true
	}
	for _, ct := range c.Sites[0].Counters {
		if !counters[ct.ID] {
			t.Errorf("counter %s has no board", ct.ID)
		}
	}
	if halls != 1 {
		t.Errorf("%d hall boards, want 1", halls)
	}
	var zones []string
	for _, z := range c.Voice.Zones {
		if _, ok := z.OutputDir(); !ok || z.Engine != "pack" {
			t.Errorf("zone %s: engine %s output %q, want the pack into a folder", z.Name, z.Engine, z.Output)
		}
		zones = append(zones, z.Name)
	}
	if !slices.Equal(zones, []string{"hall", "emergency"}) {
		t.Errorf("zones %v, want hall, emergency", zones)
	}
}

// TestHardwareMessages pins the key-named messages of the hardware
// sections (the whole list is in testdata/bad/hardware.golden).
func TestHardwareMessages(t *testing.T) {
	_, err := Load(Opts{File: "testdata/bad/hardware.yaml", LookupEnv: noEnv})
	got := problemStrings(t, err)
	for _, want := range []string{
		`devices[0].printer: unknown printer "p9"`,
		"devices[1].printer: only a kiosk prints (role display)",
		`printers[0].addr: bad port in "10.0.0.5:99999"`,
		"printers[0].paper_mm: must be 58 or 80, got 76",
		`printers[0].qr: must be native, raster or none, got "colour"`,
		`printers[1].id: duplicate printer id "p1" (also printers[0])`,
		"printers[1].addr: required (host:port of the printer, port 9100 by default)",
		"led.ports[0].name: required: a serial device (/dev/ttyUSB0), tcp://host:port or file:PATH",
		`led.ports[0].driver.encoding: must be ascii, binary, got "bcd"`,
		`led.ports[1].name: want host:port, got "nohost"`,
		`led.ports[1].parity: must be none, odd, even, mark or space, got "strange"`,
		"led.ports[1].stop_bits: must be 1 or 2, got 3",
		`led.ports[1].driver.kind: must be modbus, onbon, alpha or template, got "laser"`,
		`led.ports[2].driver.header: want hex bytes such as "01" or "0xA5 0xA5", got "0x1G"`,
		`led.ports[3].name: duplicate port "/dev/ttyUSB0" (also led.ports[2])`,
		"led.ports[3].driver.width: width and height of the area are required (pixels)",
		"led.ports[4].driver.kind: modbus boards answer each frame and a file: line never does: use a serial line or a pty",
		`led.boards[0].port: unknown port "/dev/ttyUSB9" (not in led.ports)`,
		`led.boards[1].counter: unknown counter "7" in site "s"`,
		`led.boards[2].addr: address 1 already used on port "/dev/ttyUSB0" by led.boards[1]`,
		"led.boards[2].counter: a hall board shows every counter: set counter or hall, not both",
		`led.boards[3].site: unknown site "nowhere"`,
		"led.boards[3].counter: required (or hall: true for a hall board)",
		"led.boards[4].lines: must be 1..9, got 12",
		`voice.zones[0].engine: must be pack or command, got "espeak"`,
		`voice.zones[0].output: required: dir:PATH for WAV files, or an audio command such as "aplay -q {file}"`,
		`voice.zones[1].name: duplicate zone "hall" in site "s" (also voice.zones[0])`,
		`voice.zones[1].langs[1]: must be en, zh or pt (the languages of the voice pack), got "de"`,
		"voice.zones[1].output: want dir:PATH with a folder",
		"voice.zones[1].repeat: must be 1..5, got 9",
		`voice.zones[1].commands.en: required: a TTS command for each language, e.g. "espeak-ng -v en -w {out} {text}"`,
		`voice.zones[2].name: must be lowercase letters, digits and dashes, got "Big Hall"`,
		"voice.zones[2].langs: at least one language is required: en, zh, pt (default: those of the site)",
		`sites[0].counters[1].zone: unknown voice zone "lobby" (zones of site "s": hall, Big Hall)`,
		`keypads[0].port: line "/dev/ttyUSB0" is already used by led.ports[2]`,
		"keypads[0].addrs.0: keypad address must be 1..254",
		`keypads[0].addrs.3: unknown counter "8" in site "s"`,
		`keypads[1].addrs: at least one keypad is required, e.g. {"1": "5"} (address: counter)`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing problem:\n%s\ngot:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// TestDriverOptionsCheckedByDriver: a board driver's options are refused by
// Load under their key with the reason the driver itself gives, so that a
// file that loads also starts (modbus start 65535 with 4 characters used to
// pass Load and fail in serve).
func TestDriverOptionsCheckedByDriver(t *testing.T) {
	tests := []struct {
		yaml string
		opts led.DriverOpts
		key  string
	}{
		{"{ kind: modbus, start: 65535, chars: 4 }", led.DriverOpts{Kind: "modbus", Modbus: led.ModbusOpts{Start: 65535, Chars: 4}}, "start"},
		{"{ kind: modbus, chars: 300 }", led.DriverOpts{Kind: "modbus", Modbus: led.ModbusOpts{Chars: 300}}, "chars"},
		{"{ kind: onbon, width: 8, height: 8, preamble: 20 }", led.DriverOpts{Kind: "onbon", Onbon: led.OnbonOpts{Width: 8, Height: 8, Preamble: 20}}, "preamble"},
		{"{ kind: alpha, type_code: ZZ }", led.DriverOpts{Kind: "alpha", Alpha: led.AlphaOpts{TypeCode: "ZZ"}}, "type_code"},
		{"{ kind: template, checksum_from: -1 }", led.DriverOpts{Kind: "template", Template: led.TemplateOpts{ChecksumFrom: -1}}, "checksum_from"},
		{"{ kind: laser }", led.DriverOpts{Kind: "laser"}, "kind"},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			_, derr := led.NewDriver(tt.opts)
			var oe led.OptErrors
			if !errors.As(derr, &oe) || len(oe) != 1 || oe[0].Key != tt.key {
				t.Fatalf("led.NewDriver: %v, want one problem with %s", derr, tt.key)
			}
			y := minimal + "led:\n  ports:\n    - { name: /dev/ttyUSB0, driver: " + tt.yaml + " }\n"
			_, err := load([]byte(y), Opts{LookupEnv: noEnv})
			want := "led.ports[0].driver." + tt.key + ": " + oe[0].Msg
			if got := problemStrings(t, err); !slices.Equal(got, []string{want}) {
				t.Errorf("Load: got %q\nwant %q", got, want)
			}
		})
	}
}
