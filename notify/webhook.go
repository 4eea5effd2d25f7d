package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// The headers of a webhook delivery.
const (
	// HeaderEventID carries the event's stable id: the same on every
	// attempt, so a receiver drops a message it has seen.
	HeaderEventID = "X-Nowserving-Event-Id"
	// HeaderEventType carries the event type, e.g. BOOKING_BOOKED.
	HeaderEventType = "X-Nowserving-Event-Type"
	// HeaderAttempt is the attempt's number, 1 for the first.
	HeaderAttempt = "X-Nowserving-Attempt"
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256 of the body
	// under the webhook's secret (see Sign and Verify).
	HeaderSignature = "X-Nowserving-Signature"
)

// Webhook delivers a message as an HTTP POST of its JSON body to URL,
// signed with Secret; any 2xx answer means delivered. Redirects are not
// followed (a POST would become a GET): a 3xx is a failure naming where it
// points.
type Webhook struct {
	URL    string
	Secret []byte
	// Client sends the requests; nil means one that follows no redirects.
	// The attempt's timeout comes from the context.
	Client *http.Client
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Sign returns the HeaderSignature value of body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether sig (a HeaderSignature value) signs body under
// secret, in constant time.
func Verify(secret, body []byte, sig string) bool {
	hexSum, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// Deliver posts m; an error says what the receiver answered, or why it
// could not be reached.
func (h *Webhook) Deliver(ctx context.Context, m *sqlstore.OutboxMessage) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(m.Body))
	if err != nil {
		return fmt.Errorf("notify: webhook %s: %w", safeURL(h.URL), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "nowserving-notify")
	req.Header.Set(HeaderEventID, m.EventID)
	req.Header.Set(HeaderEventType, string(m.Type))
	req.Header.Set(HeaderAttempt, strconv.Itoa(m.Attempt))
	req.Header.Set(HeaderSignature, Sign(h.Secret, m.Body))
	c := h.Client
	if c == nil {
		c = noRedirects
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the whole URL
		}
		return fmt.Errorf("notify: webhook %s: %w", safeURL(h.URL), err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fmt.Errorf("notify: webhook %s answered %s, redirecting to %q (not followed: configure the final address)",
			safeURL(h.URL), resp.Status, resp.Header.Get("Location"))
	}
	return fmt.Errorf("notify: webhook %s answered %s: %q", safeURL(h.URL), resp.Status, strings.TrimSpace(string(head)))
}

// safeURL is u without credentials, query or fragment (they may hold
// tokens), for errors and logs.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(bad URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}
