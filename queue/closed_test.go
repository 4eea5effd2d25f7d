package queue

import (
	"errors"
	"testing"
	"time"
)

// TestClosedNotice: a ticket refused outside the hours says, in each of
// the site's languages, that the service is closed and when it opens.
func TestClosedNotice(t *testing.T) {
	sp := zone(t, "America/Sao_Paulo")
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	s := Site{ID: "b", Location: sp, Languages: []string{"pt", "en", "zh"}}
	sv := Service{Code: "P", Names: map[string]string{"pt": "Pessoa física", "en": "Personal"},
		Hours: []Hours{{Days: weekdays, Open: 10 * time.Hour, Close: 16 * time.Hour}}}
	never := Service{Code: "X", Hours: []Hours{{Days: []time.Weekday{}, Open: 25 * time.Hour, Close: 26 * time.Hour}}}
	tests := []struct {
		name string
		sv   *Service
		at   time.Time
		want string
	}{
		{"saturday", &sv, time.Date(2026, 12, 5, 12, 0, 0, 0, sp),
			"Pessoa física: fechado, abre seg 10:00 / Personal: closed, opens Mon 10:00 / Pessoa física：已关闭，周一 10:00 开放"},
		{"early", &sv, time.Date(2026, 12, 7, 8, 30, 0, 0, sp),
			"Pessoa física: fechado, abre 10:00 / Personal: closed, opens 10:00 / Pessoa física：已关闭，10:00 开放"},
		{"evening", &sv, time.Date(2026, 12, 7, 17, 33, 0, 0, sp),
			"Pessoa física: fechado, abre ter 10:00 / Personal: closed, opens Tue 10:00 / Pessoa física：已关闭，周二 10:00 开放"},
		{"never", &never, time.Date(2026, 12, 7, 17, 33, 0, 0, sp), "X: fechado / X: closed / X：已关闭"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := s.closedError(tt.sv, tt.at)
			if got := e.Notice(); got != tt.want {
				t.Errorf("Notice = %q\nwant     %q", got, tt.want)
			}
			if !errors.Is(e, ErrServiceClosed) || !IsRefusal(e) {
				t.Errorf("%v is not a refusal matching ErrServiceClosed", e)
			}
		})
	}
	if got, want := s.closedError(&sv, time.Date(2026, 12, 7, 17, 33, 0, 0, sp)).Error(),
		"queue: service closed now: P at Mon 17:33, opens Tue 10:00"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
}

func TestNextClose(t *testing.T) {
	sv := Service{Hours: []Hours{
		{Days: []time.Weekday{time.Monday}, Open: 8 * time.Hour, Close: 12 * time.Hour},
		{Days: []time.Weekday{time.Monday}, Open: 12 * time.Hour, Close: 17 * time.Hour}, // no break at noon
	}}
	mon := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if at, ok := sv.NextClose(mon.Add(9*time.Hour), time.UTC); !ok || !at.Equal(mon.Add(17*time.Hour)) {
		t.Errorf("NextClose at 09:00 = %v %v, want 17:00", at, ok)
	}
	if _, ok := sv.NextClose(mon.Add(18*time.Hour), time.UTC); ok {
		t.Error("NextClose of a closed service is set")
	}
	if _, ok := (&Service{}).NextClose(mon, time.UTC); ok {
		t.Error("NextClose of a service without hours is set")
	}
}
