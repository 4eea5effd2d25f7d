package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/nowserving/nowserving/queue"
)

// ErrorsHideDriver checks that the errors of s wrap queue sentinels and
// never a value of the driver's error type (driverErr, a pointer to a
// driver error type such as *pgconn.PgError): a duplicate insert, an
// unknown savepoint and a bad statement.
func ErrorsHideDriver(t *testing.T, s queue.Store, driverErr any) {
	t.Helper()
	target := reflect.TypeOf(driverErr)
	if target == nil || target.Kind() != reflect.Pointer {
		t.Fatalf("ErrorsHideDriver needs a pointer to a driver error type, got %T", driverErr)
	}
	leaks := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if errors.As(err, reflect.New(target).Interface()) { // a **T, as errors.As wants

			t.Errorf("%s: error %v exposes the driver type %s", what, err, target)
		}
	}
	txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 1))
	var dup, sp error
	_ = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		if err := tx.Savepoint(ctx, "leak"); err != nil {
			return err
		}
		dup = tx.InsertTicket(ctx, txTicket("A", 1, queue.ClassNormal, 20, 1))
		if err := tx.RollbackTo(ctx, "leak"); err != nil {
			return err
		}
		sp = tx.RollbackTo(ctx, "never_made")
		return nil
	})
	if !errors.Is(dup, queue.ErrDuplicate) {
		t.Errorf("duplicate insert: %v, want ErrDuplicate", dup)
	}
	leaks("duplicate insert", dup)
	leaks("unknown savepoint", sp)
}
