package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestReclaim: the pages the purge of request results frees go back to
// the file system: the file shrinks and no page is left free.
func TestReclaim(t *testing.T) {
	t.Parallel()
	s := storetest.SQLite(t)
	ctx := t.Context()
	big := []byte(`{"ID":1,"Site":"` + strings.Repeat("x", 2000) + `"}`)
	for i := range 20 {
		var saves []queue.SavedRequest
		for j := range 100 {
			saves = append(saves, queue.SavedRequest{RequestKey: queue.RequestKey{Device: "k", Key: fmt.Sprint(i, "-", j)}, Op: "issue A", Result: big, AtMs: 1})
		}
		if err := s.Update(ctx, func(ctx context.Context, tx queue.Tx) error { return tx.SaveRequests(ctx, saves) }); err != nil {
			t.Fatal(err)
		}
	}
	pages := func() (count, free int) {
		t.Helper()
		return pragma[int](t, s, "page_count"), pragma[int](t, s, "freelist_count")
	}
	full, _ := pages()
	for {
		n, err := s.PurgeRequests(ctx, time.UnixMilli(2), 500)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	_, free := pages()
	got, err := s.Reclaim(ctx)
	if err != nil || got != free || free < full/2 {
		t.Errorf("Reclaim = %d, %v; want the %d free pages of %d", got, err, free, full)
	}
	if count, free := pages(); free != 0 || count > full/4 {
		t.Errorf("after Reclaim: %d pages, %d free; was %d pages", count, free, full)
	}
}
