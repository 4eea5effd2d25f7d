// Package cdptest drives a headless Chromium over the DevTools protocol for
// the browser tests (of package web, and the busy-day test of
// cmd/nowserving): open pages at a size, evaluate JavaScript, take
// screenshots. It is for tests only.
package cdptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// Browser drives a headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on fd 3, replies on fd 4, each a JSON
// message ended by a NUL byte), so no WebSocket library is needed.
type Browser struct {
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

// Start starts a headless Chromium (the test fails without one, or skips
// where package need allows) and closes it when t ends.
func Start(t testing.TB) *Browser {
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
	b := &Browser{cmd: cmd, in: cmdW, done: make(chan struct{}), pending: map[int]chan cdpReply{}}
	go b.read(outR)
	t.Cleanup(b.Close)
	return b
}

func (b *Browser) read(f *os.File) {
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

// Call sends one command (to a page when session is set) and decodes its
// result into out.
func (b *Browser) Call(session, method string, params any, out any) error {
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
	case <-time.After(callTimeout):
		return fmt.Errorf("cdp %s: no reply in %s", method, callTimeout)
	}
}

// callTimeout bounds one DevTools call: generous, for a browser starting
// or opening a page on a loaded 2-core machine (CI saw Target.createTarget
// take over 20 s beside the busy day's daemon).
const callTimeout = time.Minute

// Open opens url in a new page and returns the page's session. The page
// is closed when t ends: a page keeps its event stream open, and Chromium
// opens at most six connections to one host.
func (b *Browser) Open(t testing.TB, url string) string {
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call("", "Target.createTarget", map[string]any{"url": url, "newWindow": true}, &target); err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Call("", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil) })
	return att.SessionID
}

// OpenAt opens url in a new page whose viewport is w×h CSS pixels (set
// before the page loads, so its first layout is the one under test).
func (b *Browser) OpenAt(t testing.TB, url string, w, h int) string {
	t.Helper()
	s := b.Open(t, "about:blank")
	if err := b.Call(s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(s, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// Still stops the page's animations (CSS animations and transitions,
// those running and those started later) where they are, for a test
// that follows what a page shows over a long run rather than how it
// moves: a running animation has Chromium paint the page 60 times a
// second, which in the busy day (a display flashing at every call) was
// half of Chromium's CPU.
func (b *Browser) Still(session string) error {
	if err := b.Call(session, "Animation.enable", map[string]any{}, nil); err != nil {
		return err
	}
	return b.Call(session, "Animation.setPlaybackRate", map[string]any{"playbackRate": 0}, nil)
}

// Eval evaluates a JavaScript expression in a page and returns its string
// value.
func (b *Browser) Eval(session, expr string) (string, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := b.Call(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return "", err
	}
	return fmt.Sprint(r.Result.Value), nil
}

// WaitFor polls expr until it returns want, or fails after timeout. It
// returns when it first saw want.
func (b *Browser) WaitFor(t testing.TB, session, expr, want string, timeout time.Duration) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got string
	for {
		v, err := b.Eval(session, expr)
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

// Screenshot returns a PNG of the page's viewport.
func (b *Browser) Screenshot(t testing.TB, session string) []byte {
	t.Helper()
	var r struct {
		Data []byte `json:"data"` // base64 in JSON: decoded by encoding/json
	}
	if err := b.Call(session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}

// Close ends the browser (Start registers it with t.Cleanup).
func (b *Browser) Close() {
	_ = b.Call("", "Browser.close", map[string]any{}, nil)
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

// Artifacts is where screenshots go: $NOWSERVING_ARTIFACTS, else a
// temporary directory.
func Artifacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("NOWSERVING_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Shot writes a screenshot of a page to dir/name.
func (b *Browser) Shot(t testing.TB, session, dir, name string) {
	t.Helper()
	png := b.Screenshot(t, session)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("%s: not a PNG", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", filepath.Join(dir, name))
}
