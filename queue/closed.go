package queue

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ClosedError refuses a ticket outside its service's opening hours. It
// says, in each of the site's languages, that the service is closed and
// when it opens (Notice), so a kiosk can show it as it is. It matches
// ErrServiceClosed.
type ClosedError struct {
	Service string
	// Names is the service's name in each of Langs (PickName).
	Names map[string]string
	// Langs are the site's languages, the main one first.
	Langs []string
	// Now is when the ticket was refused, in the site's zone.
	Now time.Time
	// Opens is when the service opens next, in the site's zone; zero when
	// no opening hours match a weekday.
	Opens time.Time
}

func (e *ClosedError) Error() string {
	s := fmt.Sprintf("%s: %s at %s", ErrServiceClosed, e.Service, e.Now.Format("Mon 15:04"))
	if !e.Opens.IsZero() {
		s += ", opens " + e.Opens.Format("Mon 15:04")
	}
	return s
}

// Is makes ClosedError match ErrServiceClosed.
func (e *ClosedError) Is(target error) bool { return target == ErrServiceClosed }

func (e *ClosedError) refuses() {}

// closedWords is how each language says that a service is closed and when
// it opens; a language not here speaks English.
var closedWords = map[string]struct {
	closed, opens string // opens: name, then when
	days          [7]string
}{
	"en": {"%s: closed", "%s: closed, opens %s", [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}},
	"zh": {"%s：已关闭", "%s：已关闭，%s 开放", [7]string{"周日", "周一", "周二", "周三", "周四", "周五", "周六"}},
	"pt": {"%s: fechado", "%s: fechado, abre %s", [7]string{"dom", "seg", "ter", "qua", "qui", "sex", "sáb"}},
}

// Notice is the refusal as a person reads it, one clause per language of
// the site joined by " / ", e.g. "Pessoa física: fechado, abre seg 10:00 /
// Personal: closed, opens Mon 10:00". When names the day only when it is
// not today, and the date too when it is a week or more away.
func (e *ClosedError) Notice() string {
	var out []string
	for _, l := range e.Langs {
		w, ok := closedWords[strings.ToLower(strings.SplitN(l, "-", 2)[0])]
		if !ok {
			w = closedWords["en"]
		}
		name := e.Names[l]
		if name == "" {
			name = e.Service
		}
		line := fmt.Sprintf(w.closed, name)
		if !e.Opens.IsZero() {
			line = fmt.Sprintf(w.opens, name, e.when(w.days))
		}
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return strings.Join(out, " / ")
}

// when is Opens as "10:00", "Mon 10:00" or "Mon 2026-12-14 10:00".
func (e *ClosedError) when(days [7]string) string {
	at := e.Opens.In(e.Now.Location())
	switch {
	case at.Format(time.DateOnly) == e.Now.Format(time.DateOnly):
		return at.Format("15:04")
	case at.Sub(e.Now) < 6*24*time.Hour:
		return days[at.Weekday()] + " " + at.Format("15:04")
	}
	return days[at.Weekday()] + " " + at.Format("2006-01-02 15:04")
}

// closedError is the refusal of a ticket for sv at now, closed by its
// hours.
func (s *Site) closedError(sv *Service, now time.Time) *ClosedError {
	e := &ClosedError{Service: sv.Code, Langs: s.Languages, Now: now.In(s.Location), Names: map[string]string{}}
	if len(e.Langs) == 0 {
		e.Langs = []string{"en"}
	}
	for _, l := range e.Langs {
		e.Names[l] = s.PickName(sv.Names, l, sv.Code)
	}
	if at, ok := sv.NextOpen(now, s.Location); ok {
		e.Opens = at.In(s.Location)
	}
	return e
}

// NextClose is when the service, open at t, stops taking tickets (the
// first closing time after t at which it is closed), within the coming
// week; false when it is closed at t or has no hours (always open).
func (sv *Service) NextClose(t time.Time, loc *time.Location) (time.Time, bool) {
	if len(sv.Hours) == 0 || !sv.OpenAt(t, loc) {
		return time.Time{}, false
	}
	l := t.In(loc)
	y, m, d := l.Date()
	var closes []time.Duration
	for _, h := range sv.Hours {
		closes = append(closes, h.Close)
	}
	slices.Sort(closes)
	for day := 0; day <= 7; day++ {
		for _, c := range closes {
			at := time.Date(y, m, d+day, 0, 0, 0, 0, loc).Add(c)
			if at.After(t) && !sv.OpenAt(at, loc) {
				return at, true
			}
		}
	}
	return time.Time{}, false
}
