package queue

import (
	"context"
	"errors"
	"time"
)

// Role is what a staff account may do in the browser pages.
type Role string

// The roles, from least to most: a counter clerk acts at the counters
// given to them; a supervisor acts at every counter of their sites; an
// admin also manages accounts.
const (
	RoleCounter    Role = "counter"
	RoleSupervisor Role = "supervisor"
	RoleAdmin      Role = "admin"
)

// Roles lists the roles in order.
var Roles = []Role{RoleCounter, RoleSupervisor, RoleAdmin}

// Account is a person who logs in to the browser pages. Hash is the
// password's argon2id hash in PHC form (package staff); the password
// itself is never stored.
type Account struct {
	Name     string
	Hash     string
	Role     Role
	Sites    []string // sites the account may act on; empty: every site
	Counters []string // for RoleCounter: the counter ids it may act at
	Disabled bool
	Created  time.Time
	Updated  time.Time
}

// Accounts errors.
var (
	ErrUnknownAccount = errors.New("queue: unknown account")
	ErrAccountExists  = errors.New("queue: account exists")
)

// AccountStore keeps the staff accounts (every store implements it).
type AccountStore interface {
	// AddAccount creates a; ErrAccountExists when the name is taken.
	AddAccount(ctx context.Context, a Account) error
	// SetAccount replaces the account of a.Name; ErrUnknownAccount when
	// there is none.
	SetAccount(ctx context.Context, a Account) error
	// Account reads one account; ErrUnknownAccount when there is none.
	Account(ctx context.Context, name string) (Account, error)
	// Accounts lists every account by name.
	Accounts(ctx context.Context) ([]Account, error)
}
