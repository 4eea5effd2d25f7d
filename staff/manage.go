package staff

import (
	"context"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// Add creates account a with password (hashed with p); a.Hash is ignored.
func Add(ctx context.Context, st queue.AccountStore, a queue.Account, password string, p Params, now time.Time) error {
	if err := CheckAccount(a); err != nil {
		return err
	}
	h, err := Hash(password, p)
	if err != nil {
		return err
	}
	a.Hash, a.Created, a.Updated = h, now, now
	return st.AddAccount(ctx, a)
}

// SetPassword replaces the password of the account named name.
func SetPassword(ctx context.Context, st queue.AccountStore, name, password string, p Params, now time.Time) error {
	a, err := st.Account(ctx, name)
	if err != nil {
		return err
	}
	if a.Hash, err = Hash(password, p); err != nil {
		return err
	}
	a.Updated = now
	return st.SetAccount(ctx, a)
}

// SetDisabled disables (or enables again) the account named name; a
// disabled account's sessions end at their next action.
func SetDisabled(ctx context.Context, st queue.AccountStore, name string, disabled bool, now time.Time) error {
	a, err := st.Account(ctx, name)
	if err != nil {
		return err
	}
	a.Disabled, a.Updated = disabled, now
	return st.SetAccount(ctx, a)
}
