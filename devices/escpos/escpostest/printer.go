// Package escpostest provides a fake ESC/POS network printer for tests: a
// real TCP listener on 127.0.0.1 that answers DLE EOT status requests with the
// status bytes an Epson TM printer sends (see package escpos for the bits)
// and records every other byte it receives, so that a test can compare a
// printed ticket with golden bytes.
package escpostest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/nowserving/nowserving/devices/escpos"
)

// Paper is the state of the roll paper sensor.
type Paper int

// Paper states.
const (
	PaperOK      Paper = iota // roll present
	PaperNearEnd              // near-end sensor triggered, still printing
	PaperOut                  // no paper: offline, printing stopped
)

// State is what the fake printer reports.
type State struct {
	Paper     Paper
	CoverOpen bool // offline with the cover open
	Silent    bool // reads everything but never answers status requests
	// PaperLeft, when positive, is how many more bytes the printer takes
	// before the roll runs out (Paper becomes PaperOut): paper ending in
	// the middle of a ticket.
	PaperLeft int
}

// Printer is a fake network printer. Like a real one it serves one
// connection at a time, in the order they arrive. Its methods are safe for
// concurrent use.
type Printer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	st   State
	recv []byte
	jobs [][]byte
	asks []byte
	// changed is closed and replaced whenever a job is recorded.
	changed chan struct{}
	conns   map[net.Conn]struct{}
	closed  bool
}

// NewPrinter starts a fake printer on 127.0.0.1 with a free port, like
// httptest.NewServer; it panics only if no loopback port can be opened.
// Stop it with Close.
func NewPrinter() *Printer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("escpostest: listen on 127.0.0.1:0: %v", err))
	}
	p := &Printer{ln: ln, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

// Addr returns the printer's host:port, for escpos.Opts.Addr.
func (p *Printer) Addr() string { return p.ln.Addr().String() }

// SetState changes what the printer reports from now on.
func (p *Printer) SetState(s State) {
	p.mu.Lock()
	p.st = s
	p.mu.Unlock()
}

// State returns the current state.
func (p *Printer) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

// Received returns a copy of every byte received so far on all connections,
// except the DLE EOT status requests.
func (p *Printer) Received() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.recv...)
}

// Jobs returns the bytes of each finished connection that sent something
// besides status requests, oldest first.
func (p *Printer) Jobs() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([][]byte, len(p.jobs))
	for i, j := range p.jobs {
		out[i] = append([]byte(nil), j...)
	}
	return out
}

// WaitJobs waits until at least n jobs are recorded and returns them all.
func (p *Printer) WaitJobs(ctx context.Context, n int) ([][]byte, error) {
	for {
		p.mu.Lock()
		ch, have := p.changed, len(p.jobs)
		p.mu.Unlock()
		if have >= n {
			return p.Jobs(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return p.Jobs(), fmt.Errorf("escpostest: wait for %d jobs, have %d: %w", n, have, ctx.Err())
		}
	}
}

// Queries returns n of every DLE EOT n status request received, in order.
func (p *Printer) Queries() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.asks...)
}

// Reset forgets the received bytes, jobs and queries.
func (p *Printer) Reset() {
	p.mu.Lock()
	p.recv, p.jobs, p.asks = nil, nil, nil
	p.mu.Unlock()
}

// Close stops listening, closes open connections and waits for them.
func (p *Printer) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Printer) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.handle(c)
	}
}

// handle serves one connection to its end; like a real printer the fake
// serves one connection at a time, the next waits in the listen backlog.
// It splits the stream into commands, so that status requests are
// recognised only at command boundaries (never inside raster or QR data),
// answers them, and records everything else.
func (p *Printer) handle(c net.Conn) {
	var job []byte
	defer func() {
		c.Close()
		p.mu.Lock()
		delete(p.conns, c)
		if len(job) > 0 {
			p.jobs = append(p.jobs, job)
			close(p.changed)
			p.changed = make(chan struct{})
		}
		p.mu.Unlock()
	}()
	record := func(b []byte) {
		job = append(job, b...)
		p.mu.Lock()
		p.recv = append(p.recv, b...)
		if p.st.PaperLeft > 0 {
			p.st.PaperLeft -= len(b)
			if p.st.PaperLeft <= 0 {
				p.st.PaperLeft, p.st.Paper = 0, PaperOut
			}
		}
		p.mu.Unlock()
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), escpos.MaxCommandLen+16)
	sc.Split(escpos.ScanCommands)
	for sc.Scan() {
		tok := sc.Bytes()
		if len(tok) == 3 && tok[0] == 0x10 && tok[1] == 0x04 {
			p.mu.Lock()
			p.asks = append(p.asks, tok[2])
			p.mu.Unlock()
			if reply, ok := p.State().reply(tok[2]); ok {
				if _, err := c.Write([]byte{reply}); err != nil {
					return
				}
			}
			continue
		}
		record(tok)
	}
	if sc.Err() != nil {
		// An oversized command: keep the raw bytes, as a printer would
		// swallow them, and stop interpreting.
		rest, _ := io.ReadAll(c)
		record(rest)
	}
}

// reply returns the status byte for DLE EOT n, as an Epson TM printer
// sends it; ok is false when the printer stays silent.
func (s State) reply(n byte) (b byte, ok bool) {
	if s.Silent {
		return 0, false
	}
	const fixed = 0x12 // bits 1 and 4 are always set
	offline := s.CoverOpen || s.Paper == PaperOut
	b = fixed
	switch n {
	case escpos.StatusPrinter:
		if offline {
			b |= 1 << 3
		}
	case escpos.StatusOffline:
		if s.CoverOpen {
			b |= 1 << 2
		}
		if s.Paper == PaperOut {
			b |= 1 << 5
		}
	case 3: // error cause: no errors simulated
	case escpos.StatusPaper:
		switch s.Paper {
		case PaperNearEnd:
			b |= 3 << 2
		case PaperOut:
			b |= 3<<2 | 3<<5 // an empty roll also trips the near-end sensor
		}
	default:
		return 0, false
	}
	return b, true
}
