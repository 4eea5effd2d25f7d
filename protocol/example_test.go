package protocol_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// A daemon on loopback, and a kiosk that authenticates and takes a ticket
// with nothing but the codec.
func ExampleServer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "nowserving-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"), sqlite.Opts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{testSite()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close(ctx)
	srv, err := protocol.New(protocol.Opts{
		Engine:  eng,
		Devices: []protocol.Device{{ID: "kiosk-1", Role: wire.RoleKiosk, Site: "hq", Secret: []byte("kiosk-1-secret")}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Shutdown(ctx)

	// The kiosk.
	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	call := func(id uint32, m wire.Message) wire.Message {
		b, _ := wire.EncodeMessage(nil, id, 0, m)
		c.Write(b)
		f, err := wire.ReadFrame(br, 0)
		if err != nil {
			return nil
		}
		answer, _ := wire.DecodeMessage(f)
		return answer
	}
	ch := call(1, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1, BootNonce: 7}).(*wire.Challenge)
	w := call(2, &wire.Auth{MAC: wire.ComputeMAC([]byte("kiosk-1-secret"), ch.Nonce, "kiosk-1")}).(*wire.Welcome)
	fmt.Println("welcomed at", w.Site, "as", w.Role)
	tk := call(3, &wire.TakeTicket{Service: "A"}).(*wire.Ticket)
	fmt.Println("ticket", tk.Number, "people ahead:", tk.PeopleAhead)
	// Output:
	// welcomed at hq as kiosk
	// ticket A001 people ahead: 0
}
