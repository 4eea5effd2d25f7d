package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// answered records what the test servers answered, per route of the mux:
// the statuses and problem codes the tests made the server produce, which
// TestMain holds against openapi.yaml (TestOpenAPIAnswers).
var answered = &answers{seen: map[answer]bool{}}

// answer is one kind of answer: the route's pattern ("POST
// /api/v1/sites/{site}/appointments"; "" when no route matched, or for a
// problem produced by writeError alone), the status and the problem code.
type answer struct {
	route  string
	status int
	code   string
}

type answers struct {
	mu   sync.Mutex
	seen map[answer]bool
}

func (a *answers) add(x answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen[x] = true
}

func (a *answers) all() []answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]answer, 0, len(a.seen))
	for x := range a.seen {
		out = append(out, x)
	}
	return out
}

// wrap returns srv's handler, recording each answer.
func (a *answers) wrap(srv *Server) http.Handler {
	h := srv.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := srv.mux.Handler(r)
		rw := &recorder{statusWriter: statusWriter{ResponseWriter: w}}
		h.ServeHTTP(rw, r)
		a.add(rw.answer(route))
	})
}

// recorder is the server's statusWriter that also keeps the start of the
// body of an answer.
type recorder struct {
	statusWriter
	head bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.head.Len() < 4096 {
		r.head.Write(b[:min(len(b), 4096-r.head.Len())])
	}
	return r.statusWriter.Write(b)
}

func (r *recorder) answer(route string) answer {
	x := answer{route: route, status: r.code}
	if x.status == 0 {
		x.status = http.StatusOK
	}
	if strings.HasPrefix(r.Header().Get("Content-Type"), "application/problem+json") {
		var p Problem
		_ = json.Unmarshal(r.head.Bytes(), &p)
		x.code = p.Code
	}
	return x
}
