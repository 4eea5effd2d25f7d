package conform

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// peer is one connection, read frame by frame with a deadline each.
type peer struct {
	nc       net.Conn
	br       *bufio.Reader
	lastRecv time.Time // when the last frame arrived
	lastSend time.Time // when the last frame was sent
}

func newPeer(nc net.Conn) *peer {
	return &peer{nc: nc, br: bufio.NewReader(nc), lastRecv: time.Now(), lastSend: time.Now()}
}

// errTimeout is returned by read when no frame came in time.
var errTimeout = errors.New("conform: no frame in time")

// read returns the next frame, waiting at most d. A frame the codec
// refuses (bad magic, version, checksum, length) is returned as an error
// wrapping the codec's; a closed connection as io.EOF.
func (p *peer) read(d time.Duration) (wire.Frame, error) {
	_ = p.nc.SetReadDeadline(time.Now().Add(d))
	f, err := wire.ReadFrame(p.br, 0)
	switch {
	case err == nil:
		p.lastRecv = time.Now()
		return f, nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return f, errTimeout
	case errors.Is(err, io.EOF), errors.Is(err, wire.ErrTruncated), errors.Is(err, net.ErrClosed):
		return f, io.EOF
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return f, io.EOF // reset by the peer
	}
	return f, err
}

// send writes m in a frame with request id id and flags fl.
func (p *peer) send(id uint32, fl wire.Flags, m wire.Message) error {
	b, err := wire.EncodeMessage(nil, id, fl, m)
	if err != nil {
		return err
	}
	return p.raw(b)
}

// raw writes b as it is.
func (p *peer) raw(b []byte) error {
	_ = p.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := p.nc.Write(b); err != nil {
		return fmt.Errorf("conform: write: %w", err)
	}
	p.lastSend = time.Now()
	return nil
}

func (p *peer) close() { _ = p.nc.Close() }

// closed waits up to d for the other side to close the connection, reading
// (and returning) the frames that come before.
func (p *peer) closed(d time.Duration) ([]wire.Frame, bool) {
	var got []wire.Frame
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return got, false
		}
		f, err := p.read(left)
		switch {
		case err == nil:
			got = append(got, f)
		case errors.Is(err, errTimeout):
			return got, false
		default:
			return got, true
		}
	}
}

// encode returns the frame of m, for the tests and the broken frames.
func encode(id uint32, fl wire.Flags, m wire.Message) []byte {
	b, err := wire.EncodeMessage(nil, id, fl, m)
	if err != nil {
		panic(fmt.Sprintf("conform: encode %s: %v", m.Type(), err)) // the kit's own messages are valid
	}
	return b
}
