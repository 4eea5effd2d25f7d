package led

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// hexDump renders frames one per line as spaced hex, the golden format.
func hexDump(frames [][]byte) string {
	var b strings.Builder
	for _, f := range frames {
		fmt.Fprintf(&b, "% x\n", f)
	}
	return b.String()
}

func TestChecksumCheckValues(t *testing.T) {
	check := []byte("123456789")
	if got := CRC16Modbus(check); got != 0x4B37 {
		t.Errorf("CRC16Modbus check = %#04x, want 0x4b37", got)
	}
	if got := CRC16ARC(check); got != 0xBB3D {
		t.Errorf("CRC16ARC check = %#04x, want 0xbb3d", got)
	}
	if got := Sum8([]byte{0xFF, 0x02}); got != 0x01 {
		t.Errorf("Sum8 = %#02x, want 0x01", got)
	}
	if got := Xor8([]byte{0xA5, 0x5A}); got != 0xFF {
		t.Errorf("Xor8 = %#02x, want 0xff", got)
	}
}

// TestModbusKnownFrames checks frames against values worked out by hand
// from the Modbus specification, independent of the golden files.
func TestModbusKnownFrames(t *testing.T) {
	tests := []struct {
		name string
		opts ModbusOpts
		addr int
		c    Content
		want string
	}{
		// The widely published example "write 3 to register 1 of slave 1".
		{"binary single", ModbusOpts{Start: 1, Encoding: "binary"}, 1, Content{Number: "3"}, "01 06 00 01 00 03 98 0b"},
		// Two characters fit one register: function 06, "A1" = 0x4131.
		{"ascii single", ModbusOpts{Chars: 2}, 1, Content{Number: "A1"}, "01 06 00 00 41 31 " + crcHex([]byte{1, 6, 0, 0, 0x41, 0x31})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames, err := mustNew(t, NewModbus, tt.opts).Encode(tt.addr, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("% x", frames[0]); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func crcHex(b []byte) string {
	c := CRC16Modbus(b)
	return fmt.Sprintf("%02x %02x", byte(c), byte(c>>8))
}

// mustNew builds a driver with newD from o, failing t on an error.
func mustNew[O, D any](t testing.TB, newD func(O) (D, error), o O) D {
	t.Helper()
	d, err := newD(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goldenCases is the one table of canonical frames: it drives the golden
// files, the decode round trips and the fuzz seeds.
func goldenCases(t testing.TB) []struct {
	name string
	d    Driver
	addr int
	c    Content
} {
	modbus := mustNew(t, NewModbus, ModbusOpts{})
	modbus6 := mustNew(t, NewModbus, ModbusOpts{Start: 0x0010, Chars: 6})
	onbon := mustNew(t, NewOnbon, OnbonOpts{Width: 64, Height: 16})
	onbonHall := mustNew(t, NewOnbon, OnbonOpts{Width: 192, Height: 32, Area: 1, Template: "{lines}", WantReply: true})
	alpha := mustNew(t, NewAlpha, AlphaOpts{})
	tmpl := mustNew(t, NewTemplate, TemplateOpts{Header: "01", Body: "{number:-4}{counter:2}", Trailer: "07"})
	tmplSum := mustNew(t, NewTemplate, TemplateOpts{Header: "AA 55", AddrFormat: "ascii2", Checksum: "sum8", ChecksumFrom: 2, Body: "{number}", Trailer: "0D"})
	tmplCRC := mustNew(t, NewTemplate, TemplateOpts{AddrFormat: "byte", Charset: "gbk", Checksum: "crc16modbus", Body: "{number}号到{counter}号窗口"})
	tmplXor := mustNew(t, NewTemplate, TemplateOpts{Header: "02", AddrFormat: "ascii3", Checksum: "xor8", ChecksumFrom: 1, Body: "{lines}", LineSep: "|", Trailer: "03"})
	hall := Content{Number: "A023", Counter: "5", Lines: []string{"A023 -> 5", "B101 -> 2", "A022 -> 1"}}
	call := Content{Number: "A023", Counter: "5"}
	return []struct {
		name string
		d    Driver
		addr int
		c    Content
	}{
		{"modbus_a023", modbus, 1, call},
		{"modbus_blank", modbus, 247, Content{}},
		{"modbus_6chars", modbus6, 17, Content{Number: "VIP007"}},
		{"onbon_a023", onbon, 1, call},
		{"onbon_gbk", onbon, 2, Content{Text: "请A023号到5号窗口", Number: "", Counter: ""}},
		{"onbon_hall", onbonHall, 0x5A, hall},
		{"onbon_blank", onbon, 1, Content{}},
		{"alpha_a023", alpha, 0, call},
		{"alpha_addr_1f", alpha, 0x1F, hall},
		{"alpha_blank", alpha, 0, Content{}},
		{"template_01_07", tmpl, 3, call},
		{"template_sum8", tmplSum, 12, call},
		{"template_crc_gbk", tmplCRC, 4, call},
		{"template_xor_hall", tmplXor, 101, hall},
	}
}

func TestGoldenFrames(t *testing.T) {
	for _, tt := range goldenCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			frames, err := tt.d.Encode(tt.addr, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if in, ok := tt.d.(Initializer); ok {
				init, err := in.Init(tt.addr)
				if err != nil {
					t.Fatal(err)
				}
				frames = append(init, frames...)
			}
			golden.Assert(t, filepath.Join("testdata", "golden", tt.name+".hex"), []byte(hexDump(frames)))
		})
	}
}

// TestOnbonRoundTrip decodes every Onbon golden frame back: stuffing,
// CRC-16/ARC and the data length are consistent, and the text is GBK.
func TestOnbonRoundTrip(t *testing.T) {
	d := mustNew(t, NewOnbon, OnbonOpts{Width: 64, Height: 16, Template: "{text}"})
	frames, err := d.Encode(0xA55A, Content{Text: "请A023号到5号窗口"})
	if err != nil {
		t.Fatal(err)
	}
	f := frames[0]
	if !bytes.HasPrefix(f, bytes.Repeat([]byte{0xA5}, 8)) || f[len(f)-1] != 0x5A {
		t.Fatalf("frame % x: want 8×A5 … 5A", f)
	}
	if bytes.Contains(f[8:len(f)-1], []byte{0xA5}) || bytes.Contains(f[8:len(f)-1], []byte{0x5A}) {
		t.Fatalf("frame % x: A5 or 5A not stuffed", f)
	}
	pkt, n, err := DecodeOnbonFrame(f)
	if err != nil || n != len(f) {
		t.Fatalf("decode: n=%d err=%v", n, err)
	}
	if pkt[0] != 0x5A || pkt[1] != 0xA5 {
		t.Errorf("dst address % x, want 5a a5", pkt[:2])
	}
	gbk, _ := encodeText("gbk", "请A023号到5号窗口")
	if !bytes.HasSuffix(pkt, gbk) {
		t.Errorf("packet % x does not end with GBK text % x", pkt, gbk)
	}
	if pkt[14] != 0xA3 || pkt[15] != 0x06 {
		t.Errorf("command % x, want a3 06", pkt[14:16])
	}
	// Corrupt one byte: the CRC must catch it.
	bad := append([]byte(nil), f...)
	bad[20] ^= 0x01
	if _, _, err := DecodeOnbonFrame(bad); !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrReply) {
		t.Errorf("corrupted frame: err=%v, want checksum error", err)
	}
}

func TestAlphaChecksum(t *testing.T) {
	frames, err := mustNew(t, NewAlpha, AlphaOpts{}).Encode(0, Content{Number: "A1"})
	if err != nil {
		t.Fatal(err)
	}
	// STX 'G' '1' 'A' '1' ETX = 02+47+31+41+31+03 = 0xEF.
	want := "\x00\x00\x00\x00\x00\x01Z00\x02G1A1\x0300EF\x04"
	if got := string(frames[0]); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		d    Driver
		addr int
		c    Content
		want error
	}{
		{"modbus addr 0", mustNew(t, NewModbus, ModbusOpts{}), 0, Content{Number: "1"}, ErrAddress},
		{"modbus addr 248", mustNew(t, NewModbus, ModbusOpts{}), 248, Content{Number: "1"}, ErrAddress},
		{"modbus too long", mustNew(t, NewModbus, ModbusOpts{}), 1, Content{Number: "A0234"}, ErrTooLong},
		{"modbus non-ascii", mustNew(t, NewModbus, ModbusOpts{}), 1, Content{Number: "号"}, ErrCharset},
		{"modbus binary overflow", mustNew(t, NewModbus, ModbusOpts{Encoding: "binary"}), 1, Content{Number: "A99999"}, ErrTooLong},
		{"onbon broadcast", mustNew(t, NewOnbon, OnbonOpts{Width: 8, Height: 8}), 0xFFFF, Content{}, ErrAddress},
		{"onbon not gbk", mustNew(t, NewOnbon, OnbonOpts{Width: 8, Height: 8}), 1, Content{Number: "😀"}, ErrCharset},
		{"alpha addr", mustNew(t, NewAlpha, AlphaOpts{}), 256, Content{}, ErrAddress},
		{"alpha too long", mustNew(t, NewAlpha, AlphaOpts{StringSize: 3}), 1, Content{Number: "A023"}, ErrTooLong},
		{"alpha control", mustNew(t, NewAlpha, AlphaOpts{}), 1, Content{Text: "a\x03b", Number: "x"}, nil},
		{"template ascii2", mustNew(t, NewTemplate, TemplateOpts{AddrFormat: "ascii2"}), 100, Content{}, ErrAddress},
		{"template byte", mustNew(t, NewTemplate, TemplateOpts{}), -1, Content{}, ErrAddress},
		{"template charset", mustNew(t, NewTemplate, TemplateOpts{}), 1, Content{Number: "号"}, ErrCharset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.d.Encode(tt.addr, tt.c)
			if tt.want == nil {
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestCheck pins each driver's refusals: every refused option named by its
// configuration key, and New* refusing exactly what Check refuses.
func TestCheck(t *testing.T) {
	tests := []struct {
		o    DriverOpts
		want string // "" means accepted
	}{
		{DriverOpts{Kind: "modbus"}, ""},
		{DriverOpts{Kind: "modbus", Modbus: ModbusOpts{Start: 0xFFFE, Chars: 4}}, ""},
		{DriverOpts{Kind: "modbus", Modbus: ModbusOpts{Start: 0xFFFF, Encoding: "binary"}}, ""},
		{DriverOpts{Kind: "modbus", Modbus: ModbusOpts{Chars: 300}}, "led: modbus: chars: must be 1..246 (0: 4), got 300"},
		{DriverOpts{Kind: "modbus", Modbus: ModbusOpts{Start: 0xFFFF, Chars: 4}},
			"led: modbus: start: 2 registers from 65535 run past the last register, 65535 (start at most 65534)"},
		{DriverOpts{Kind: "modbus", Modbus: ModbusOpts{Start: -1, Encoding: "bcd"}},
			`led: modbus: start: must be 0..65535, got -1; encoding: must be ascii, binary, got "bcd"`},
		{DriverOpts{Kind: "onbon"}, "led: onbon: width: width and height of the area are required (pixels)"},
		{DriverOpts{Kind: "onbon", Onbon: OnbonOpts{Width: 8, Height: 8, Preamble: 17, Area: 256, Charset: "latin1"}},
			`led: onbon: area: must be 0..255, got 256; preamble: must be 1..16 (0: 8), got 17; charset: must be ascii, gbk, got "latin1"`},
		{DriverOpts{Kind: "alpha", Alpha: AlphaOpts{TypeCode: "ZZ", StringSize: 126}},
			`led: alpha: type_code: must be one character, got "ZZ"; string_size: must be 1..125 (0: 32), got 126`},
		{DriverOpts{Kind: "alpha", Alpha: AlphaOpts{TextLabel: '1'}}, `led: alpha: string_label: text and string labels are both '1'`},
		{DriverOpts{Kind: "alpha", Alpha: AlphaOpts{StringLabel: '?'}},
			`led: alpha: string_label: want a printable character other than '0' and '?', got '?'`},
		{DriverOpts{Kind: "template", Template: TemplateOpts{Header: "0x1G", Checksum: "md5", ChecksumFrom: -1}},
			`led: template: header: want hex bytes such as "01" or "0xA5 0xA5", got "0x1G"; checksum: must be none, sum8, xor8, crc16modbus, got "md5"; checksum_from: must not be negative, got -1`},
		{DriverOpts{Kind: "template", Template: TemplateOpts{Charset: "latin1", AddrFormat: "bcd"}},
			`led: template: addr_format: must be byte, ascii2, ascii3, hex2, none, got "bcd"; charset: must be ascii, gbk, got "latin1"`},
		{DriverOpts{}, "led: driver: kind: required: modbus, onbon, alpha or template"},
		{DriverOpts{Kind: "sony"}, `led: driver: kind: must be modbus, onbon, alpha or template, got "sony"`},
	}
	for _, tt := range tests {
		err := tt.o.Check()
		if got := fmt.Sprint(err); (err == nil) != (tt.want == "") || err != nil && got != tt.want {
			t.Errorf("Check(%+v)\n got %s\nwant %s", tt.o, got, tt.want)
		}
		var oe OptErrors
		if err != nil && !errors.As(err, &oe) {
			t.Errorf("Check(%+v) = %v: no OptErrors", tt.o, err)
		}
		if _, nerr := NewDriver(tt.o); fmt.Sprint(nerr) != fmt.Sprint(err) {
			t.Errorf("NewDriver(%+v) = %v, Check %v", tt.o, nerr, err)
		}
	}
}

func TestRender(t *testing.T) {
	c := Content{Number: "A023", Counter: "5", Text: "hi", Lines: []string{"x", "y"}}
	tests := []struct{ tmpl, want string }{
		{"{number}{counter}", "A0235"},
		{"{number:6}|{counter:-3}|", "  A023|5  |"},
		{"{number:2}", "A0"},
		{"{lines}", "x/y"},
		{"{line2}{line3}", "y"},
		{"{unknown}{number", "{unknown}{number"},
		{"{text}", "hi"},
	}
	for _, tt := range tests {
		if got := Render(tt.tmpl, c, "/"); got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
}

func TestParseHex(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		err  bool
	}{
		{"01", []byte{1}, false},
		{"0x07", []byte{7}, false},
		{"A5 a5,5A", []byte{0xA5, 0xA5, 0x5A}, false},
		{"0102", []byte{1, 2}, false},
		{"", nil, false},
		{"zz", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseHex(tt.in)
		if (err != nil) != tt.err || !bytes.Equal(got, tt.want) {
			t.Errorf("ParseHex(%q) = % x, %v; want % x, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestHall(t *testing.T) {
	h := NewHall(3)
	h.Call("A001", "1")
	h.Call("A002", "2")
	h.Call("B001", "3")
	h.Call("A003", "1")
	got := h.Call("A002", "4") // recalled at another counter: moves to top
	want := Content{Number: "A002", Counter: "4", Lines: []string{"A002 -> 4", "A003 -> 1", "B001 -> 3"}}
	if !got.Equal(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	got = h.Remove("A003")
	if len(got.Lines) != 2 || got.Lines[1] != "B001 -> 3" {
		t.Errorf("after remove: %+v", got)
	}
}

func TestNewDriver(t *testing.T) {
	tests := []struct {
		o    DriverOpts
		want string
	}{
		{DriverOpts{Kind: "modbus"}, "*led.Modbus"},
		{DriverOpts{Kind: "onbon", Onbon: OnbonOpts{Width: 8, Height: 8}}, "*led.Onbon"},
		{DriverOpts{Kind: "alpha"}, "*led.Alpha"},
		{DriverOpts{Kind: "template"}, "*led.Template"},
		{DriverOpts{Kind: "onbon"}, ""},
		{DriverOpts{Kind: "sony"}, ""},
	}
	for _, tt := range tests {
		d, err := NewDriver(tt.o)
		if got := fmt.Sprintf("%T", d); (tt.want == "") != (err != nil) || (err == nil && got != tt.want) {
			t.Errorf("NewDriver(%q) = %s, %v; want %s", tt.o.Kind, got, err, tt.want)
		}
	}
}

func TestReplyParserSelection(t *testing.T) {
	if replyParser(mustNew(t, NewModbus, ModbusOpts{})) == nil {
		t.Error("modbus: want a reply parser")
	}
	if replyParser(mustNew(t, NewOnbon, OnbonOpts{Width: 8, Height: 8})) != nil {
		t.Error("onbon without WantReply: want no reply parser")
	}
	if replyParser(mustNew(t, NewOnbon, OnbonOpts{Width: 8, Height: 8, WantReply: true})) == nil {
		t.Error("onbon with WantReply: want a reply parser")
	}
	if replyParser(mustNew(t, NewAlpha, AlphaOpts{})) != nil {
		t.Error("alpha: want no reply parser")
	}
}

func TestOnbonParseReply(t *testing.T) {
	d := mustNew(t, NewOnbon, OnbonOpts{Width: 8, Height: 8, WantReply: true})
	frames, err := d.Encode(3, Content{Number: "1"})
	if err != nil {
		t.Fatal(err)
	}
	req := frames[0]
	reply := func(dst, src uint16, data ...byte) []byte {
		o := d.opts
		o.SrcAddr = int(src)
		pkt := append(onbonHeader(dst, o, len(data)), data...)
		return OnbonFrame(1, pkt)
	}
	tests := []struct {
		name string
		buf  []byte
		done bool
		ok   bool
	}{
		{"ok", reply(0x8000, 3, 0xA0, 0x00, 0x00), true, true},
		{"partial", reply(0x8000, 3, 0xA0, 0x00, 0x00)[:10], false, true},
		{"status error", reply(0x8000, 3, 0xA0, 0x00, 0x05), true, false},
		{"other card", reply(0x8000, 4, 0xA0, 0x00, 0x00), true, false},
		{"not a return", reply(0x8000, 3, 0xA3, 0x06, 0x00), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, err := d.ParseReply(req, tt.buf)
			if done != tt.done || (err == nil) != tt.ok {
				t.Errorf("ParseReply = %v, %v; want done %v ok %v", done, err, tt.done, tt.ok)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	c := Content{Number: "A023", Counter: "5", Lines: []string{"A023 -> 5", "B101 -> 2"}}
	for _, tt := range goldenCases(b) {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tt.d.Encode(tt.addr, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestModeCheck pins the line mode refusals, keyed as in a config file.
func TestModeCheck(t *testing.T) {
	for _, tt := range []struct {
		m    Mode
		want string
	}{
		{Mode{}, ""},
		{Mode{Baud: 115200, DataBits: 7, Parity: "even", StopBits: 2}, ""},
		{Mode{Baud: -1, DataBits: 9, Parity: "n", StopBits: 3},
			`led: line mode: baud: must be 1..4000000 (0: 9600), got -1; data_bits: must be 5..8, got 9; ` +
				`parity: must be none, odd, even, mark or space, got "n"; stop_bits: must be 1 or 2, got 3`},
	} {
		if err := tt.m.Check(); fmt.Sprint(err) != tt.want && (err != nil || tt.want != "") {
			t.Errorf("Check(%+v)\n got %v\nwant %s", tt.m, err, tt.want)
		}
	}
}
