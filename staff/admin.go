package staff

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// The account management of the admin page (web's /admin): the same
// checks and hashing as `nowserving user`, with the service's costs and
// clock, and the sessions kept in step: a new password or a disabled
// account ends the person's open sessions at once.

// ErrSelf refuses an admin's change that would lock them out of the admin
// page (disabling themselves, or taking the admin role from themselves).
var ErrSelf = errors.New("staff: you cannot disable your own account or take the admin role from it")

// List returns every account by name, with the hashes blanked.
func (sv *Service) List(ctx context.Context) ([]queue.Account, error) {
	as, err := sv.o.Accounts.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for i := range as {
		as[i].Hash = ""
	}
	return as, nil
}

// Create adds account a with password.
func (sv *Service) Create(ctx context.Context, a queue.Account, password string) error {
	return Add(ctx, sv.o.Accounts, a, password, sv.o.Params, sv.o.Clock())
}

// ChangePassword sets name's password and ends its sessions.
func (sv *Service) ChangePassword(ctx context.Context, name, password string) error {
	if err := SetPassword(ctx, sv.o.Accounts, name, password, sv.o.Params, sv.o.Clock()); err != nil {
		return err
	}
	sv.endSessions(name)
	sv.changed(name)
	return nil
}

// ChangeAccess sets name's role, sites and counters; by is the admin
// making the change, who may not take the admin role from themselves.
func (sv *Service) ChangeAccess(ctx context.Context, by, name string, role queue.Role, sites, counters []string) error {
	if by == name && role != queue.RoleAdmin {
		return ErrSelf
	}
	if err := SetAccess(ctx, sv.o.Accounts, Access{Name: name, Role: role, Sites: sites, Counters: counters}, sv.o.Clock()); err != nil {
		return err
	}
	sv.changed(name)
	return nil
}

// ChangeDisabled disables (ending its sessions) or enables name; by may
// not disable themselves.
func (sv *Service) ChangeDisabled(ctx context.Context, by, name string, disabled bool) error {
	if disabled && by == name {
		return ErrSelf
	}
	if err := SetDisabled(ctx, sv.o.Accounts, name, disabled, sv.o.Clock()); err != nil {
		return err
	}
	if disabled {
		sv.endSessions(name)
	}
	sv.changed(name)
	return nil
}

// changed makes the sessions of name read their account again at their
// next request, however recent their copy.
func (sv *Service) changed(name string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.gen++
	for _, s := range sv.byID {
		if s.Name == name {
			s.read = time.Time{}
		}
	}
}

// endSessions ends every session of name.
func (sv *Service) endSessions(name string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	for id, s := range sv.byID {
		if s.Name == name {
			delete(sv.byID, id)
		}
	}
}

// Access is what an account may do: its role, sites and counters.
type Access struct {
	Name     string
	Role     queue.Role
	Sites    []string
	Counters []string
}

// SetAccess replaces the role, sites and counters of the account a.Name,
// checked as CheckAccount does.
func SetAccess(ctx context.Context, st queue.AccountStore, a Access, now time.Time) error {
	cur, err := st.Account(ctx, a.Name)
	if err != nil {
		return err
	}
	cur.Role, cur.Sites, cur.Counters = a.Role, slices.Clone(a.Sites), slices.Clone(a.Counters)
	if err := CheckAccount(cur); err != nil {
		return err
	}
	cur.Updated = now
	return st.SetAccount(ctx, cur)
}
