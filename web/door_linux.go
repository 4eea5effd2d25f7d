package web

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptQueue is how many connections wait in ln's accept queue: Linux
// reports it of a listening socket as TCP_INFO's unacked.
func acceptQueue(ln net.Listener) (int, bool) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil {
		return 0, false
	}
	return int(info.Unacked), true
}
