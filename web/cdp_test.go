package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// browser drives a headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on fd 3, replies on fd 4, each a JSON
// message ended by a NUL byte), so no WebSocket library is needed.
type browser struct {
	cmd  *exec.Cmd
	in   *os.File // our end of the command pipe
	done chan struct{}

	mu      sync.Mutex
	next    int
	pending map[int]chan cdpReply
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := need.Program(t, "chromium", "chromium", "chromium-browser", "google-chrome")
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-first-run", "--no-default-browser-check",
		"--mute-audio", "--autoplay-policy=no-user-gesture-required",
		"--window-size=1280,720", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW} // fd 3: commands in, fd 4: replies out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	b := &browser{cmd: cmd, in: cmdW, done: make(chan struct{}), pending: map[int]chan cdpReply{}}
	go b.read(outR)
	t.Cleanup(b.close)
	return b
}

func (b *browser) read(f *os.File) {
	defer close(b.done)
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue // an event: not needed here
		}
		b.mu.Lock()
		ch := b.pending[m.ID]
		delete(b.pending, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command (to a page when session is set) and decodes its
// result into out.
func (b *browser) call(session, method string, params any, out any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("cdp %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("cdp %s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("cdp %s: browser exited", method)
	case <-time.After(20 * time.Second):
		return fmt.Errorf("cdp %s: no reply in 20 s", method)
	}
}

// open opens url in a new page and returns the page's session. The page
// is closed when t ends: a page keeps its event stream open, and Chromium
// opens at most six connections to one host.
func (b *browser) open(t testing.TB, url string) string {
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": url, "newWindow": true}, &target); err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.call("", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil) })
	return att.SessionID
}

// openAt opens url in a new page whose viewport is w×h CSS pixels (set
// before the page loads, so its first layout is the one under test).
func (b *browser) openAt(t testing.TB, url string, w, h int) string {
	t.Helper()
	s := b.open(t, "about:blank")
	if err := b.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.call(s, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// eval evaluates a JavaScript expression in a page and returns its string
// value.
func (b *browser) eval(session, expr string) (string, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := b.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return "", err
	}
	return fmt.Sprint(r.Result.Value), nil
}

// waitFor polls expr until it returns want, or fails after timeout. It
// returns when it first saw want.
func (b *browser) waitFor(t testing.TB, session, expr, want string, timeout time.Duration) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got string
	for {
		v, err := b.eval(session, expr)
		if err != nil && !navigating(err) {
			t.Fatal(err)
		}
		if err == nil && v == want {
			return time.Now()
		}
		got = v
		select {
		case <-ctx.Done():
			t.Fatalf("%s = %q after %v, want %q", expr, got, timeout, want)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// navigating reports an evaluation the page's navigation cut short: the
// page the expression ran in is gone, the next one will answer.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed")
}

func (b *browser) screenshot(t testing.TB, session string) []byte {
	t.Helper()
	var r struct {
		Data []byte `json:"data"` // base64 in JSON: decoded by encoding/json
	}
	if err := b.call(session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}

func (b *browser) close() {
	_ = b.call("", "Browser.close", map[string]any{}, nil)
	b.in.Close()
	exited := make(chan struct{})
	go func() { b.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		b.cmd.Process.Kill()
		<-exited
	}
}
