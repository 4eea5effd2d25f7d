package queue

import "sort"

// Lang is the site's main language: the first of Languages, "en" when none
// is configured.
func (s *Site) Lang() string {
	if len(s.Languages) > 0 {
		return s.Languages[0]
	}
	return "en"
}

// PickName is the one rule by which every reader of a site (keypad, hall
// display, printed ticket, console) chooses a text among names, keyed by
// language code, so they all show the same name: the text in lang when it
// has one ("" means the site's main language), else in the first of the
// site's languages that has one, else in the alphabetically first language
// that has one, else fallback.
func (s *Site) PickName(names map[string]string, lang, fallback string) string {
	if lang == "" {
		lang = s.Lang()
	}
	if n := names[lang]; n != "" {
		return n
	}
	langs := s.Languages
	if len(langs) == 0 {
		langs = []string{"en"}
	}
	for _, l := range langs {
		if n := names[l]; n != "" {
			return n
		}
	}
	keys := make([]string, 0, len(names))
	for k, n := range names {
		if n != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return fallback
	}
	sort.Strings(keys)
	return names[keys[0]]
}

// Name is the site's name in lang (see PickName), its id when it has none.
func (s *Site) Name(lang string) string { return s.PickName(s.Names, lang, s.ID) }

// ServiceName is the name of service code in lang (see PickName), the code
// when it has none.
func (s *Site) ServiceName(code, lang string) string {
	for _, sv := range s.Services {
		if sv.Code == code {
			return s.PickName(sv.Names, lang, code)
		}
	}
	return code
}

// CounterName is the name of counter id in lang (see PickName), fallback
// when it has none: each reader words a bare number its own way ("Counter
// 5" on a keypad's LCD, "5" for the hall display, which adds its word).
func (s *Site) CounterName(id, lang, fallback string) string {
	for _, c := range s.Counters {
		if c.ID == id {
			return s.PickName(c.Names, lang, fallback)
		}
	}
	return fallback
}
