//go:build !linux

package protocol

import "log/slog"

// poller parks idle sessions. Without epoll, each waits on a goroutine of
// its own (waitAlone).
type poller struct{}

func (p *poller) start(*slog.Logger)    {}
func (p *poller) arm(ss *session) error { waitAlone(ss); return nil }
func (p *poller) remove(*session)       {}
func (p *poller) close()                {}
