package main

import (
	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/sim"
)

func newSimKeypadCmd(f *simFlags) *cobra.Command {
	var k sim.KeypadOpts
	cmd := &cobra.Command{
		Use:   "keypad --counter ID ACTION [NUMBER]",
		Short: "Press a counter keypad key: next, call, recall, noshow, start, done, transfer, pause, resume, reenter, cancel",
		Long: `keypad acts for one counter, as its keypad (or a console) would:

  next               call the next waiting ticket
  call NUMBER        call a given ticket
  recall [NUMBER]    announce the called ticket again
  noshow [NUMBER]    the called ticket did not come
  start [NUMBER]     start serving the called ticket
  done [NUMBER]      finish serving
  transfer [NUMBER] --to-service B | --to-counter 3
  pause [REASON]     stop calls to this counter
  resume             reopen it
  reenter NUMBER     put a no-show back into the queue
  cancel NUMBER      cancel a ticket (as the console: keypads may not)

Without NUMBER an action applies to the ticket the counter is handling.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: f.runE(func(cmd *cobra.Command, e *sim.Env, args []string) error {
			k := k
			k.Action, k.Arg = args[0], ""
			if len(args) > 1 {
				k.Arg = args[1]
			}
			return e.Keypad(cmd.Context(), k, cmd.OutOrStdout())
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&k.Counter, "counter", "", "counter id, e.g. 5 (required)")
	fl.StringVar(&k.ToService, "to-service", "", "transfer: the service to wait in")
	fl.StringVar(&k.ToCounter, "to-counter", "", "transfer: the counter that must call it")
	fl.StringVar(&k.IdemKey, "idem-key", "", "idempotency key: the same key twice makes one change")
	return cmd
}
