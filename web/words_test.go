package web

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/words"
)

// TestCatalogs: every catalog of static/words has English, Portuguese and
// Chinese at least (the display's has more), and each language has every English word and no
// other, so no page falls back to English where a word was forgotten (the
// dashboard had no Portuguese "reports").
func TestCatalogs(t *testing.T) {
	names, err := fs.Glob(files, "static/words/*.json")
	if err != nil || len(names) < 8 {
		t.Fatalf("catalogs %v (%v)", names, err)
	}
	for _, name := range names {
		c, err := words.Read(files, name)
		if err != nil {
			t.Error(err)
			continue
		}
		if langs := c.Langs(); len(c["en"]) < 5 || len(c["pt"]) == 0 || len(c["zh"]) == 0 {
			t.Errorf("%s: languages %v, %d English words", name, langs, len(c["en"]))
		}
		if err := c.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPageCatalogs: every word a page names whole (in its HTML's data-w or
// data-word, in its script's t("…") or nowServingT(lang, "…")) is an
// English word of a catalog the page loads, and the catalog its script
// reads is one it loads (the page as served, partials and all).
func TestPageCatalogs(t *testing.T) {
	loads := regexp.MustCompile(`<script src="/static/words/(\w+)\.js">`)
	reads := regexp.MustCompile(`NowServingStaff\.catalog\("(\w+)"\)`)
	named := regexp.MustCompile(`data-w="(\w+)"|\bt\("(\w+)"\s*[,)]|data-word="(\w+)"|nowServingT\([^,()]+,\s*"(\w+)"`)
	for _, page := range []string{"admin", "counter", "dashboard", "kiosk", "display", "ticket"} {
		html := pageFiles["static/"+page+".html"] // as served: its scripts are named by the shared partial
		js, _ := fs.ReadFile(files, "static/"+page+".js")
		var loaded []string
		for _, m := range loads.FindAllSubmatch(html, -1) {
			loaded = append(loaded, string(m[1]))
		}
		if strings.Contains(string(html), `src="/static/i18n.js"`) {
			loaded = append(loaded, "display")
		}
		for _, m := range reads.FindAllSubmatch(js, -1) {
			if !slices.Contains(loaded, string(m[1])) {
				t.Errorf("%s.js reads catalog %s, which %s.html does not load (it loads %v)", page, m[1], page, loaded)
			}
		}
		n := 0
		for _, m := range named.FindAllSubmatch(append(html, js...), -1) {
			key := string(slices.Concat(m[1:]...))
			n++
			if !slices.ContainsFunc(loaded, func(c string) bool {
				_, ok := words.Must(files, "static/words/"+c+".json")["en"][key]
				return ok
			}) {
				t.Errorf("%s: no catalog of %v has the word %q", page, loaded, key)
			}
		}
		if n < 3 {
			t.Errorf("%s: %d words named, want more", page, n)
		}
	}
}

// TestCatalogScript: /static/words/NAME.js hands the catalog NAME to
// staff.js; a name with no catalog is not found.
func TestCatalogScript(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/static/words/counter.js", "-", "")
	b := wantStatus(t, r, 200)
	if r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		!strings.HasPrefix(b, `NowServingStaff.add("counter", {`) || !strings.Contains(b, `"next": "叫下一位"`) ||
		!strings.HasSuffix(b, "});\n") {
		t.Errorf("counter words: %s %.120s…%s", r.Header.Get("Content-Type"), b, b[max(0, len(b)-20):])
	}
	for _, path := range []string{"/static/words/none.js", "/static/words/counter.json", "/static/words/staff"} {
		if r := e.do("GET", path, "-", ""); r.StatusCode != 404 {
			t.Errorf("%s: status %d, want 404", path, r.StatusCode)
		}
	}
}
