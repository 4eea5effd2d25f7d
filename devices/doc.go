// Package devices maps committed queue events onto the hardware drivers:
// LED boards (package led), voice announcements (package voice) and ticket
// printers (package escpos), and maps wired keypad presses onto engine
// operations.
//
// The drivers know nothing about the queue; this package is the only one that
// sees both sides. A Dispatcher follows each site's event feed
// (queue.Engine.Subscribe) and turns
//
//   - CALLED and RECALLED into the called number on the counter's board,
//     "A023 -> 5" on the site's hall boards and an announcement in the
//     counter's voice zone (a recall is announced again);
//   - DONE, NO_SHOW, CANCELLED, EXPIRED and TRANSFERRED into a blank (or
//     idle text) on the counter's board; hall boards drop tickets that left
//     the hall (everything but DONE).
//
// On start, and whenever it falls too far behind the feed, it takes a
// Snapshot and shows every counter's current ticket, so boards show the
// current state after a restart.
//
// Device output never blocks the queue: led.Port.Show and
// voice.Announcer.Announce return at once, and the dispatcher reads the feed
// on its own goroutines; a stuck board only delays itself.
//
// Wired keypads (led.KeypadBus) are mapped to counters: key 1 calls the next
// ticket, 2 starts serving it, 4 marks it a no-show, and 3 (redirect) sends
// it back to the head of its own queue, for another counter serving that
// queue to call next. The keypad's 3-character display then shows the last
// three characters of the counter's ticket number ("023"), or "---" when the
// counter has none or the operation was refused.
//
// Tickets for kiosks are rendered with escpos.Render: PrintTicket prints on
// the kiosk's network printer and records PRINT_FAILED when it cannot,
// RenderTicket returns the bytes for kiosks that print themselves, and
// Reprint prints a ticket of today again by number.
package devices
