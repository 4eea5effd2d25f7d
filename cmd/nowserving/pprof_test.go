package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestPprofLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "example.com:6060", "127.0.0.1"} {
		if p, err := listenPprof(context.Background(), addr); err == nil {
			p.ln.Close()
			t.Errorf("listenPprof(%q): no error, want a refusal", addr)
		}
	}
}

func TestPprofServes(t *testing.T) {
	p, err := listenPprof(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background()) }()
	resp, err := http.Get("http://" + p.ln.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "nowserving") {
		t.Errorf("GET /debug/pprof/cmdline: %d %q, want 200 and the command line", resp.StatusCode, b)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run after Shutdown: %v, want nil", err)
	}
}
