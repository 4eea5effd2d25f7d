package led_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// newLine opens a ledtest.Line reached through link (a symlink), so a test
// can "replug" the board on a new pty under the same name.
func newLine(t *testing.T, link string) *ledtest.Line {
	t.Helper()
	l := ledtest.NewLine(t)
	_ = os.Remove(link)
	if err := os.Symlink(l.Name(), link); err != nil {
		t.Fatal(err)
	}
	return l
}

// modbusBoards answers, for ledtest.Line.Serve, every complete Modbus write
// request while answer() is true.
func modbusBoards(answer func() bool) func(got []byte) (int, []byte) {
	return func(got []byte) (int, []byte) {
		var n int
		switch {
		case len(got) >= 8 && got[1] == 0x06:
			n = 8
		case len(got) >= 9 && got[1] == 0x10 && len(got) >= 9+int(got[6]):
			n = 9 + int(got[6])
		default:
			return 0, nil
		}
		if !answer() {
			return n, nil
		}
		reply := append([]byte(nil), got[:6]...)
		return n, binary.LittleEndian.AppendUint16(reply, led.CRC16Modbus(reply))
	}
}

func encode(t *testing.T, d led.Driver, addr int, c led.Content) []byte {
	t.Helper()
	frames, err := d.Encode(addr, c)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Join(frames, nil)
}

func fastOpts(name string, d led.Driver) led.PortOpts {
	o := led.DefaultPortOpts()
	o.Name = name
	o.Driver = d
	o.Gap = time.Millisecond
	o.ReplyTimeout = 100 * time.Millisecond
	o.WriteTimeout = 500 * time.Millisecond
	o.MinBackoff = 10 * time.Millisecond
	o.MaxBackoff = 80 * time.Millisecond
	o.OfflineAfter = 2
	o.CloseTimeout = time.Second
	return o
}

func startPort(t *testing.T, o led.PortOpts) *led.Port {
	t.Helper()
	p, err := led.NewPort(o)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	t.Cleanup(func() {
		p.Close()
		<-errc
	})
	return p
}

func template(t *testing.T) led.Driver {
	d, err := led.NewTemplate(led.TemplateOpts{Header: "01", Body: "{number:-4}{counter:2}", Trailer: "07"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// statusLog collects OnStatus callbacks.
type statusLog struct {
	mu  sync.Mutex
	sts []led.BoardStatus
}

func (s *statusLog) add(st led.BoardStatus) {
	s.mu.Lock()
	s.sts = append(s.sts, st)
	s.mu.Unlock()
}

func (s *statusLog) has(addr int, online bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sts {
		if st.Addr == addr && st.Online == online {
			return true
		}
	}
	return false
}

// TestPortGoldenOverPTY: the bytes reaching the far end of the line are the
// golden frames, the latest content per address wins, and Close blanks.
func TestPortGoldenOverPTY(t *testing.T) {
	dir := t.TempDir()
	l := newLine(t, filepath.Join(dir, "ttyLED"))
	d := template(t)
	p := startPort(t, fastOpts(filepath.Join(dir, "ttyLED"), d))

	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "template_01_07.hex"))
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.ReplaceAll(golden, []byte(" "), nil)
	wantBytes := make([]byte, len(want)/2)
	if _, err := hexDecode(wantBytes, bytes.TrimSpace(want)); err != nil {
		t.Fatal(err)
	}
	p.Show(3, led.Content{Number: "A023", Counter: "5"})
	l.WaitBytes(t, wantBytes)
	poll.Until(t, "board 3 online", func() bool { return p.Online(3) })

	// Several updates in a burst: the last one must be what the board ends on.
	for i := range 50 {
		p.Show(4, led.Content{Number: "B" + string(rune('0'+i%10)), Counter: "1"})
	}
	p.Show(4, led.Content{Number: "C999", Counter: "9"})
	l.WaitBytes(t, encode(t, d, 4, led.Content{Number: "C999", Counter: "9"}))

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	l.WaitBytes(t, append(encode(t, d, 3, led.Content{}), encode(t, d, 4, led.Content{})...))
}

func hexDecode(dst, src []byte) (int, error) {
	n := 0
	for i := 0; i+1 < len(src); i += 2 {
		if src[i] == '\n' {
			i--
			continue
		}
		var v byte
		for _, c := range src[i : i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= c - '0'
			case c >= 'a' && c <= 'f':
				v |= c - 'a' + 10
			}
		}
		dst[n] = v
		n++
	}
	return n, nil
}

// TestPortModbusReplies: replies are awaited and checked; a board that
// stops answering goes offline, and when it answers again it is online and
// shows the latest content.
func TestPortModbusReplies(t *testing.T) {
	dir := t.TempDir()
	l := newLine(t, filepath.Join(dir, "ttyMB"))
	d, err := led.NewModbus(led.ModbusOpts{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	answering := true
	answer := func() bool { mu.Lock(); defer mu.Unlock(); return answering }
	setAnswer := func(v bool) { mu.Lock(); answering = v; mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.Serve(ctx, modbusBoards(answer))

	var log statusLog
	o := fastOpts(filepath.Join(dir, "ttyMB"), d)
	o.OnStatus = log.add
	p := startPort(t, o)

	p.Show(7, led.Content{Number: "A001"})
	poll.Until(t, "board 7 online", func() bool { return p.Online(7) })

	setAnswer(false)
	p.Show(7, led.Content{Number: "A002"})
	poll.Until(t, "board 7 offline", func() bool { return !p.Online(7) })
	if !log.has(7, false) {
		t.Error("no offline status reported for board 7")
	}
	p.Show(7, led.Content{Number: "A003"})
	setAnswer(true)
	poll.Until(t, "board 7 back online", func() bool { return p.Online(7) && log.has(7, true) })
	st := p.Status()
	if len(st) != 1 || st[0].Addr != 7 || !st[0].Online || st[0].Err != nil {
		t.Errorf("Status() = %+v", st)
	}
}

// TestPortUnplugReplug: closing the pty takes the board offline; a new pty
// under the same name brings it back with the latest content.
func TestPortUnplugReplug(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "ttyUSB0")
	l := newLine(t, name)
	d := template(t)
	var log statusLog
	o := fastOpts(name, d)
	o.OnStatus = log.add
	p := startPort(t, o)

	p.Show(1, led.Content{Number: "A001", Counter: "1"})
	l.WaitBytes(t, encode(t, d, 1, led.Content{Number: "A001", Counter: "1"}))
	poll.Until(t, "online", func() bool { return p.Online(1) })

	l.Unplug()
	p.Show(1, led.Content{Number: "A002", Counter: "1"})
	poll.Until(t, "offline after unplug", func() bool { return !p.Online(1) && log.has(1, false) })
	p.Show(1, led.Content{Number: "A003", Counter: "2"})

	l2 := newLine(t, name)
	l2.WaitBytes(t, encode(t, d, 1, led.Content{Number: "A003", Counter: "2"}))
	poll.Until(t, "online after replug", func() bool { return p.Online(1) })
}

// TestStuckPortDoesNotBlockOthers: a port whose boards never answer and
// whose line is never read does not delay Show on it or another port.
func TestStuckPortDoesNotBlockOthers(t *testing.T) {
	dir := t.TempDir()
	stuckLine := newLine(t, filepath.Join(dir, "ttyStuck"))
	_ = stuckLine
	good := newLine(t, filepath.Join(dir, "ttyGood"))

	big, err := led.NewTemplate(led.TemplateOpts{Body: "{text}"})
	if err != nil {
		t.Fatal(err)
	}
	mb, err := led.NewModbus(led.ModbusOpts{})
	if err != nil {
		t.Fatal(err)
	}
	// The stuck port: Modbus boards that never reply.
	so := fastOpts(filepath.Join(dir, "ttyStuck"), mb)
	so.ReplyTimeout = 500 * time.Millisecond
	stuck := startPort(t, so)
	_ = big

	d := template(t)
	gp := startPort(t, fastOpts(filepath.Join(dir, "ttyGood"), d))

	done := make(chan struct{})
	go func() {
		for i := range 1000 {
			stuck.Show(1+i%200, led.Content{Number: "A001"})
		}
		gp.Show(2, led.Content{Number: "A777", Counter: "3"})
		close(done)
	}()
	poll.Recv(t, done, "Show (blocked)")
	good.WaitBytes(t, encode(t, d, 2, led.Content{Number: "A777", Counter: "3"}))
	if stuck.Online(1) {
		t.Error("board on the stuck port reported online")
	}
}

// TestCloseWithJammedLine: a line whose far end never reads fills the pty
// buffer; writes then block, and Close still returns.
func TestCloseWithJammedLine(t *testing.T) {
	dir := t.TempDir()
	m, s := ledtest.OpenPTY(t)
	defer m.Close()
	defer s.Close()
	big, err := led.NewTemplate(led.TemplateOpts{Body: "{text}"})
	if err != nil {
		t.Fatal(err)
	}
	_ = dir
	o := fastOpts(s.Name(), big)
	o.WriteTimeout = 200 * time.Millisecond
	o.CloseTimeout = 300 * time.Millisecond
	p, err := led.NewPort(o)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	text := string(bytes.Repeat([]byte("x"), 4000))
	for i := range 64 {
		p.Show(i, led.Content{Text: text + string(rune('a'+i%26))})
	}
	poll.Until(t, "a board to go offline on the jammed line", func() bool {
		for _, st := range p.Status() {
			if st.Err != nil {
				return true
			}
		}
		return false
	})
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	poll.Recv(t, closed, "Close (blocked on a jammed line)")
	<-errc
}

// TestPortWithRecorder: the ledtest recorder stands in for a line.
func TestPortWithRecorder(t *testing.T) {
	rec := ledtest.New()
	d := template(t)
	o := fastOpts("rec", d)
	o.Dial = rec.Dial
	p := startPort(t, o)
	p.Show(9, led.Content{Number: "A009", Counter: "4"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := encode(t, d, 9, led.Content{Number: "A009", Counter: "4"})
	if _, err := rec.WaitFor(ctx, func(f []byte) bool { return bytes.Equal(f, want) }); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "online", func() bool { return p.Online(9) })
	rec.Unplug()
	p.Show(9, led.Content{Number: "A010", Counter: "4"})
	poll.Until(t, "offline", func() bool { return !p.Online(9) })
	rec.Plug()
	want = encode(t, d, 9, led.Content{Number: "A010", Counter: "4"})
	if _, err := rec.WaitFor(ctx, func(f []byte) bool { return bytes.Equal(f, want) }); err != nil {
		t.Fatal(err)
	}
}
