//go:build linux

package protocol

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// pollEvents is what a parked session waits for, once: bytes, the peer's
// close, or an error (EPOLLERR and EPOLLHUP are always reported).
const pollEvents = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT

// poller parks idle sessions in an epoll set of its own, so that a session
// with nothing to read costs no goroutine and no buffer. The epoll file
// descriptor is itself watched by Go's network poller: one goroutine waits
// for it, without holding a thread, and starts a readable goroutine for
// each session that has something to read. Sessions are registered
// one-shot: an event disarms the session until it parks again, so at most
// one goroutine reads a session. Events carry the session's seq, never its
// file descriptor (which the kernel reuses).
type poller struct {
	mu       sync.Mutex
	epfd     int
	file     *os.File // epfd, registered with Go's poller; nil: not started
	closed   bool
	sessions map[uint64]*session // by seq, while registered
	crew     crew
}

// maxIdleCrew bounds the crew that waits for the next ready session.
const maxIdleCrew = 128

// crew are the goroutines that read ready sessions. One that has read
// its session waits for the next, up to maxIdleCrew of them, rather
// than end: a goroutine started afresh for every request grew its stack
// again down the request's deep path each time (4% of the daemon's CPU
// under a kiosk flood). Past the bound it ends, so idle connections still
// cost no goroutine.
type crew struct {
	work chan *session // unbuffered: taken only by a goroutine waiting
	done chan struct{} // closed by the poller's close: the waiting ones end
	idle atomic.Int32
}

// run has ss read by a waiting goroutine of the crew, or a new one.
func (r *crew) run(ss *session) {
	select {
	case r.work <- ss:
	default:
		go r.serve(ss)
	}
}

func (r *crew) serve(ss *session) {
	for {
		ss.readable(nil)
		if r.idle.Add(1) > maxIdleCrew {
			r.idle.Add(-1)
			return
		}
		select {
		case ss = <-r.work:
			r.idle.Add(-1)
		case <-r.done:
			r.idle.Add(-1)
			return
		}
	}
}

// start creates the epoll set and its goroutine. When that fails, sessions
// wait on goroutines of their own (waitAlone) and the failure is logged.
func (p *poller) start(log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file != nil || p.closed {
		return
	}
	if err := p.open(); err != nil {
		log.Error("protocol: no epoll; idle connections each keep a goroutine", "err", err)
		return
	}
	go p.loop(log)
}

func (p *poller) open() error {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("epoll set non-blocking: %w", err)
	}
	p.epfd, p.file, p.sessions = fd, os.NewFile(uintptr(fd), "epoll"), map[uint64]*session{}
	p.crew.work, p.crew.done = make(chan *session), make(chan struct{})
	return nil
}

// loop hands every ready session to a readable goroutine until close.
func (p *poller) loop(log *slog.Logger) {
	rc, err := p.file.SyscallConn()
	if err != nil {
		log.Error("protocol: epoll: raw conn", "err", err)
		return
	}
	evs := make([]syscall.EpollEvent, 256)
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.EpollWait(int(fd), evs, 0)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				werr = err
				return true
			}
			if n == 0 {
				return false // wait until the set has events again
			}
			p.mu.Lock()
			for i := range evs[:n] {
				seq := uint64(uint32(evs[i].Fd)) | uint64(uint32(evs[i].Pad))<<32
				if ss := p.sessions[seq]; ss != nil {
					p.crew.run(ss)
				}
			}
			p.mu.Unlock()
		}
	})
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	switch {
	case werr != nil:
		log.Error("protocol: epoll_wait failed; parked connections are no longer read", "err", werr)
	case err != nil && !closed:
		log.Error("protocol: epoll: wait", "err", err)
	}
}

// arm parks ss until it has something to read. The caller owns ss.
func (p *poller) arm(ss *session) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ss.raw == nil || p.file == nil || p.closed {
		waitAlone(ss)
		return nil
	}
	op := syscall.EPOLL_CTL_MOD
	if !ss.polled {
		op = syscall.EPOLL_CTL_ADD
	}
	ev := syscall.EpollEvent{Events: pollEvents, Fd: int32(uint32(ss.seq)), Pad: int32(uint32(ss.seq >> 32))}
	var cerr error
	// Control holds the socket open while it runs: the descriptor is
	// still this session's.
	if err := ss.raw.Control(func(fd uintptr) { cerr = syscall.EpollCtl(p.epfd, op, int(fd), &ev) }); err != nil {
		return fmt.Errorf("protocol: poll: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("protocol: epoll_ctl: %w", cerr)
	}
	ss.polled = true
	p.sessions[ss.seq] = ss
	return nil
}

// remove takes ss out of the epoll set, before its connection is closed.
// The caller owns ss.
func (p *poller) remove(ss *session) {
	if !ss.polled {
		return
	}
	ss.polled = false
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.sessions, ss.seq)
	if !p.closed {
		_ = ss.raw.Control(func(fd uintptr) { _ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil) })
	}
}

// close ends the poller's goroutine and closes the epoll set.
func (p *poller) close() {
	p.mu.Lock()
	if !p.closed && p.file != nil {
		close(p.crew.done)
	}
	p.closed = true
	f := p.file
	p.mu.Unlock()
	// Not under p.mu: Close waits for the loop, which may be waiting for
	// p.mu.
	if f != nil {
		f.Close()
	}
}
