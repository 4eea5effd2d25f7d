package main

import (
	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/sim"
)

func newSimBookCmd(f *simFlags) *cobra.Command {
	var o sim.BookOpts
	cmd := &cobra.Command{
		Use:   "book --resource ID --patient REF",
		Short: "Book a slot over the HTTP API, as the hospital's system would, and print the booking code",
		Long: `book asks the daemon's HTTP API (listen.http of --config, with its first
token, unless --url and --token say otherwise) for the slots of --resource on
--date (default today), books the one at --at (HH:MM) or the first free one
for --patient, and prints the booking and its code, which a kiosk checks in
with: nowserving sim kiosk --check-in CODE.`,
		Args: cobra.NoArgs,
		RunE: runOpts(f, &o, (*sim.Env).Book),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.URL, "url", "", "the daemon's HTTP address (default: http:// + listen.http)")
	fl.StringVar(&o.Token, "token", "", "API bearer token (default: the first of the configuration)")
	fl.StringVar(&o.Site, "site", "", "site (default: the first of the configuration)")
	fl.StringVar(&o.Resource, "resource", "", "resource to book, e.g. dr-li (required)")
	fl.StringVar(&o.Date, "date", "", "day, YYYY-MM-DD (default: today at the site)")
	fl.StringVar(&o.At, "at", "", "slot start, HH:MM (default: the first free slot)")
	fl.StringVar(&o.Patient, "patient", "", "the patient's reference in the hospital's system (required)")
	fl.BoolVar(&o.Hold, "hold", false, "hold the place (HELD), to confirm within the site's hold time")
	fl.StringVar(&o.IdemKey, "idem-key", "", "idempotency key: the same key twice gives the same booking (default: a fresh one)")
	return cmd
}
