// Package tui is the operator console of nowserving, a Bubble Tea terminal
// UI for supervisors (DESIGN.md §4, issue 5).
//
// The Model is pure: state, Update and View. What the daemon says reaches
// it as messages (SnapshotMsg, EventMsg, StateMsg, ConnMsg) produced by
// RunSite, a small adapter that reads a protocol/client subscription; what
// the supervisor does leaves it as tea.Cmd values that call Conn.Do, which
// *client.Client implements. Tests drive the model with messages and a
// recording Conn, without a terminal.
//
// The console shows, per site, the services (waiting, longest wait, average
// wait, served, no-shows, open or closed, over the wait target), the
// counters (state, ticket, for how long, served today, when their keypad
// last acted), the event stream with a filter and the devices reported
// offline. With Opts.Counter it is the software keypad of one counter.
//
// Its figures are not its own: they are a view.Site, the reducer every
// reader of the daemon uses, started from the site's SNAPSHOT and fed each
// EVENT after it (turned back into queue values by protocol.QueueEvent), so
// the console shows what the daemon's snapshot, metrics and report say.
// The history replayed after the first snapshot replaces it when it
// accounts for all of today's tickets; the console then knows each
// waiting ticket, not only the longest wait.
package tui
