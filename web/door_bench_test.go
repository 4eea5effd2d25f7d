package web

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkShedConn: the door's answer to a connection past its queue, a
// slot list's request read and the canned 429 written, over a pipe.
func BenchmarkShedConn(b *testing.B) {
	const req = "GET /api/v1/sites/scale/slots?resource=dr-0001&date=2026-12-10 HTTP/1.1\r\n" +
		"Host: 127.0.0.1:7483\r\nAuthorization: Bearer scale-bench-token-0123\r\nUser-Agent: Go-http-client/1.1\r\n\r\n"
	b.ReportAllocs()
	for b.Loop() {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { shedConn(server, 5*time.Second); close(done) }()
		go client.Write([]byte(req))
		resp, err := http.ReadResponse(bufio.NewReader(client), nil)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(resp.Header.Get("Retry-After"), "1") {
			b.Fatalf("shed answer %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		resp.Body.Close()
		client.Close()
		<-done
	}
}
