package escpos

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name string
		in   string
		cols int
		want []string
	}{
		{"blank", "   ", 32, nil},
		{"fits", "Internal Medicine", 32, []string{"Internal Medicine"}},
		{"exact 32", strings.Repeat("a", 32), 32, []string{strings.Repeat("a", 32)}},
		{"words 58mm", "Please keep this ticket. Numbers are called in order of arrival.", 32,
			[]string{"Please keep this ticket. Numbers", "are called in order of arrival."}},
		{"words 80mm", "Please keep this ticket. Numbers are called in order of arrival.", 48,
			[]string{"Please keep this ticket. Numbers are called in", "order of arrival."}},
		{"long word cut", strings.Repeat("x", 40), 32, []string{strings.Repeat("x", 32), strings.Repeat("x", 8)}},
		{"cjk 58mm 16 chars", strings.Repeat("号", 17), 32, []string{strings.Repeat("号", 16), "号"}},
		{"cjk 80mm 24 chars", strings.Repeat("号", 25), 48, []string{strings.Repeat("号", 24), "号"}},
		{"cjk odd width", "a" + strings.Repeat("号", 16), 32, []string{"a" + strings.Repeat("号", 15), "号"}},
		{"mixed", "内科门诊 Internal Medicine", 18, []string{"内科门诊 Internal", "Medicine"}},
		{"mixed narrow", "内科门诊 Internal Medicine", 16, []string{"内科门诊", "Internal", "Medicine"}},
		{"double size", "Central Hospital", 16, []string{"Central Hospital"}},
		{"double size wraps", "Central City Hospital", 16, []string{"Central City", "Hospital"}},
		{"spaces collapse", "a    b", 32, []string{"a b"}},
		{"narrow cjk", "号号", 1, []string{"号", "号"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrap(tt.in, tt.cols)
			if !slices.Equal(got, tt.want) {
				t.Errorf("wrap(%q, %d) = %q, want %q", tt.in, tt.cols, got, tt.want)
			}
			for _, l := range got {
				if w := width(l); w > max(tt.cols, 2) {
					t.Errorf("line %q is %d columns, more than %d", l, w, tt.cols)
				}
			}
		})
	}
}

func TestTextGB18030RoundTrip(t *testing.T) {
	tests := []string{
		"市第一人民医院",
		"请 A023 号到 5 号窗口",
		"€ 𠀀 é", // outside GB2312: GB18030 four-byte codes
		"ASCII only",
	}
	for _, in := range tests {
		w := &writer{}
		w.text(in)
		// Strip FS & / FS . and decode the Kanji runs; ASCII stays single-byte.
		var out strings.Builder
		kanji := false
		b := w.buf
		for len(b) > 0 {
			adv, tok, err := ScanCommands(b, true)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case bytes.Equal(tok, []byte{fs, '&'}):
				kanji = true
			case bytes.Equal(tok, []byte{fs, '.'}):
				kanji = false
			case kanji:
				s, err := simplifiedchinese.GB18030.NewDecoder().Bytes(tok)
				if err != nil {
					t.Fatal(err)
				}
				out.Write(s)
			default:
				for _, c := range tok {
					if c >= 0x80 {
						t.Errorf("%q: byte 0x%02X outside Kanji mode", in, c)
					}
				}
				out.Write(tok)
			}
			b = b[adv:]
		}
		if kanji {
			t.Errorf("%q: Kanji mode left on", in)
		}
		if out.String() != in {
			t.Errorf("round trip %q -> % X -> %q", in, w.buf, out.String())
		}
	}
}

func TestTextKnownGB18030Bytes(t *testing.T) {
	// 号 is BA C5 in GB2312/GB18030; € is A2 E3 in GB18030-2005.
	w := &writer{}
	w.text("A号€")
	want := []byte{'A', fs, '&', 0xBA, 0xC5, 0xA2, 0xE3, fs, '.'}
	if !bytes.Equal(w.buf, want) {
		t.Errorf("got % X, want % X", w.buf, want)
	}
}
