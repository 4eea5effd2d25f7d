package escpos

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDumpCommands(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"init", []byte{esc, '@'}, "ESC @          initialize\n"},
		{"size", []byte{gs, '!', 0x11}, "GS ! 0x11      size 2x2\n"},
		{"cut", []byte{gs, 'V', 66, 3}, "GS V 66 3      feed and partial cut\n"},
		{"status", []byte{dle, eot, 4}, "DLE EOT 4      status request\n"},
		{"kanji", []byte{fs, '&', 0xBA, 0xC5, fs, '.'},
			"FS &           kanji mode on (GB18030)\nTEXT           \"号\"\nFS .           kanji mode off\n"},
		{"high bytes outside kanji", []byte{0xBA, 0xC5}, "TEXT           \"\\xba\\xc5\"\n"},
		{"qr store", []byte{gs, '(', 'k', 5, 0, 49, 80, 48, 'h', 'i'},
			"GS ( k 180     QR store 2 bytes \"hi\"\n"},
		{"raster", []byte{gs, 'v', '0', 0, 1, 0, 2, 0, 0xFF, 0x00},
			"GS v 0         raster 8x2 dots, mode 0\n"},
		{"truncated raster", []byte{gs, 'v', '0', 0, 1, 0, 2, 0, 0xFF},
			"GS v 0         raster 8x2 dots, mode 0, truncated: 1 of 2 data bytes\n"},
		{"truncated esc", []byte{esc}, "0x1B\n"},
		{"unknown esc", []byte{esc, 0x99}, "ESC 0x99\n"},
		{"unknown control", []byte{0x07}, "0x07\n"},
		{"too long", []byte{gs, 'v', '0', 0, 0xFF, 0xFF, 0xFF, 0xFF},
			"ERROR          escpos: scan: GS v 0 of 65535×65535 bytes: escpos: command too long\nDATA           1D 76 30 00 FF FF FF FF\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Dump(tt.in); got != tt.want {
				t.Errorf("Dump(% X) =\n%q\nwant\n%q", tt.in, got, tt.want)
			}
		})
	}
}

// TestScanSplitEverywhere feeds each golden ticket through bufio.Scanner in
// pieces of every size: the tokens must not depend on how the stream is cut,
// except that text runs may be split.
func TestScanSplitEverywhere(t *testing.T) {
	for _, tc := range goldenCases() {
		b, err := Render(tc.ticket, tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		want := commandsNoText(t, bytes.NewReader(b))
		for _, chunk := range []int{1, 2, 3, 7, 64, 1000} {
			got := commandsNoText(t, &chunkReader{b: b, n: chunk})
			if len(got) != len(want) {
				t.Fatalf("%s chunk %d: %d commands, want %d", tc.name, chunk, len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s chunk %d: command %d = % X, want % X", tc.name, chunk, i, got[i], want[i])
				}
			}
		}
	}
}

func commandsNoText(t *testing.T, r io.Reader) [][]byte {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxCommandLen+16)
	sc.Split(ScanCommands)
	var out [][]byte
	var text []byte
	for sc.Scan() {
		tok := sc.Bytes()
		if tok[0] >= 0x20 {
			text = append(text, tok...)
			continue
		}
		if text != nil {
			out = append(out, text)
			text = nil
		}
		out = append(out, bytes.Clone(tok))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if text != nil {
		out = append(out, text)
	}
	return out
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

func TestScanTooLong(t *testing.T) {
	_, _, err := ScanCommands([]byte{gs, '8', 'L', 0xFF, 0xFF, 0xFF, 0x7F}, false)
	if !errors.Is(err, ErrCommandTooLong) {
		t.Errorf("err = %v, want ErrCommandTooLong", err)
	}
}

func FuzzDump(f *testing.F) {
	for _, tc := range goldenCases() {
		b, err := Render(tc.ticket, tc.layout)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{gs, '(', 'k', 0xFF, 0xFF, 49, 80})
	f.Add([]byte{esc, 'D', 1, 2, 3})
	f.Add([]byte{gs, 'k', 2, '1', '2'})
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Dump(b)
		if len(b) > 0 && out == "" {
			t.Errorf("Dump(% X) is empty", b)
		}
		// The scanner always makes progress and never overreads.
		rest := b
		for len(rest) > 0 {
			adv, tok, err := ScanCommands(rest, true)
			if err != nil {
				if !errors.Is(err, ErrCommandTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			if adv <= 0 || adv > len(rest) || len(tok) != adv {
				t.Fatalf("ScanCommands(% X) advance %d token %d", rest, adv, len(tok))
			}
			rest = rest[adv:]
		}
	})
}

// TestGoldenDumpsAreText checks the committed dumps are readable text.
func TestGoldenDumpsAreText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(files) < 3 {
		t.Fatalf("found %d golden dumps, want 3", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(string(b), "\x1b\x1d\x1c") {
			t.Errorf("%s holds raw control bytes", f)
		}
	}
}
