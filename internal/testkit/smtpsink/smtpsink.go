// Package smtpsink is a local SMTP server for tests that keeps what it is
// sent: enough of RFC 5321 for a client (EHLO, AUTH PLAIN, MAIL, RCPT,
// DATA with dot stuffing, RSET, NOOP, QUIT), no TLS.
package smtpsink

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
)

// Sink is a running server on a loopback port; it stops when the test
// ends.
type Sink struct {
	ln     net.Listener
	mu     sync.Mutex
	mails  []Mail
	refuse bool
}

// Mail is one mail the sink took.
type Mail struct {
	Auth string // the AUTH PLAIN argument, base64
	From string
	To   []string
	Data string // the message, as sent (CRLF line ends)
}

// Start starts a sink.
func Start(t testing.TB) *Sink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Sink{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

// Addr is the sink's host:port.
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// Mails returns the mails taken so far.
func (s *Sink) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// Refuse makes RCPT answer 550 (on) or 250 again.
func (s *Sink) Refuse(on bool) {
	s.mu.Lock()
	s.refuse = on
	s.mu.Unlock()
}

func (s *Sink) serve(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	say := func(l string) { w.WriteString(l + "\r\n"); w.Flush() }
	say("220 sink ESMTP")
	var m Mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch strings.ToUpper(strings.SplitN(line, " ", 2)[0]) {
		case "EHLO", "HELO":
			w.WriteString("250-sink\r\n")
			say("250 AUTH PLAIN")
		case "AUTH":
			m.Auth = strings.TrimPrefix(line, "AUTH PLAIN ")
			say("235 ok")
		case "MAIL":
			m.From = strings.Trim(strings.TrimPrefix(line, "MAIL FROM:"), "<>")
			say("250 ok")
		case "RCPT":
			s.mu.Lock()
			refuse := s.refuse
			s.mu.Unlock()
			if refuse {
				say("550 no such user")
				continue
			}
			m.To = append(m.To, strings.Trim(strings.TrimPrefix(line, "RCPT TO:"), "<>"))
			say("250 ok")
		case "DATA":
			data, ok := readData(r, say)
			if !ok {
				return
			}
			m.Data = data
			s.mu.Lock()
			s.mails = append(s.mails, m)
			s.mu.Unlock()
			m = Mail{}
			say("250 queued")
		case "RSET", "NOOP":
			say("250 ok")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 not here")
		}
	}
}

// readData reads a DATA section up to its lone dot, undoing the dot
// stuffing.
func readData(r *bufio.Reader, say func(string)) (string, bool) {
	say("354 go on")
	var b strings.Builder
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return "", false
		}
		if l == ".\r\n" {
			return b.String(), true
		}
		b.WriteString(strings.TrimPrefix(l, "."))
	}
}
