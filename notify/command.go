package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Command delivers a message by running Run with /bin/sh -c, the message's
// JSON body on its standard input and these variables in its environment:
// NOWSERVING_EVENT_ID, NOWSERVING_EVENT_TYPE, NOWSERVING_SITE,
// NOWSERVING_VERSION, NOWSERVING_ATTEMPT. Exit status 0 means delivered;
// any other status, or running past the attempt's timeout (the command and
// its children are then killed), is a failure carrying the start of its
// standard error.
type Command struct {
	Run string
}

// stderrKept is how much of a failed command's standard error its error
// carries.
const stderrKept = 512

// Deliver runs the command for m.
func (c *Command) Deliver(ctx context.Context, m *sqlstore.OutboxMessage) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Run)
	cmd.Stdin = bytes.NewReader(m.Body)
	cmd.Env = append(cmd.Environ(),
		"NOWSERVING_EVENT_ID="+m.EventID,
		"NOWSERVING_EVENT_TYPE="+string(m.Type),
		"NOWSERVING_SITE="+m.Site,
		"NOWSERVING_VERSION="+strconv.FormatInt(m.Version, 10),
		"NOWSERVING_ATTEMPT="+strconv.Itoa(m.Attempt))
	var stderr headBuffer
	cmd.Stderr = &stderr
	killGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(stderr.String())
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("notify: command %q: no answer in time (killed): %w", c.Run, ctx.Err())
	case errors.As(err, &ee) && ee.Exited():
		err = fmt.Errorf("notify: command %q exited with status %d", c.Run, ee.ExitCode())
	default:
		err = fmt.Errorf("notify: command %q: %w", c.Run, err)
	}
	if msg != "" {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// headBuffer keeps the first stderrKept bytes written to it.
type headBuffer struct{ bytes.Buffer }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := stderrKept - h.Len(); room > 0 {
		h.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
