package load

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
)

// hallState is what a day checks of the hall display's "state" events
// (web.DisplayState): its version, the services' waiting counts and the
// last call.
type hallState struct {
	Version  int64 `json:"version"`
	Services []struct {
		Code    string `json:"code"`
		Waiting int    `json:"waiting"`
	} `json:"services"`
	Calls []struct {
		Number  string `json:"number"`
		Counter string `json:"counter"`
	} `json:"calls"`
}

// hall follows the hall display's event stream (GET
// /display/{site}/events) the whole day, as an open TV page does: it keeps
// the latest state and counts the states and the connections it lost.
type hall struct {
	url    string
	states atomic.Int64
	lost   atomic.Int64

	mu    sync.Mutex
	last  hallState
	moved chan struct{} // closed and replaced at each state
}

// watchHall starts following the display stream of site on the daemon's
// HTTP address base until ctx ends.
func watchHall(ctx context.Context, base, site string) *hall {
	h := &hall{url: strings.TrimRight(base, "/") + "/display/" + url.PathEscape(site) + "/events", moved: make(chan struct{})}
	go func() {
		for n := 0; ctx.Err() == nil; n++ {
			if n > 0 {
				h.lost.Add(1)
				_ = backoff.Sleep(ctx, time.Second)
			}
			_ = h.read(ctx)
		}
	}()
	return h
}

// read reads one connection of the stream until it ends.
func (h *hall) read(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: day: %s: %s", h.url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "state":
			var st hallState
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &st); err != nil {
				return fmt.Errorf("bench: day: display state: %w", err)
			}
			h.mu.Lock()
			h.last = st
			close(h.moved)
			h.moved = make(chan struct{})
			h.mu.Unlock()
			h.states.Add(1)
		case line == "":
			event = ""
		}
	}
	return sc.Err()
}

// at waits until the display's state reaches version v (or ctx ends) and
// returns the latest state.
func (h *hall) at(ctx context.Context, v int64) (hallState, error) {
	for {
		h.mu.Lock()
		st, moved := h.last, h.moved
		h.mu.Unlock()
		if st.Version >= v {
			return st, nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return st, fmt.Errorf("bench: day: the display stayed at version %d, want %d: %w", st.Version, v, ctx.Err())
		}
	}
}
