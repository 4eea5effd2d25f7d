package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// BookOpts is a booking made over the daemon's HTTP API, as the hospital's
// system would make it.
type BookOpts struct {
	URL      string // the daemon's HTTP address; "": http:// + listen.http of the configuration
	Token    string // API bearer token; "": the first of the configuration
	Site     string // "": the first site of the configuration
	Resource string
	Date     string // YYYY-MM-DD; "": today
	At       string // HH:MM of the slot; "": the first free one
	Patient  string
	Hold     bool   // a HELD booking, to confirm
	IdemKey  string // the same key twice gives the same booking; "": a fresh one
}

// apiSlot and apiBooking are what the API answers (web.Slot and
// web.Appointment).
type apiSlot struct {
	ID    int64     `json:"id"`
	Start time.Time `json:"start"`
	Free  int       `json:"free"`
}

// apiSlots is the answer of GET .../slots (web.Slots): a day with no slot
// listed says why, past or not open yet.
type apiSlots struct {
	Slots   []apiSlot
	Total   int
	Past    bool
	Opening map[string]time.Time
}

// why tells, as the API does, why the day has no slot to book: past, not
// open yet (and when it opens), or how many slots it has.
func (l apiSlots) why(resource string) string {
	if l.Past {
		return "the day is past"
	}
	if at, ok := l.Opening[resource]; ok {
		return "its slots open at " + at.Format("2006-01-02 15:04 -07:00")
	}
	return fmt.Sprintf("%d slots that day", max(l.Total, len(l.Slots)))
}

type apiBooking struct {
	ID       int64     `json:"id"`
	Code     string    `json:"code"`
	Status   string    `json:"status"`
	Resource string    `json:"resource"`
	Start    time.Time `json:"start"`
}

// Book books a slot over HTTP and writes the booking, with the code to
// check in with, to out.
func (e *Env) Book(ctx context.Context, o BookOpts, out io.Writer) error {
	if err := e.bookDefaults(&o); err != nil {
		return err
	}
	var list apiSlots
	q := fmt.Sprintf("/api/v1/sites/%s/slots?resource=%s&date=%s", o.Site, o.Resource, o.Date)
	if err := e.api(ctx, o, "GET", q, nil, "", &list); err != nil {
		return err
	}
	var slot *apiSlot
	for i, s := range list.Slots {
		if (o.At == "" && s.Free > 0 && s.Start.After(time.Now())) || (o.At != "" && s.Start.Format("15:04") == o.At) {
			slot = &list.Slots[i]
			break
		}
	}
	if slot == nil {
		return fmt.Errorf("sim: book: no slot of %s on %s %s (%s)", o.Resource, o.Date, cmp.Or(o.At, "free"), list.why(o.Resource))
	}
	var b apiBooking
	body := map[string]any{"slot": slot.ID, "patient": o.Patient, "hold": o.Hold}
	key := o.IdemKey
	if key == "" {
		// A fresh key, as a hospital's system sends one per booking (a
		// site may require it: appointments.require_idempotency_key).
		key = fmt.Sprintf("sim-book-%d", time.Now().UnixNano())
	}
	if err := e.api(ctx, o, "POST", "/api/v1/sites/"+o.Site+"/appointments", body, key, &b); err != nil {
		return err
	}
	fmt.Fprintf(out, "booking %d  %s  %s at %s\n", b.ID, b.Status, b.Resource, b.Start.Format("2006-01-02 15:04"))
	fmt.Fprintf(out, "code: %s   (check in: nowserving sim kiosk --check-in %s)\n", b.Code, b.Code)
	return nil
}

func (e *Env) bookDefaults(o *BookOpts) error {
	if cfg := e.Config; cfg != nil {
		if o.URL == "" && cfg.Listen.HTTP != "" {
			o.URL = "http://" + cfg.Listen.HTTP
		}
		if o.Token == "" && len(cfg.HTTP.Tokens) > 0 {
			o.Token = cfg.HTTP.Tokens[0].Token
		}
		if o.Site == "" && len(cfg.Sites) > 0 {
			o.Site = cfg.Sites[0].ID
		}
	}
	switch {
	case o.URL == "" || o.Token == "" || o.Site == "":
		return errors.New("sim: book: give --url, --token and --site (or a configuration with listen.http, a token and a site)")
	case o.Resource == "" || o.Patient == "":
		return errors.New("sim: book: give --resource and --patient")
	}
	if o.Date == "" {
		o.Date = e.local(time.Now()).Format(time.DateOnly)
	}
	return nil
}

// api sends one request and decodes its JSON answer into v; a problem
// answer is an error with its status, code and detail.
func (e *Env) api(ctx context.Context, o BookOpts, method, path string, body any, key string, v any) error {
	a := API{URL: o.URL, Token: o.Token, Client: &http.Client{Timeout: e.o.Timeout}}
	status, b, err := a.Do(ctx, method, path, body, key)
	if err != nil {
		return fmt.Errorf("sim: book: %s %s on the daemon's HTTP API at %s: %w", method, path, o.URL, err)
	}
	if status >= 300 {
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(b, &p)
		return fmt.Errorf("sim: book: %d %s: %s (%s)", status, http.StatusText(status), p.Code, p.Detail)
	}
	return json.Unmarshal(b, v)
}

// local is t in the time zone of the configuration's first site (UTC
// without one).
func (e *Env) local(t time.Time) time.Time {
	if e.Config != nil && len(e.Config.Sites) > 0 {
		return t.In(e.Config.Sites[0].Location())
	}
	return t.UTC()
}
