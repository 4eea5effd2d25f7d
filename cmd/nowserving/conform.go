package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/conform"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// conformLong is the help of the conform group.
const conformLong = `conform is the conformance kit for device makers. "conform kiosk", "conform
keypad" and "conform display" play the daemon for the device under test,
which connects to --listen; "conform daemon" plays devices against a daemon.
Each prints a pass/fail report per section of protocol/PROTOCOL.md and exits
1 when a check fails. "conform api" plays a hospital's system against the
daemon's HTTP API and reports per operation of web/openapi.yaml.`

// newConformDeviceCmd is "conform kiosk|keypad|display".
func newConformDeviceCmd(role wire.Role) *cobra.Command {
	o := conform.DeviceOpts{Role: role}
	var listen, secret string
	var tlsFiles config.TLS
	cmd := &cobra.Command{
		Use:   role.String() + " --listen ADDR --secret SECRET [--tls-cert FILE --tls-key FILE]",
		Short: fmt.Sprintf("Play the daemon for a %s under test and report how it conforms", role),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if secret == "" {
				return fmt.Errorf("conform %s: --secret is required (the secret configured in the device)", role)
			}
			o.Secret, o.Prompt = []byte(secret), cmd.ErrOrStderr()
			if (tlsFiles.Cert == "") != (tlsFiles.Key == "") {
				return fmt.Errorf("conform %s: give both --tls-cert and --tls-key, or neither", role)
			}
			tc, err := tlsConfig(tlsFiles)
			if err != nil {
				return fmt.Errorf("conform %s: %w", role, err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("conform %s: %w", role, err)
			}
			over := "TCP"
			if tc != nil {
				// The device's TLS, as the daemon's listen.tls serves it.
				ln, over = tls.NewListener(ln, tc), "TLS"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: point the %s at %s over %s (device id %q)\n", role, ln.Addr(), over, o.DeviceID)
			rep, err := conform.Device(cmd.Context(), ln, o)
			return printConformance(cmd, rep, err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&listen, "listen", "127.0.0.1:7400", "address the device under test connects to")
	fs.StringVar(&o.DeviceID, "device", "", "device id the device must send (default: any)")
	fs.StringVar(&secret, "secret", "", "the device's secret")
	fs.DurationVar(&o.Heartbeat, "heartbeat", 500*time.Millisecond, "heartbeat interval announced in WELCOME")
	fs.DurationVar(&o.Wait, "wait", 30*time.Second, "how long to wait for the device to connect or send (a person may press a key)")
	fs.StringVar(&tlsFiles.Cert, "tls-cert", "", "serve TLS with this certificate (PEM), for a device that connects over TLS")
	fs.StringVar(&tlsFiles.Key, "tls-key", "", "the certificate's private key (PEM)")
	return cmd
}

// newConformDaemonCmd is "conform daemon".
func newConformDaemonCmd() *cobra.Command {
	var (
		o                   conform.DaemonOpts
		ids, secrets, roles []string
		tlsOn, tlsInsecure  bool
		tlsCA               string
	)
	cmd := &cobra.Command{
		Use:   "daemon --addr ADDR --device ID --secret SECRET [--role ROLE] ...",
		Short: "Play devices against a daemon and report how it conforms",
		Long: `daemon plays each --device (with its --secret and --role, in the order given;
default roles: kiosk, then display) against the daemon at --addr. A kiosk (or
console) and a display together run every check. It takes tickets and
pauses a keypad's counter: point it at a test site.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			creds, err := conform.Credentials(ids, secrets, roles)
			if err != nil {
				return err
			}
			if o.TLS, err = sim.TLSConfig(tlsOn, tlsCA, tlsInsecure); err != nil {
				return err
			}
			o.Devices = creds
			rep, err := conform.Daemon(cmd.Context(), o)
			return printConformance(cmd, rep, err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Addr, "addr", defaultAddr, "daemon protocol address")
	fs.StringArrayVar(&ids, "device", nil, "device id (repeat for several devices)")
	fs.StringArrayVar(&secrets, "secret", nil, "the device's secret (one per --device)")
	fs.StringArrayVar(&roles, "role", nil, "the device's role: kiosk, keypad, display or console (one per --device)")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Second, "time-out of each answer")
	tlsClientFlags(fs, &tlsOn, &tlsCA, &tlsInsecure)
	return cmd
}

// newConformAPICmd is "conform api".
func newConformAPICmd() *cobra.Command {
	var (
		o            conform.APIOpts
		hook, secret string
	)
	cmd := &cobra.Command{
		Use:   "api --url URL --token TOKEN --site SITE --resource RESOURCE [--webhook-listen ADDR --webhook-secret S]",
		Short: "Play a hospital's system against the daemon's HTTP API and report per openapi.yaml operation",
		Long: `api books the first free slot of --resource (today or tomorrow) at --site and
plays the appointments API around it: slots, booking, a replay, a reused key,
a full slot, malformed bodies, holding, confirming, cancelling and checking
in. With --webhook-listen it serves the webhook the daemon's notify.webhooks
points at (with --webhook-secret) and checks the booking's BOOKING_BOOKED.
It books and checks in: point it at a test site whose check-in window is open.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hook != "" {
				if secret == "" {
					return errors.New("conform api: --webhook-secret is required with --webhook-listen (the webhook's secret)")
				}
				ln, err := net.Listen("tcp", hook)
				if err != nil {
					return fmt.Errorf("conform api: %w", err)
				}
				defer ln.Close()
				o.Webhook, o.WebhookSecret = ln, []byte(secret)
			}
			rep, err := conform.API(cmd.Context(), o)
			return printConformance(cmd, rep, err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.URL, "url", "http://127.0.0.1:7480", "the daemon's HTTP address")
	fs.StringVar(&o.Token, "token", "", "an API bearer token (http.tokens) allowed on the site")
	fs.StringVar(&o.Site, "site", "", "the test site")
	fs.StringVar(&o.Resource, "resource", "", "a bookable resource of the site with free slots today or tomorrow")
	fs.StringVar(&hook, "webhook-listen", "", "serve the webhook receiver here (the daemon's notify.webhooks url)")
	fs.StringVar(&secret, "webhook-secret", "", "the webhook's secret")
	fs.DurationVar(&o.Wait, "wait", 30*time.Second, "how long to wait for the webhook")
	return cmd
}

// printConformance prints rep and exits 1 when a check failed.
func printConformance(cmd *cobra.Command, rep *conform.Report, err error) error {
	if rep != nil {
		if _, werr := rep.WriteTo(cmd.OutOrStdout()); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if len(rep.Failed()) > 0 {
		return exitError(1)
	}
	return nil
}
