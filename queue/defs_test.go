package queue

import (
	"testing"
	"time"
)

// zone loads the time zone name, failing the test without it.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestServiceDay(t *testing.T) {
	ny, sh := zone(t, "America/New_York"), zone(t, "Asia/Shanghai")
	tests := []struct {
		name     string
		at       time.Time
		loc      *time.Location
		rollover time.Duration
		want     string
	}{
		{"before rollover belongs to yesterday", time.Date(2026, 3, 10, 3, 59, 59, 0, sh), sh, 4 * time.Hour, "2026-03-09"},
		{"at rollover is today", time.Date(2026, 3, 10, 4, 0, 0, 0, sh), sh, 4 * time.Hour, "2026-03-10"},
		{"midnight rollover", time.Date(2026, 3, 10, 0, 0, 0, 0, sh), sh, 0, "2026-03-10"},
		{"utc instant in local zone", time.Date(2026, 3, 9, 20, 30, 0, 0, time.UTC), sh, 4 * time.Hour, "2026-03-10"},
		// 2026-03-08 02:00 EST -> 03:00 EDT: the wall clock jumps over the
		// rollover-1h window; 03:30 EDT is still before a 04:00 rollover.
		{"spring forward before rollover", time.Date(2026, 3, 8, 3, 30, 0, 0, ny), ny, 4 * time.Hour, "2026-03-07"},
		{"spring forward after rollover", time.Date(2026, 3, 8, 4, 0, 0, 0, ny), ny, 4 * time.Hour, "2026-03-08"},
		// 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens twice, both
		// before a 02:00 rollover.
		{"fall back first 01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), ny, 2 * time.Hour, "2026-10-31"},
		{"fall back second 01:30", time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC), ny, 2 * time.Hour, "2026-10-31"},
		{"fall back after rollover", time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC), ny, 2 * time.Hour, "2026-11-01"},
		{"month boundary", time.Date(2026, 4, 1, 1, 0, 0, 0, sh), sh, 4 * time.Hour, "2026-03-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServiceDay(tt.at, tt.loc, tt.rollover); got != tt.want {
				t.Errorf("ServiceDay(%v) = %s, want %s", tt.at, got, tt.want)
			}
		})
	}
}

func TestOpenAt(t *testing.T) {
	sv := Service{Hours: []Hours{{Days: []time.Weekday{time.Monday, time.Tuesday}, Open: 7*time.Hour + 30*time.Minute, Close: 17 * time.Hour}}}
	mon := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) // a Monday
	tests := []struct {
		at   time.Time
		want bool
	}{
		{mon.Add(7*time.Hour + 29*time.Minute), false},
		{mon.Add(7*time.Hour + 30*time.Minute), true},
		{mon.Add(16*time.Hour + 59*time.Minute), true},
		{mon.Add(17 * time.Hour), false},
		{mon.Add(2*24*time.Hour + 9*time.Hour), false}, // Wednesday
	}
	for _, tt := range tests {
		if got := sv.OpenAt(tt.at, time.UTC); got != tt.want {
			t.Errorf("OpenAt(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
	if !(&Service{}).OpenAt(mon, time.UTC) {
		t.Error("a service without hours must always be open")
	}
}

func TestNumberText(t *testing.T) {
	tests := []struct {
		prefix string
		width  int
		seq    int
		want   string
	}{
		{"A", 3, 23, "A023"}, {"VIP", 2, 5, "VIP05"}, {"", 4, 12345, "12345"}, {"B", 1, 7, "B7"},
	}
	for _, tt := range tests {
		sv := Service{Prefix: tt.prefix, Width: tt.width}
		if got := sv.NumberText(tt.seq); got != tt.want {
			t.Errorf("NumberText(%q,%d,%d) = %s, want %s", tt.prefix, tt.width, tt.seq, got, tt.want)
		}
	}
}

func TestSiteValidate(t *testing.T) {
	good := func() Site {
		return Site{ID: "h", Location: time.UTC, Services: []Service{{Code: "A", Width: 3}},
			Counters: []Counter{{ID: "1", Services: []CounterService{{Service: "A"}}}}}
	}
	s := good()
	if err := s.Validate(); err != nil {
		t.Fatalf("good site: %v", err)
	}
	bad := map[string]func(*Site){
		"no zone":         func(s *Site) { s.Location = nil },
		"bad id":          func(s *Site) { s.ID = "a b" },
		"rollover":        func(s *Site) { s.Rollover = 25 * time.Hour },
		"width":           func(s *Site) { s.Services[0].Width = 0 },
		"dup service":     func(s *Site) { s.Services = append(s.Services, s.Services[0]) },
		"unknown service": func(s *Site) { s.Counters[0].Services[0].Service = "Z" },
		"no services":     func(s *Site) { s.Counters[0].Services = nil },
		"ratio":           func(s *Site) { s.Services[0].Ratio = &Ratio{} },
	}
	for name, f := range bad {
		s := good()
		f(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
	}
}
