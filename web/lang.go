package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"slices"
	"strings"

	"github.com/nowserving/nowserving/internal/words"
	"github.com/nowserving/nowserving/queue"
)

// The words of the pages are catalogs in static/words/ (language → key →
// text, checked by TestCatalogs): display.json for the hall display and
// the ticket page (i18n.js), one for each staff page and staff.json for
// what they share (staff.js, served by catalogScript), and those of the
// pages the daemon writes itself.
var (
	pageCatalog   = words.Must(files, "static/words/display.json")
	loginCatalog  = words.Must(files, "static/words/login.json")
	reportCatalog = words.Must(files, "static/words/report.json")
)

// pageLangs are the languages the pages have their own words in, sorted.
func pageLangs() []string { return pageCatalog.Langs() }

// wordsScript is static/i18n.js with the display words in front, as the
// pages load it.
func wordsScript(i18n []byte) []byte {
	b, _ := files.ReadFile("static/words/display.json") // as pageCatalog read it
	out := append([]byte("var NowServingWords = "), bytes.TrimSpace(b)...)
	return append(append(out, ";\n"...), i18n...)
}

// catalogScript answers /static/words/NAME.js with the catalog
// static/words/NAME.json handed to staff.js (NowServingStaff.add). A staff
// page loads it as a script before its own, so its words are there when it
// starts: no fetch of its own, no moment in English before they come.
func (s *Server) catalogScript(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("file"), ".js")
	b, err := files.ReadFile("static/words/" + name + ".json")
	if !ok || !fs.ValidPath(name) || err != nil {
		http.NotFound(w, r)
		return
	}
	q, _ := json.Marshal(name)
	writeStatic(w, name+".js", fmt.Appendf(nil, "NowServingStaff.add(%s, %s);\n", q, bytes.TrimSpace(b)))
}

// warnLanguages logs each site language the pages have no words in: they
// show English words there (names still come from the configuration).
func (s *Server) warnLanguages() {
	have := pageLangs()
	for _, site := range s.o.Engine.Sites() {
		for _, l := range site.Languages {
			if base, _, _ := strings.Cut(l, "-"); !slices.Contains(have, base) {
				s.log.Warn("web: the display and ticket pages have no words in this site language; they show English ones",
					"site", site.ID, "lang", l, "page_langs", strings.Join(have, ","))
			}
		}
	}
}

// pageFor sets a page's language to the site's main one and lists the
// site's languages in data-langs, so the page speaks the site's language
// before its stream answers, and when it never does ("No ticket Z999
// today." on a ticket page).
func pageFor(b []byte, site *queue.Site) []byte {
	langs := siteLangs(site)
	tag := fmt.Sprintf(`<html lang="%s" data-langs="%s">`, html.EscapeString(langs[0]), html.EscapeString(strings.Join(langs, " ")))
	return bytes.Replace(b, []byte(`<html lang="en">`), []byte(tag), 1)
}
