package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TypeReport is the outbox type of a scheduled report (see ReportBody):
// no event has it.
const TypeReport queue.EventType = "REPORT"

// ReportBody is the JSON of a scheduled report's message, the report in
// it as text: a webhook gets it as its body, a command on its standard
// input, and an e-mail receiver sends Content as an attachment named
// Filename.
type ReportBody struct {
	ID          string `json:"id"`   // the stable id: schedule and period
	Type        string `json:"type"` // REPORT
	Schedule    string `json:"schedule"`
	Site        string `json:"site"`
	SiteName    string `json:"site_name,omitempty"`
	From        string `json:"from"` // the first service day, YYYY-MM-DD
	To          string `json:"to"`   // the last one
	Format      string `json:"format"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// The StartTLS modes of an Email receiver.
const (
	StartTLSAuto   = "auto"   // STARTTLS when the server offers it
	StartTLSAlways = "always" // refuse to send without it
	StartTLSNever  = "never"  // plain SMTP (a relay on the host itself)
)

// Email delivers a message as an e-mail over SMTP: a scheduled report
// with the report attached, any other message (an event) with its JSON as
// the text. The message id is the event id, so a receiving system can
// drop a repeat. Authentication (PLAIN) is used when Username is set; Go
// refuses to send it without TLS except to localhost.
type Email struct {
	Addr     string // host:port of the SMTP server (relay or submission)
	From     string
	To       []string
	Username string
	Password string
	// StartTLS is StartTLSAuto (when empty), StartTLSAlways or
	// StartTLSNever.
	StartTLS string
	// TLS configures STARTTLS (nil: verify against the system roots for
	// the host of Addr).
	TLS *tls.Config
	// Now dates the message (time.Now when nil).
	Now func() time.Time
}

// Deliver sends m; an error says which SMTP step failed and what the
// server answered. The attempt ends with ctx.
func (e *Email) Deliver(ctx context.Context, m *sqlstore.OutboxMessage) error {
	msg, err := e.message(m)
	if err != nil {
		return fmt.Errorf("notify: e-mail to %s: %w", strings.Join(e.To, ", "), err)
	}
	if err := e.send(ctx, msg); err != nil {
		return fmt.Errorf("notify: e-mail via %s: %w", e.Addr, err)
	}
	return nil
}

// send speaks SMTP to Addr: hello, STARTTLS as configured, AUTH, the
// envelope, the data and QUIT.
func (e *Email) send(ctx context.Context, msg []byte) error {
	host, _, err := net.SplitHostPort(e.Addr)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", e.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	defer c.Close()
	if err := c.Hello("nowserving"); err != nil {
		return fmt.Errorf("EHLO: %w", err)
	}
	if err := e.startTLS(c, host); err != nil {
		return err
	}
	if e.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", e.Username, e.Password, host)); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if err := c.Mail(e.From); err != nil {
		return fmt.Errorf("MAIL FROM %s: %w", e.From, err)
	}
	for _, to := range e.To {
		if err := c.Rcpt(to); err != nil {
			return fmt.Errorf("RCPT TO %s: %w", to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("end of DATA: %w", err)
	}
	return c.Quit()
}

// startTLS upgrades the connection as StartTLS says.
func (e *Email) startTLS(c *smtp.Client, host string) error {
	if e.StartTLS == StartTLSNever {
		return nil
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		if e.StartTLS == StartTLSAlways {
			return errors.New("the server offers no STARTTLS (start_tls: always)")
		}
		return nil
	}
	cfg := e.TLS
	if cfg == nil {
		cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	if err := c.StartTLS(cfg); err != nil {
		return fmt.Errorf("STARTTLS: %w", err)
	}
	return nil
}

// message is the MIME message of m: a text part, and for a report the
// report as an attachment.
func (e *Email) message(m *sqlstore.OutboxMessage) ([]byte, error) {
	var subject, text string
	var rep *ReportBody
	if m.Type == TypeReport {
		rep = &ReportBody{}
		if err := json.Unmarshal(m.Body, rep); err != nil {
			return nil, fmt.Errorf("read the report of message %d: %w", m.ID, err)
		}
		subject, text = reportSubject(rep), reportText(rep)
	} else {
		subject = fmt.Sprintf("nowserving: %s at %s", m.Type, m.Site)
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, m.Body, "", "  "); err != nil {
			pretty.Reset()
			pretty.Write(m.Body)
		}
		text = pretty.String() + "\n"
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fmt.Fprintf(&b, "From: %s\nTo: %s\nSubject: %s\nDate: %s\nMessage-ID: <%s@nowserving>\nMIME-Version: 1.0\n"+
		"Content-Type: multipart/mixed; boundary=%s\n\n", e.From, strings.Join(e.To, ", "),
		mime.QEncoding.Encode("utf-8", subject), now().Format(time.RFC1123Z), m.EventID, mw.Boundary())
	if err := part(mw, textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}}, text); err != nil {
		return nil, err
	}
	if rep != nil {
		h := textproto.MIMEHeader{
			"Content-Type":        {mime.FormatMediaType(rep.ContentType, map[string]string{"charset": "utf-8"})},
			"Content-Disposition": {mime.FormatMediaType("attachment", map[string]string{"filename": rep.Filename})},
		}
		if err := part(mw, h, rep.Content); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// part writes one base64 part of a multipart message.
func part(mw *multipart.Writer, h textproto.MIMEHeader, content string) error {
	h.Set("Content-Transfer-Encoding", "base64")
	w, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString([]byte(content))
	for len(enc) > 76 {
		if _, err := fmt.Fprintf(w, "%s\n", enc[:76]); err != nil {
			return err
		}
		enc = enc[76:]
	}
	_, err = fmt.Fprintf(w, "%s\n", enc)
	return err
}

func reportSubject(r *ReportBody) string {
	name := r.SiteName
	if name == "" {
		name = r.Site
	}
	if r.From == r.To {
		return fmt.Sprintf("nowserving report: %s, %s", name, r.From)
	}
	return fmt.Sprintf("nowserving report: %s, %s to %s", name, r.From, r.To)
}

func reportText(r *ReportBody) string {
	return fmt.Sprintf("The %s report of %s for %s to %s is attached (%s).\n\nSent by nowserving, schedule %q.\n",
		r.Format, r.Site, r.From, r.To, r.Filename, r.Schedule)
}
