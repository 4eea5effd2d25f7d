package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"slices"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// pageWords are the pages' own words, by language then key, from
// static/words.json.
func pageWords() (map[string]map[string]string, error) {
	b, err := files.ReadFile("static/words.json")
	if err != nil {
		return nil, fmt.Errorf("web: read page words: %w", err)
	}
	var w map[string]map[string]string
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("web: page words: %w", err)
	}
	return w, nil
}

// pageLangs are the languages the pages have their own words in, sorted.
func pageLangs() []string {
	w, _ := pageWords() // embedded and checked by TestPageWords
	return slices.Sorted(maps.Keys(w))
}

// wordsScript is static/i18n.js with the words in front, as the pages
// load it.
func wordsScript(i18n []byte) []byte {
	b, _ := files.ReadFile("static/words.json")
	out := append([]byte("var NowServingWords = "), bytes.TrimSpace(b)...)
	return append(append(out, ";\n"...), i18n...)
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
