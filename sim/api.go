package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// API sends requests to the daemon's HTTP API as the hospital's system
// would: a JSON body, the bearer token, an optional Idempotency-Key. The
// booking simulator and the booking benchmark (package load) both use it.
type API struct {
	URL    string       // the daemon's HTTP base, e.g. http://127.0.0.1:7480
	Token  string       // API bearer token
	Client *http.Client // nil: http.DefaultClient
}

// Do sends method path with body (nil: none) as JSON, and key as the
// Idempotency-Key unless it is empty, and returns the answer's status and
// body. An answer of any status is not an error.
func (a API) Do(ctx context.Context, method, path string, body any, key string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.URL, "/")+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	hc := a.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, b, nil
}
