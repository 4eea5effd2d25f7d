package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Notifier wakes the other daemons of one database with LISTEN/NOTIFY. It
// sends a NOTIFY in its own short transaction after the ticket transaction
// committed, never inside it: a NOTIFY in the ticket transaction would take
// the database-wide notify lock at every commit (DESIGN §7). The payload
// names the sender, the site and its version; the event table stays the
// record, read by version.
//
// It keeps two connections of its own, outside the store's pool: one that
// listens and one that sends, each reopened on the next call after a
// failure. The channel is named after the schema, so daemons on different
// schemas of one database do not wake each other.
type Notifier struct {
	dsn string
	id  string // this daemon's instance, to skip its own notifications

	mu     sync.Mutex
	sender *pgx.Conn
	ch     string
}

var _ queue.Notifier = (*Notifier)(nil)

// NewNotifier returns a notifier for the database at dsn (as Open takes
// it, with the default connect time-out unless dsn sets one). It connects
// on first use.
func NewNotifier(dsn string) *Notifier {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return &Notifier{dsn: dsn, id: hex.EncodeToString(b[:])}
}

// connect opens a connection and names the channel of its schema.
func (n *Notifier) connect(ctx context.Context) (*pgx.Conn, string, error) {
	cfg, err := ParseConfig(n.dsn, 0)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: notifier: %w", err)
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: notifier: connect: %w", Dialect().Err(err))
	}
	var schema string
	if err := c.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		_ = c.Close(context.Background())
		return nil, "", fmt.Errorf("postgres: notifier: read schema: %w", Dialect().Err(err))
	}
	return c, "nowserving " + schema, nil
}

// maxPayload bounds one notification's payload, under PostgreSQL's 8000
// bytes: more sites go in several.
const maxPayload = 7900

// Notify sends the sites' new versions to the daemons listening: one
// NOTIFY (one statement) for all of them, several only past maxPayload.
// The payload is "sender site version site version ...": site ids have
// no spaces (queue.Site.Validate).
func (n *Notifier) Notify(ctx context.Context, versions map[string]int64) error {
	if len(versions) == 0 {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sender == nil {
		c, ch, err := n.connect(ctx)
		if err != nil {
			return err
		}
		n.sender, n.ch = c, ch
	}
	var payloads []string
	b := []byte(n.id)
	for site, v := range versions {
		if len(b)+len(site)+22 > maxPayload {
			payloads, b = append(payloads, string(b)), []byte(n.id)
		}
		b = append(append(append(b, ' '), site...), ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	payloads = append(payloads, string(b))
	for _, p := range payloads {
		if _, err := n.sender.Exec(ctx, "SELECT pg_notify($1, $2)", n.ch, p); err != nil {
			_ = n.sender.Close(context.Background())
			n.sender = nil
			return fmt.Errorf("postgres: notify %d sites: %w", len(versions), Dialect().Err(err))
		}
	}
	return nil
}

// listenCheck is how long Listen waits for a notification before it
// makes sure the server still answers (a ping within
// sqlstore.DefaultConnectTimeout): a server that hangs (a frozen primary)
// sends nothing and closes nothing, and without the check the listener
// would wait on it for ever while the daemon's store has moved to
// another host. A variable so tests can shorten it.
var listenCheck = 5 * time.Second

// Listen listens on a connection of its own until ctx ends or it fails; a
// server that does not answer the ping after a quiet listenCheck fails it.
func (n *Notifier) Listen(ctx context.Context, ready func(), fn func(site string, version int64)) error {
	c, ch, err := n.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: listen: %w", Dialect().Err(err))
	}
	ready()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenCheck)
		m, err := c.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !c.IsClosed() {
			// Quiet for listenCheck (pgx keeps the connection after a
			// time-out): is the server still there?
			pctx, cancel := context.WithTimeout(ctx, sqlstore.DefaultConnectTimeout)
			err = c.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
			return fmt.Errorf("postgres: listen: no answer to a ping after %s without notifications: %w", listenCheck, Dialect().Err(err))
		}
		if err != nil {
			return fmt.Errorf("postgres: wait for notification: %w", Dialect().Err(err))
		}
		n.parse(m.Payload, fn)
	}
}

// parse reads "sender site version site version ...", skipping this
// daemon's own, and calls fn for each site.
func (n *Notifier) parse(p string, fn func(site string, version int64)) {
	f := strings.Fields(p)
	if len(f) < 3 || f[0] == n.id {
		return
	}
	for i := 1; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseInt(f[i+1], 10, 64); err == nil {
			fn(f[i], v)
		}
	}
}

// Close closes the sending connection (Listen closes its own when its
// context ends).
func (n *Notifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sender == nil {
		return nil
	}
	err := n.sender.Close(context.Background())
	n.sender = nil
	return err
}
