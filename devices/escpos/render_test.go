package escpos

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// cst is UTC+8 without tzdata, so the tests run on minimal systems.
var cst = time.FixedZone("CST", 8*3600)

func ticketEN() Ticket {
	return Ticket{
		Site:          "Central Hospital",
		Service:       "Internal Medicine",
		Number:        "A023",
		PeopleAhead:   5,
		EstimatedWait: 17*time.Minute + 30*time.Second,
		Issued:        time.Date(2026, 11, 29, 9, 5, 0, 0, cst),
		QR:            "https://q.example.org/t/2026-11-29/A023",
		Footer:        "Please keep this ticket. Numbers are called in order of arrival.",
		Lang:          "en",
	}
}

func ticketZH() Ticket {
	return Ticket{
		Site:          "市第一人民医院",
		Service:       "内科门诊 Internal Medicine",
		Number:        "A023",
		PeopleAhead:   12,
		EstimatedWait: 40 * time.Minute,
		Issued:        time.Date(2026, 11, 29, 9, 5, 0, 0, cst),
		QR:            "https://q.example.org/t/2026-11-29/A023",
		Footer:        "请留意叫号，过号请到服务台重新取号。谢谢您的耐心等候！",
		Lang:          "zh",
	}
}

type goldenCase struct {
	name   string
	ticket Ticket
	layout Layout
}

func goldenCases() []goldenCase {
	l58 := DefaultLayout()
	l58.PaperMM = 58
	l58.QRSize = 5
	l58.NumberSize = 3
	lzh := DefaultLayout()
	lzh.Lang = "zh"
	lraster := DefaultLayout()
	lraster.QR = QRRaster
	appt := ticketEN()
	appt.Number, appt.PeopleAhead, appt.Appointment = "A024", 0, time.Date(2026, 11, 29, 9, 30, 0, 0, cst)
	apptZH := ticketZH()
	apptZH.Number, apptZH.PeopleAhead, apptZH.Appointment = "A024", 0, time.Date(2026, 11, 29, 9, 30, 0, 0, cst)
	return []goldenCase{
		{"ticket_appointment_80_en", appt, DefaultLayout()},
		{"ticket_appointment_80_zh", apptZH, lzh},
		{"ticket_58_native_en", ticketEN(), l58},
		{"ticket_80_native_zh", ticketZH(), lzh},
		{"ticket_80_raster_en", ticketEN(), lraster},
	}
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.ticket, tc.layout)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			golden.Assert(t, filepath.Join("testdata", tc.name+".txt"), []byte(Dump(got)))
			golden.Assert(t, filepath.Join("testdata", tc.name+".bin"), got)
		})
	}
}

func TestRenderIsPure(t *testing.T) {
	for _, tc := range goldenCases() {
		a, err := Render(tc.ticket, tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Render(tc.ticket, tc.layout)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders differ", tc.name)
		}
	}
}

func TestRenderStructure(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Render(tc.ticket, tc.layout)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte{esc, '@'}) {
				t.Errorf("does not start with ESC @: % X", b[:4])
			}
			cut := []byte{gs, 'V', 66, byte(tc.layout.FeedLines)}
			if !bytes.HasSuffix(b, cut) {
				t.Errorf("does not end with GS V 66 n: % X", b[len(b)-4:])
			}
			m := byte(tc.layout.NumberSize - 1)
			big := append([]byte{gs, '!', m<<4 | m}, tc.ticket.Number...)
			if !bytes.Contains(b, big) {
				t.Errorf("number %q not printed at GS ! 0x%02X", tc.ticket.Number, m<<4|m)
			}
			// Kanji mode is always left again.
			if bytes.Count(b, []byte{fs, '&'}) != bytes.Count(b, []byte{fs, '.'}) {
				t.Errorf("unbalanced FS & / FS .")
			}
		})
	}
}

func TestRenderIssueTimeInTicketZone(t *testing.T) {
	tk := ticketEN()
	tk.QR = ""
	// 01:05 UTC is 09:05 in UTC+8: the ticket's own location is used.
	tk.Issued = time.Date(2026, 11, 29, 1, 5, 0, 0, time.UTC).In(cst)
	b, err := Render(tk, DefaultLayout())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("Issued: 2026-11-29 09:05")) {
		t.Errorf("issue time not in ticket zone:\n%s", Dump(b))
	}
}

func TestRenderNoControlInjection(t *testing.T) {
	tk := ticketEN()
	tk.Site = "Evil\x1b@\x1dV\x42\x00Site"
	tk.QR = ""
	b, err := Render(tk, DefaultLayout())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("Evil @ V")) {
		t.Errorf("control characters not replaced:\n%s", Dump(b))
	}
	if n := bytes.Count(b, []byte{esc, '@'}); n != 1 {
		t.Errorf("ESC @ appears %d times, want 1", n)
	}
}

func TestRenderErrors(t *testing.T) {
	long := strings.Repeat("x", maxQRData+1)
	tests := []struct {
		name   string
		ticket Ticket
		edit   func(*Layout)
	}{
		{"paper 57", ticketEN(), func(l *Layout) { l.PaperMM = 57 }},
		{"number size 0", ticketEN(), func(l *Layout) { l.NumberSize = 0 }},
		{"number size 9", ticketEN(), func(l *Layout) { l.NumberSize = 9 }},
		{"qr size 17", ticketEN(), func(l *Layout) { l.QRSize = 17 }},
		{"qr mode", ticketEN(), func(l *Layout) { l.QR = 7 }},
		{"feed", ticketEN(), func(l *Layout) { l.FeedLines = 256 }},
		{"bad title", ticketEN(), func(l *Layout) { l.Title = "{{.Site" }},
		{"unknown field", ticketEN(), func(l *Layout) { l.Footer = "{{.Nope}}" }},
		{"bad label", Ticket{Lang: "fr"}, func(l *Layout) { l.Labels = map[string]Labels{"fr": {Wait: "{{"}} }},
		{"native qr too long", Ticket{QR: long}, func(*Layout) {}},
		{"raster qr too long", Ticket{QR: long}, func(l *Layout) { l.QR = QRRaster }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := DefaultLayout()
			tt.edit(&l)
			_, err := Render(tt.ticket, l)
			if !errors.Is(err, ErrBadLayout) {
				t.Errorf("Render error = %v, want ErrBadLayout", err)
			}
		})
	}
}

func TestParseQRMode(t *testing.T) {
	for _, m := range []QRMode{QRNative, QRRaster, QRNone} {
		got, err := ParseQRMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseQRMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseQRMode("laser"); !errors.Is(err, ErrBadLayout) {
		t.Errorf("ParseQRMode(laser) error = %v", err)
	}
}

func TestLabelsOverride(t *testing.T) {
	l := DefaultLayout()
	l.Labels = map[string]Labels{"en": {PeopleAhead: "Before you: {{.PeopleAhead}}", Wait: "", Issued: "{{.IssuedText}}"}}
	tk := ticketEN()
	tk.QR = ""
	b, err := Render(tk, l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("Before you: 5\n")) || bytes.Contains(b, []byte("Estimated")) {
		t.Errorf("labels not overridden:\n%s", Dump(b))
	}
}

func TestRenderReprint(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		tk := ticketEN()
		tk.Lang = lang
		tk.QR = ""
		first, err := Render(tk, DefaultLayout())
		if err != nil {
			t.Fatal(err)
		}
		tk.Reprint = true
		again, err := Render(tk, DefaultLayout())
		if err != nil {
			t.Fatal(err)
		}
		w := &writer{}
		w.text(DefaultLabels(lang).Reprint)
		mark := append([]byte{esc, 'E', 1}, w.buf...)
		if bytes.Contains(first, mark) || !bytes.Contains(again, mark) {
			t.Errorf("%s: reprint mark in first print %v, in reprint %v", lang, bytes.Contains(first, mark), bytes.Contains(again, mark))
		}
	}
}

func BenchmarkRender(b *testing.B) {
	for _, tc := range goldenCases() {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Render(tc.ticket, tc.layout); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzRender(f *testing.F) {
	f.Add("Central Hospital", "内科门诊", "A023", "https://q.example.org/t/A023", "请留意叫号", 58, false)
	f.Add("\x1b@", "\xff\xfe", "", "", "a\nb", 80, true)
	f.Fuzz(func(t *testing.T, site, service, number, qr, footer string, paper int, raster bool) {
		l := DefaultLayout()
		l.PaperMM = 58 + 22*(paper&1)
		if raster {
			l.QR = QRRaster
		}
		tk := Ticket{Site: site, Service: service, Number: number, QR: qr, Footer: footer}
		b, err := Render(tk, l)
		if err != nil {
			if !errors.Is(err, ErrBadLayout) {
				t.Fatalf("Render error %v is not ErrBadLayout", err)
			}
			return
		}
		if n := bytes.Count(b, []byte{esc, '@'}); n < 1 {
			t.Fatalf("no ESC @")
		}
		// Every token must be a known command or text; text never holds
		// control bytes, so user text cannot inject commands.
		for _, c := range commands(t, b) {
			if c[0] == esc && c[1] == '@' && &c[0] != &b[0] {
				t.Fatalf("second ESC @ injected")
			}
		}
		if !bytes.HasSuffix(b, []byte{gs, 'V', 66, byte(l.FeedLines)}) {
			t.Fatalf("no cut at the end")
		}
	})
}

func TestLayoutValidate(t *testing.T) {
	if err := DefaultLayout().Validate(); err != nil {
		t.Errorf("DefaultLayout().Validate() = %v", err)
	}
	l := DefaultLayout()
	l.Labels = map[string]Labels{"fr": {Wait: "{{"}}
	if err := l.Validate(); !errors.Is(err, ErrBadLayout) || !strings.Contains(err.Error(), "wait (fr)") {
		t.Errorf("Validate with a bad fr label = %v", err)
	}
	l = DefaultLayout()
	l.PaperMM = 76
	if err := l.Validate(); !errors.Is(err, ErrBadLayout) {
		t.Errorf("Validate with 76 mm paper = %v", err)
	}
}

// TestRenderLongWait prints an estimate over LongWait as "more than 2
// hours", not as hundreds of minutes.
func TestRenderLongWait(t *testing.T) {
	for _, tc := range []struct {
		tk         func() Ticket
		wait       time.Duration
		want, lose string
	}{
		{ticketEN, 2 * time.Hour, "Estimated wait: 120 min", "more than"},
		{ticketEN, 860 * time.Minute, "Estimated wait: more than 2 hours", "860"},
		{ticketZH, 5 * time.Hour, "预计等待超过", "300"},
	} {
		tk := tc.tk()
		tk.EstimatedWait = tc.wait
		l := DefaultLayout()
		l.Lang = tk.Lang
		b, err := Render(tk, l)
		if err != nil {
			t.Fatal(err)
		}
		text := Dump(b)
		if !strings.Contains(text, tc.want) || strings.Contains(text, tc.lose) {
			t.Errorf("wait %v: printed %q, want %q and not %q", tc.wait, text, tc.want, tc.lose)
		}
	}
}
