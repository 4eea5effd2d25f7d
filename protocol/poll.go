package protocol

import "time"

// waitAlone parks ss on a goroutine of its own, blocked in a read: for
// connections the poller cannot watch (not a socket, or no epoll on this
// system). It costs that goroutine and a read buffer per idle session.
func waitAlone(ss *session) {
	go func() {
		br := getReader(ss.conn)
		ss.mu.Lock()
		if ss.stop == nil {
			_ = ss.conn.SetReadDeadline(time.Time{})
		}
		ss.mu.Unlock()
		_, _ = br.Peek(1)
		ss.readable(br)
	}()
}
