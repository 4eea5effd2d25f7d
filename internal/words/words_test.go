package words

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestRead(t *testing.T) {
	fsys := fstest.MapFS{
		"good.json": {Data: []byte(`{"en": {"a": "A", "b": "B {n}"}, "pt": {"a": "Á", "b": "B {n}"}}`)},
		"bad.json":  {Data: []byte(`{"en": ["a"]}`)},
	}
	c, err := Read(fsys, "good.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Words("pt")["a"]; got != "Á" {
		t.Errorf("pt a = %q, want Á", got)
	}
	if got := c.Words("fr")["a"]; got != "A" {
		t.Errorf("fr a = %q, want the English A", got)
	}
	if got := strings.Join(c.Langs(), ","); got != "en,pt" {
		t.Errorf("langs %s", got)
	}
	for _, name := range []string{"bad.json", "none.json"} {
		if _, err := Read(fsys, name); err == nil || !strings.HasPrefix(err.Error(), "words: ") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		c    Catalog
		want []string
	}{
		{"complete", Catalog{"en": {"a": "A"}, "zh": {"a": "甲"}}, nil},
		{"missing", Catalog{"en": {"a": "A", "b": "B"}, "zh": {"a": "甲"}}, []string{`zh has no word "b" (en has)`}},
		{"extra", Catalog{"en": {"a": "A"}, "pt": {"a": "Á", "x": "X"}}, []string{`en has no word "x" (pt has)`}},
		{"empty", Catalog{"en": {"a": "A"}, "pt": {"a": ""}}, []string{`pt has no word "a" (en has)`}},
		{"no English", Catalog{"pt": {"day": "dia"}, "zh": {}}, []string{`zh has no word "day" (pt has)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.c.Check()
			if (err == nil) != (c.want == nil) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want %q", err, w)
				}
			}
		})
	}
}

func TestBase(t *testing.T) {
	for in, want := range map[string]string{"pt-BR": "pt", "ZH": "zh", "": "", "en": "en"} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
}
