package daemon

import (
	"context"

	"github.com/nowserving/nowserving/queue"
)

// The staff accounts of the open store; before it opens, each call fails
// as unavailable (Store's error).
var _ queue.AccountStore = (*PendingStore)(nil)

// AddAccount creates an account in the open store.
func (p *PendingStore) AddAccount(ctx context.Context, a queue.Account) error {
	st, err := p.Store()
	if err != nil {
		return err
	}
	return st.AddAccount(ctx, a)
}

// SetAccount replaces an account in the open store.
func (p *PendingStore) SetAccount(ctx context.Context, a queue.Account) error {
	st, err := p.Store()
	if err != nil {
		return err
	}
	return st.SetAccount(ctx, a)
}

// Account reads an account from the open store.
func (p *PendingStore) Account(ctx context.Context, name string) (queue.Account, error) {
	st, err := p.Store()
	if err != nil {
		return queue.Account{}, err
	}
	return st.Account(ctx, name)
}

// Accounts lists the accounts of the open store.
func (p *PendingStore) Accounts(ctx context.Context) ([]queue.Account, error) {
	st, err := p.Store()
	if err != nil {
		return nil, err
	}
	return st.Accounts(ctx)
}
