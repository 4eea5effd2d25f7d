package escpos

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Control bytes and command prefixes used by the renderer.
const (
	esc = 0x1B
	gs  = 0x1D
	fs  = 0x1C
	dle = 0x10
	eot = 0x04
	lf  = 0x0A
)

// Ticket is everything printed on one ticket. It is a plain value so that this
// package does not depend on the queue domain.
type Ticket struct {
	Site          string        // site (branch, hall) name, first line
	Service       string        // service (queue) display name
	Number        string        // ticket number text, e.g. "A023"
	PeopleAhead   int           // waiting tickets before this one
	EstimatedWait time.Duration // estimated wait; rounded up to minutes
	Issued        time.Time     // issue time, printed in Issued.Location()
	QR            string        // QR payload, e.g. a lookup URL; empty: no QR
	Footer        string        // free footer text from the site config
	Lang          string        // "en" or "zh"; empty: Layout.Lang
	Reprint       bool          // a reprint of a ticket issued before: says so under the number
	// Appointment is the slot start of a checked-in booking, printed in
	// its Location (HH:MM) under the number; zero: none.
	Appointment time.Time
}

// QRMode selects how the QR code is printed.
type QRMode int

// QR modes.
const (
	// QRNative prints the QR code with the printer's own GS ( k command.
	QRNative QRMode = iota
	// QRRaster draws the QR code and sends it as a GS v 0 raster image, for
	// printers without GS ( k.
	QRRaster
	// QRNone prints no QR code.
	QRNone
)

// qrModes are the modes' names, for String and ParseQRMode.
var qrModes = [...]string{QRNative: "native", QRRaster: "raster", QRNone: "none"}

// String returns "native", "raster" or "none".
func (m QRMode) String() string {
	if m >= 0 && int(m) < len(qrModes) {
		return qrModes[m]
	}
	return fmt.Sprintf("QRMode(%d)", int(m))
}

// ParseQRMode is the inverse of QRMode.String, for configuration files.
func ParseQRMode(s string) (QRMode, error) {
	if i := slices.Index(qrModes[:], s); i >= 0 {
		return QRMode(i), nil
	}
	return 0, fmt.Errorf("escpos: parse qr mode %q: %w", s, ErrBadLayout)
}

// Labels are the text/template lines printed under the number; an empty
// template prints no line. The template data has the Ticket fields plus
// WaitMinutes (int, rounded up), WaitLong (the estimate is over LongWait:
// a number of minutes would promise more than it knows), IssuedText
// (Issued formatted with Layout.TimeFormat) and AppointmentText
// (Appointment as HH:MM).
type Labels struct {
	PeopleAhead string
	Wait        string
	Issued      string
	Reprint     string // printed in bold under the number of a reprint
	Appointment string // printed in bold under the number of a checked-in booking
}

// DefaultLabels returns the built-in labels for lang ("en" or "zh"); any other
// language gets the English labels.
func DefaultLabels(lang string) Labels {
	if lang == "zh" {
		return Labels{
			PeopleAhead: "前面还有 {{.PeopleAhead}} 人",
			Wait:        "{{if .WaitLong}}预计等待超过 2 小时{{else}}预计等待 {{.WaitMinutes}} 分钟{{end}}",
			Issued:      "取号时间 {{.IssuedText}}",
			Reprint:     "*** 补打 ***",
			Appointment: "预约时间 {{.AppointmentText}}",
		}
	}
	return Labels{
		PeopleAhead: "People ahead: {{.PeopleAhead}}",
		Wait:        "{{if .WaitLong}}Estimated wait: more than 2 hours{{else}}Estimated wait: {{.WaitMinutes}} min{{end}}",
		Issued:      "Issued: {{.IssuedText}}",
		Reprint:     "*** REPRINT ***",
		Appointment: "Appointment: {{.AppointmentText}}",
	}
}

// Layout is the per-site printing layout, usually built from the config.
type Layout struct {
	PaperMM    int    // 58 (32 columns, 384 dots) or 80 (48 columns, 576 dots)
	Lang       string // language when Ticket.Lang is empty
	QR         QRMode // how to print the QR code
	QRSize     int    // QR module size in dots, 1..16
	NumberSize int    // magnification of the ticket number, 1..8 (GS !)
	Title      string // text/template for the header (double size, bold)
	Footer     string // text/template for the footer
	TimeFormat string // Go time layout for IssuedText; empty prints no issue time
	FeedLines  int    // extra feed before the cut, 0..255 (GS V 66 n)
	// Labels overrides the built-in labels per language; missing
	// languages use DefaultLabels.
	Labels map[string]Labels
}

// DefaultLayout returns an 80 mm English layout with a native QR code.
func DefaultLayout() Layout {
	return Layout{
		PaperMM:    80,
		Lang:       "en",
		QR:         QRNative,
		QRSize:     6,
		NumberSize: 4,
		Title:      "{{.Site}}",
		Footer:     "{{.Footer}}",
		TimeFormat: "2006-01-02 15:04",
		FeedLines:  3,
	}
}

// papers holds, for each paper width in mm, its Font A line width in
// characters and its printable width in dots (203 dpi).
var papers = map[int]struct{ columns, dots int }{
	58: {32, 384},
	80: {48, 576},
}

// Columns returns the Font A line width in characters for the paper width
// (0 for a width not supported).
func (l Layout) Columns() int { return papers[l.PaperMM].columns }

// Dots returns the printable width in dots (203 dpi) for the paper width
// (0 for a width not supported).
func (l Layout) Dots() int { return papers[l.PaperMM].dots }

// Validate reports the first problem that would make Render fail for every
// ticket.
func (l Layout) Validate() error {
	if err := l.validateFields(); err != nil {
		return err
	}
	if _, err := l.templates(l.Lang); err != nil {
		return err
	}
	for lang := range l.Labels {
		if _, err := l.templates(lang); err != nil {
			return err
		}
	}
	return nil
}

func (l Layout) validateFields() error {
	if l.Columns() == 0 {
		return fmt.Errorf("escpos: layout: paper_mm %d not 58 or 80: %w", l.PaperMM, ErrBadLayout)
	}
	if l.QR < QRNative || l.QR > QRNone {
		return fmt.Errorf("escpos: layout: qr mode %d: %w", int(l.QR), ErrBadLayout)
	}
	if l.QR != QRNone && (l.QRSize < 1 || l.QRSize > 16) {
		return fmt.Errorf("escpos: layout: qr size %d not in 1..16: %w", l.QRSize, ErrBadLayout)
	}
	if l.NumberSize < 1 || l.NumberSize > 8 {
		return fmt.Errorf("escpos: layout: number size %d not in 1..8: %w", l.NumberSize, ErrBadLayout)
	}
	if l.FeedLines < 0 || l.FeedLines > 255 {
		return fmt.Errorf("escpos: layout: feed lines %d not in 0..255: %w", l.FeedLines, ErrBadLayout)
	}
	return nil
}

// templateData is what the layout templates see.
type templateData struct {
	Ticket
	WaitMinutes     int
	WaitLong        bool
	IssuedText      string
	AppointmentText string
}

type layoutTemplates struct {
	title, footer, ahead, wait, issued, reprint, appointment *template.Template
}

func (l Layout) templates(lang string) (layoutTemplates, error) {
	labels, ok := l.Labels[lang]
	if !ok {
		labels = DefaultLabels(lang)
	}
	var t layoutTemplates
	for _, p := range []struct {
		name string
		src  string
		dst  **template.Template
	}{
		{"title", l.Title, &t.title},
		{"footer", l.Footer, &t.footer},
		{"people_ahead", labels.PeopleAhead, &t.ahead},
		{"wait", labels.Wait, &t.wait},
		{"issued", labels.Issued, &t.issued},
		{"reprint", labels.Reprint, &t.reprint},
		{"appointment", labels.Appointment, &t.appointment},
	} {
		tp, err := template.New(p.name).Option("missingkey=error").Parse(p.src)
		if err != nil {
			return t, fmt.Errorf("escpos: layout: template %s (%s): %v: %w", p.name, lang, err, ErrBadLayout)
		}
		*p.dst = tp
	}
	return t, nil
}

func execute(tp *template.Template, data templateData) (string, error) {
	var b strings.Builder
	if err := tp.Execute(&b, data); err != nil {
		return "", fmt.Errorf("escpos: render: template %s: %v: %w", tp.Name(), err, ErrBadLayout)
	}
	return b.String(), nil
}

// Render returns the ESC/POS bytes of one ticket. It is pure: the same ticket
// and layout always give the same bytes.
func Render(t Ticket, l Layout) ([]byte, error) {
	if err := l.validateFields(); err != nil {
		return nil, err
	}
	lang := t.Lang
	if lang == "" {
		lang = l.Lang
	}
	tpl, err := l.templates(lang)
	if err != nil {
		return nil, err
	}
	data := templateData{Ticket: t, WaitMinutes: waitMinutes(t.EstimatedWait), WaitLong: t.EstimatedWait > LongWait}
	if !t.Issued.IsZero() {
		data.IssuedText = t.Issued.Format(l.TimeFormat)
	}
	if !t.Appointment.IsZero() {
		data.AppointmentText = t.Appointment.Format("15:04")
	}
	r := &render{t: t, l: l, tpl: tpl, data: data, cols: l.Columns(), w: &writer{}}
	r.w.cmd(esc, '@')    // initialize
	r.w.cmd(esc, 'a', 1) // centre
	for _, part := range []func() error{r.head, r.number, r.lines, r.qr, r.footer} {
		if err := part(); err != nil {
			return nil, err
		}
	}
	r.w.cmd(gs, 'V', 66, byte(l.FeedLines)) // feed and partial cut
	return r.w.buf, nil
}

// render is one ticket being written, part by part, top to bottom.
type render struct {
	t    Ticket
	l    Layout
	tpl  layoutTemplates
	data templateData
	cols int
	w    *writer
}

// head is the title (bold, double size) and the service name.
func (r *render) head() error {
	title, err := execute(r.tpl.title, r.data)
	if err != nil {
		return err
	}
	if strings.TrimSpace(title) != "" {
		r.w.cmd(esc, 'E', 1)
		r.w.size(2)
		r.w.paragraph(title, r.cols/2)
		r.w.size(1)
		r.w.cmd(esc, 'E', 0)
	}
	if r.t.Service != "" {
		r.w.paragraph(r.t.Service, r.cols)
	}
	r.w.cmd(lf)
	return nil
}

// number is the big number, and the reprint mark under it.
func (r *render) number() error {
	if r.t.Number != "" {
		r.w.size(r.l.NumberSize)
		r.w.paragraph(r.t.Number, r.cols/r.l.NumberSize)
		r.w.size(1)
	}
	for _, m := range []struct {
		on bool
		tp *template.Template
	}{{r.t.Reprint, r.tpl.reprint}, {!r.t.Appointment.IsZero(), r.tpl.appointment}} {
		if !m.on {
			continue
		}
		s, err := execute(m.tp, r.data)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		r.w.cmd(esc, 'E', 1)
		r.w.paragraph(s, r.cols)
		r.w.cmd(esc, 'E', 0)
	}
	if r.t.Number != "" || r.t.Reprint || !r.t.Appointment.IsZero() {
		r.w.cmd(lf)
	}
	return nil
}

// lines are people ahead, the estimated wait and the time of issue.
func (r *render) lines() error {
	tps := []*template.Template{r.tpl.ahead, r.tpl.wait}
	if r.data.IssuedText != "" {
		tps = append(tps, r.tpl.issued)
	}
	for _, tp := range tps {
		s, err := execute(tp, r.data)
		if err != nil {
			return err
		}
		r.w.paragraph(s, r.cols)
	}
	return nil
}

// qr is the ticket's QR code, native or as a raster image.
func (r *render) qr() error {
	if r.t.QR == "" || r.l.QR == QRNone {
		return nil
	}
	r.w.cmd(lf)
	switch r.l.QR {
	case QRNative:
		return r.w.qrNative(r.t.QR, r.l.QRSize)
	case QRRaster:
		return r.w.qrRaster(r.t.QR, r.l.QRSize, r.l.Dots())
	}
	return nil
}

// footer is the site's footer text.
func (r *render) footer() error {
	footer, err := execute(r.tpl.footer, r.data)
	if err != nil {
		return err
	}
	if strings.TrimSpace(footer) != "" {
		r.w.cmd(lf)
		r.w.paragraph(footer, r.cols)
	}
	return nil
}

// LongWait is the longest estimate printed in minutes; beyond it the
// ticket says "more than 2 hours".
const LongWait = 2 * time.Hour

// waitMinutes rounds d up to whole minutes; negative durations are 0.
func waitMinutes(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Minute - 1) / time.Minute)
}

// writer accumulates ESC/POS bytes and tracks Kanji mode.
type writer struct {
	buf   []byte
	kanji bool
}

func (w *writer) cmd(b ...byte) { w.buf = append(w.buf, b...) }

// size sets width and height magnification n (1..8) with GS !.
func (w *writer) size(n int) {
	m := byte(n-1) & 7
	w.cmd(gs, '!', m<<4|m)
}

// paragraph wraps s (which may hold several lines) to cols columns and
// prints each line followed by LF.
func (w *writer) paragraph(s string, cols int) {
	for _, para := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		for _, line := range wrap(para, cols) {
			w.text(line)
			w.cmd(lf)
		}
	}
}

// text appends s: ASCII in the plain character mode, any other rune in GB18030
// inside FS & ... FS . (Kanji mode). Control characters become spaces, so a
// site name cannot inject commands. Kanji mode is left at the end.
func (w *writer) text(s string) {
	s = sanitize(s)
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] < utf8.RuneSelf {
			i++
		}
		if i > 0 {
			if w.kanji {
				w.cmd(fs, '.')
				w.kanji = false
			}
			w.buf = append(w.buf, s[:i]...)
			s = s[i:]
		}
		j := 0
		for j < len(s) && s[j] >= utf8.RuneSelf {
			j++
		}
		if j > 0 {
			if !w.kanji {
				w.cmd(fs, '&')
				w.kanji = true
			}
			w.buf = append(w.buf, gb18030(s[:j])...)
			s = s[j:]
		}
	}
	if w.kanji {
		w.cmd(fs, '.')
		w.kanji = false
	}
}

// gb18030 encodes valid UTF-8 text. GB18030 maps every Unicode scalar value,
// so the encoder cannot fail on sanitized input; "?" is the safe fallback.
func gb18030(s string) []byte {
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(s))
	if err != nil {
		return []byte(strings.Repeat("?", utf8.RuneCountInString(s)))
	}
	return b
}

// sanitize replaces invalid UTF-8 with U+FFFD and control characters with
// spaces.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// runeWidth is the printed width in Font A columns: ASCII is one column,
// everything printed in Kanji mode is two.
func runeWidth(r rune) int {
	if r < utf8.RuneSelf {
		return 1
	}
	return 2
}

func width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// wrap breaks s into lines at most cols columns wide: ASCII words wrap at
// spaces, CJK text may break between any two characters, and a word longer
// than a line is cut. It returns no lines for blank text.
func wrap(s string, cols int) []string {
	s = sanitize(s)
	if cols < 2 {
		cols = 2
	}
	var lines []string
	var line strings.Builder
	w := 0
	flush := func() {
		lines = append(lines, strings.TrimRight(line.String(), " "))
		line.Reset()
		w = 0
	}
	for _, tok := range tokens(s) {
		if tok == " " {
			if w > 0 && w < cols && !strings.HasSuffix(line.String(), " ") {
				line.WriteByte(' ')
				w++
			}
			continue
		}
		tw := width(tok)
		if w > 0 && w+tw > cols {
			flush()
		}
		for tw > cols {
			head, rest := cut(tok, cols)
			lines = append(lines, head)
			tok, tw = rest, width(rest)
		}
		line.WriteString(tok)
		w += tw
	}
	if w > 0 {
		flush()
	}
	return lines
}

// tokens splits s into ASCII words, single spaces and single non-ASCII runes.
func tokens(s string) []string {
	var out []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == ' ':
			out = append(out, " ")
		case r >= utf8.RuneSelf:
			out = append(out, s[:n])
		default:
			n = strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r >= utf8.RuneSelf })
			if n < 0 {
				n = len(s)
			}
			out = append(out, s[:n])
		}
		s = s[n:]
	}
	return out
}

// cut returns the longest prefix of s at most cols wide (at least one rune)
// and the rest.
func cut(s string, cols int) (string, string) {
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > cols && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}
