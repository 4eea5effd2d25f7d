package web

import (
	"context"
	"testing"
)

// TestBoardsShared: counter pages reading after the same event share one
// snapshot; an event after it is in the next read, never hidden by the
// shared copy.
func TestBoardsShared(t *testing.T) {
	e := newEnv(t, nil)
	e.issue("A")
	ctx := context.Background()
	site, err := e.eng.Site("main")
	if err != nil {
		t.Fatal(err)
	}
	s1, l1, err := e.srv.boards.read(ctx, e.eng, site, []string{"A"})
	if err != nil {
		t.Fatal(err)
	}
	s2, l2, err := e.srv.boards.read(ctx, e.eng, site, []string{"A", "F"})
	if err != nil {
		t.Fatal(err)
	}
	if &s1.Services[0] != &s2.Services[0] || len(l1["A"]) != 1 || len(l2["A"]) != 1 || len(l2["F"]) != 0 {
		t.Fatalf("not shared at one version: %p %p, lists %v %v", &s1.Services[0], &s2.Services[0], l1, l2)
	}
	e.issue("A")
	s3, l3, err := e.srv.boards.read(ctx, e.eng, site, []string{"A"})
	if err != nil {
		t.Fatal(err)
	}
	if s3.Version != s1.Version+1 || len(l3["A"]) != 2 || s3.Services[0].Waiting != 2 {
		t.Fatalf("after an event: version %d (was %d), %d listed, %d waiting", s3.Version, s1.Version, len(l3["A"]), s3.Services[0].Waiting)
	}
}
