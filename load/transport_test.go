package load

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTransports: the bench's transports ask for gzip, as a browser does;
// bookTransport inflates the answer (its lists are read), readTransport
// leaves it as the server sent it, and leaves the request as it was.
func TestTransports(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(`{"slots":[]}`))
	zw.Close()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "Accept-Encoding "+r.Header.Get("Accept-Encoding"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	t.Cleanup(hs.Close)
	rt := readTransport(2)
	t.Cleanup(rt.tr.CloseIdleConnections)
	bt := bookTransport(2)
	t.Cleanup(bt.CloseIdleConnections)
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
		want []byte
	}{{"bookTransport", bt, []byte(`{"slots":[]}`)}, {"readTransport", rt, zipped.Bytes()}} {
		req, err := http.NewRequest("GET", hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: c.rt}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, c.want) {
			t.Errorf("%s: %d, %v, body %q, want %q", c.name, resp.StatusCode, err, body, c.want)
		}
		if len(req.Header) != 0 {
			t.Errorf("%s: the request's header is now %v", c.name, req.Header)
		}
	}
}
