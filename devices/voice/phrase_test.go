package voice

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

func TestPhrasesGolden(t *testing.T) {
	calls := []Call{
		{Number: "A023", Counter: "5"},
		{Number: "A023", Counter: "5", Recall: true},
		{Number: "B100", Counter: "12"},
		{Number: "VIP007", Counter: "3"},
		{Number: "a105", Counter: "10"},
		{Number: "C1050", Counter: "20"},
		{Number: "D013", Counter: "1"},
		{Number: "E000", Counter: "2B"},
		{Number: "F9999", Counter: "110"},
		{Number: "G123456", Counter: "7"},
	}
	var b strings.Builder
	for _, lang := range []Language{English(), Chinese()} {
		for _, mode := range []NumberMode{Digits, Cardinal} {
			l := lang
			l.Number = mode
			for _, c := range calls {
				ph, err := l.Phrase(c)
				if err != nil {
					t.Fatalf("%s %s %+v: %v", l.Code, mode, c, err)
				}
				fmt.Fprintf(&b, "%s %-6s %-8s %-4s recall=%-5v | %s | %s | %s\n", l.Code, mode, c.Number, c.Counter,
					c.Recall, strings.Join(ph.Tokens, " "), ph.Text, ph.Speech)
			}
		}
	}
	golden.Assert(t, filepath.Join("testdata", "phrases.golden"), []byte(b.String()))
}

func TestPhraseTokens(t *testing.T) {
	tests := []struct {
		name string
		lang Language
		mode NumberMode
		call Call
		want []string
	}{
		{"en digits", English(), Digits, Call{Number: "A023", Counter: "5"},
			[]string{"number", "A", "0", "2", "3", "please_go_to_counter", "5"}},
		{"en number", English(), Cardinal, Call{Number: "A023", Counter: "5"},
			[]string{"number", "A", "20", "3", "please_go_to_counter", "5"}},
		{"zh digits", Chinese(), Digits, Call{Number: "A023", Counter: "5"},
			[]string{"qing", "A", "0", "2", "3", "hao", "dao", "5", "hao_chuangkou"}},
		{"zh number", Chinese(), Cardinal, Call{Number: "A023", Counter: "15"},
			[]string{"qing", "A", "2", "10", "3", "hao", "dao", "10", "5", "hao_chuangkou"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.lang
			l.Number = tt.mode
			ph, err := l.Phrase(tt.call)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ph.Tokens, tt.want) {
				t.Errorf("tokens = %q, want %q", ph.Tokens, tt.want)
			}
		})
	}
}

func TestCardinal(t *testing.T) {
	tests := []struct {
		n      int
		en, zh string
	}{
		{0, "0", "0"},
		{7, "7", "7"},
		{10, "10", "10"},
		{13, "13", "10 3"},
		{20, "20", "2 10"},
		{23, "20 3", "2 10 3"},
		{100, "1 hundred", "1 hundred"},
		{105, "1 hundred 5", "1 hundred 0 5"},
		{110, "1 hundred 10", "1 hundred 1 10"},
		{999, "9 hundred 90 9", "9 hundred 9 10 9"},
		{1000, "1 thousand", "1 thousand"},
		{1005, "1 thousand 5", "1 thousand 0 5"},
		{1050, "1 thousand 50", "1 thousand 0 5 10"},
		{2019, "2 thousand 19", "2 thousand 0 1 10 9"},
		{9999, "9 thousand 9 hundred 90 9", "9 thousand 9 hundred 9 10 9"},
	}
	for _, tt := range tests {
		if got := strings.Join(cardinalEnglish(tt.n), " "); got != tt.en {
			t.Errorf("cardinalEnglish(%d) = %q, want %q", tt.n, got, tt.en)
		}
		if got := strings.Join(cardinalChinese(tt.n), " "); got != tt.zh {
			t.Errorf("cardinalChinese(%d) = %q, want %q", tt.n, got, tt.zh)
		}
	}
}

func TestPhraseErrors(t *testing.T) {
	for _, c := range []Call{{Number: "", Counter: "5"}, {Number: "A1", Counter: "--"}, {Number: "号", Counter: "1"}} {
		if _, err := English().Phrase(c); err == nil {
			t.Errorf("Phrase(%+v): no error", c)
		}
	}
}

func TestLanguageValidate(t *testing.T) {
	for _, l := range DefaultLanguages() {
		if err := l.Validate(); err != nil {
			t.Errorf("default %s: %v", l.Code, err)
		}
	}
	bad := []struct {
		name   string
		mutate func(*Language)
		want   string
	}{
		{"no code", func(l *Language) { l.Code = "" }, "code: required"},
		{"numerals", func(l *Language) { l.Numerals = "fr" }, "numerals"},
		{"mode", func(l *Language) { l.Counter = "roman" }, "counter: mode"},
		{"placeholder", func(l *Language) { l.Call.Text = "Number {ticket}" }, "unknown placeholder {ticket}"},
		{"token word", func(l *Language) { l.Call.Tokens = "number {number} hello" }, `no word for token "hello"`},
		{"token path", func(l *Language) { l.Recall.Tokens = "../x" }, "bad token"},
		{"missing numeral", func(l *Language) { delete(l.Words, "hundred") }, `"hundred"`},
		{"no tokens", func(l *Language) { l.Call.Tokens = " " }, "call.tokens: required"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			l := English()
			tt.mutate(&l)
			err := l.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want error containing %q", err, tt.want)
			}
		})
	}
	if err := (Language{Code: "x"}).Validate(); err == nil || errors.Is(err, ErrBadWAV) {
		t.Errorf("empty language: %v", err)
	}
}
