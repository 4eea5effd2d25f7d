package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// maxMergedArgs bounds the parameters of one merged statement, well under
// PostgreSQL's 65,535.
const maxMergedArgs = 30000

// pendingWrite is a statement of a transaction whose answer nothing
// reads: after DeferWrites, where the dialect merges writes
// (Dialect.MergeWrites), it waits in the transaction and goes with the others waiting, as one statement, before
// the next statement of the transaction or its COMMIT.
type pendingWrite struct {
	st     Stmt
	action string // what it does, for its error
	// site is the site whose version row it updates, if any: two updates
	// of one row must not share a statement (PostgreSQL would apply one).
	site string
}

// DeferWrites lets the transaction hold the writes whose answer nothing
// reads, to send them merged (Dialect.MergeWrites).
func (t *tx) DeferWrites() { t.hold = true }

// merging reports whether writes wait for the next flush.
func (t *tx) merging() bool { return t.hold && t.s.d.MergeWrites }

// later keeps w for the next flush (Dialect.MergeWrites), flushing those
// waiting first when w would make the statement too long or update a row
// one of them updates.
func (t *tx) later(ctx context.Context, w pendingWrite) error {
	if err := t.alive(); err != nil {
		return err
	}
	if t.pendingArgs+len(w.st.Args) > maxMergedArgs ||
		(w.site != "" && slices.ContainsFunc(t.pending, func(p pendingWrite) bool { return p.site == w.site })) {
		if err := t.flush(ctx); err != nil {
			return err
		}
	}
	t.pending = append(t.pending, w)
	t.pendingArgs += len(w.st.Args)
	return nil
}

// flush sends the writes waiting, in the order they were made, as one
// statement: the first ones as data-modifying WITH clauses of the last,
// which PostgreSQL runs each exactly once and to completion. None of them
// reads a table (inserts, and the version bump of a row the transaction
// locked already), so the one snapshot they share sees what each saw
// alone.
func (t *tx) flush(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	ws := t.pending
	t.pending, t.pendingArgs = nil, 0
	if err := t.alive(); err != nil {
		return err
	}
	st, action := merged(ws)
	if _, err := t.tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
		return t.wrap(action, err)
	}
	return nil
}

// merged is ws as one statement, and the action it names in its error.
func merged(ws []pendingWrite) (Stmt, string) {
	if len(ws) == 1 {
		return ws[0].st, ws[0].action
	}
	var b strings.Builder
	var args []any
	actions := make([]string, len(ws))
	for i, w := range ws {
		actions[i] = w.action
		if i == 0 {
			b.WriteString("WITH ")
		} else if i < len(ws)-1 {
			b.WriteString(", ")
		} else {
			b.WriteString(" ")
		}
		text := shiftParams(w.st.SQL, len(args))
		if i < len(ws)-1 {
			b.WriteString("w" + strconv.Itoa(i) + " AS (" + text + ")")
		} else {
			b.WriteString(text)
		}
		args = append(args, w.st.Args...)
	}
	return Stmt{b.String(), args}, strings.Join(actions, ", ")
}

// shiftParams adds off to the number of every $n placeholder of q (whose
// texts hold no $ but in placeholders).
func shiftParams(q string, off int) string {
	if off == 0 {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + len(q)/8)
	for i := 0; i < len(q); i++ {
		if q[i] != '$' {
			b.WriteByte(q[i])
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(q[i+1 : j])
		if err != nil {
			b.WriteByte(q[i])
			continue
		}
		b.WriteString("$" + strconv.Itoa(n+off))
		i = j - 1
	}
	return b.String()
}
