package queue

import "testing"

func TestPickName(t *testing.T) {
	both := map[string]string{"en": "First visit", "zh": "初诊"}
	tests := []struct {
		name  string
		langs []string
		names map[string]string
		lang  string
		want  string
	}{
		{"main language first", []string{"zh", "en"}, both, "", "初诊"},
		{"English-first site", []string{"en", "zh"}, both, "", "First visit"},
		{"no languages means English", nil, both, "", "First visit"},
		{"reader's language wins", []string{"zh", "en"}, both, "en", "First visit"},
		{"reader's language missing: the site's order", []string{"zh", "en"}, map[string]string{"en": "General"}, "ja", "General"},
		{"main missing: the next language", []string{"zh", "en"}, map[string]string{"en": "General"}, "", "General"},
		{"none of the site's: alphabetical", []string{"zh"}, map[string]string{"fr": "Général", "de": "Allgemein"}, "", "Allgemein"},
		{"empty texts skipped", []string{"zh", "en"}, map[string]string{"zh": "", "en": "General"}, "", "General"},
		{"no names: fallback", []string{"zh"}, nil, "", "fallback"},
		{"only empty names: fallback", []string{"zh"}, map[string]string{"zh": ""}, "", "fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Site{ID: "hq", Languages: tt.langs}
			if got := s.PickName(tt.names, tt.lang, "fallback"); got != tt.want {
				t.Errorf("PickName = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSiteNames(t *testing.T) {
	s := &Site{ID: "hq", Languages: []string{"zh", "en"}, Names: map[string]string{"en": "City Hospital", "zh": "市人民医院"},
		Services: []Service{{Code: "A", Names: map[string]string{"en": "First visit", "zh": "初诊"}}, {Code: "B"}},
		Counters: []Counter{{ID: "5", Names: map[string]string{"zh": "五号窗口"}}, {ID: "6"}}}
	for _, c := range []struct{ got, want string }{
		{s.Lang(), "zh"},
		{(&Site{}).Lang(), "en"},
		{s.Name(""), "市人民医院"},
		{s.Name("en"), "City Hospital"},
		{(&Site{ID: "hq"}).Name(""), "hq"},
		{s.ServiceName("A", ""), "初诊"},
		{s.ServiceName("B", ""), "B"},
		{s.ServiceName("X", ""), "X"},
		{s.CounterName("5", "en", "Counter 5"), "五号窗口"},
		{s.CounterName("6", "", "Counter 6"), "Counter 6"},
		{s.CounterName("9", "", "9"), "9"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
