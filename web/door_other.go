//go:build !linux

package web

import "net"

// acceptQueue does not know the accept queue's depth here: the door sheds
// nothing, and the connections past the places wait in the backlog.
func acceptQueue(net.Listener) (int, bool) { return 0, false }
