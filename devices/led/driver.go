package led

import (
	"fmt"
	"slices"
	"strings"
)

// DriverOpts names a driver and its options, as a config file writes them:
// the mapstructure tags of DriverOpts and of the Opts of each kind are the
// configuration's keys (led.ports[].driver.start), and the kinds share one
// flat set of keys, so package config decodes a driver straight into a
// DriverOpts. Only the options of the named Kind are used.
type DriverOpts struct {
	// Kind is "modbus", "onbon", "alpha" or "template".
	Kind     string       `mapstructure:"kind"`
	Modbus   ModbusOpts   `mapstructure:",squash"`
	Onbon    OnbonOpts    `mapstructure:",squash"`
	Alpha    AlphaOpts    `mapstructure:",squash"`
	Template TemplateOpts `mapstructure:",squash"`
}

// kinds are the driver kinds, in the order the messages list them.
const kinds = "modbus, onbon, alpha or template"

// Check returns nil or an error holding OptErrors: every option of the
// named kind that its driver refuses, each naming its key. NewDriver
// refuses the same options for the same reasons.
func (o DriverOpts) Check() error {
	switch o.Kind {
	case "modbus":
		return o.Modbus.Check()
	case "onbon":
		return o.Onbon.Check()
	case "alpha":
		return o.Alpha.Check()
	case "template":
		return o.Template.Check()
	case "":
		return fmt.Errorf("led: driver: %w", OptErrors{{Key: "kind", Msg: "required: " + kinds}})
	default:
		return fmt.Errorf("led: driver: %w", OptErrors{{Key: "kind", Msg: fmt.Sprintf("must be %s, got %q", kinds, o.Kind)}})
	}
}

// WantsReply reports whether the named kind's boards answer each frame,
// so that a line that never answers (file:) cannot carry them.
func (o DriverOpts) WantsReply() bool {
	return o.Kind == "modbus" || o.Kind == "onbon" && o.Onbon.WantReply
}

// NewDriver builds the driver named by o.Kind.
func NewDriver(o DriverOpts) (Driver, error) {
	switch o.Kind {
	case "modbus":
		return NewModbus(o.Modbus)
	case "onbon":
		return NewOnbon(o.Onbon)
	case "alpha":
		return NewAlpha(o.Alpha)
	case "template":
		return NewTemplate(o.Template)
	default:
		return nil, o.Check()
	}
}

// OptError is one driver option refused by the driver's check.
type OptError struct {
	// Key is the option's configuration key, e.g. "start".
	Key string
	// Msg says why, e.g. "must be 0..65535, got 70000".
	Msg string
}

// Error formats the error as "key: msg".
func (e *OptError) Error() string { return e.Key + ": " + e.Msg }

// OptErrors lists every option a driver's check refuses, in the order of
// the driver's options. Get it from a Check or New* error with errors.As.
type OptErrors []*OptError

// Error joins the problems with "; ".
func (es OptErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (es *OptErrors) add(key, format string, args ...any) {
	*es = append(*es, &OptError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// oneOf refuses a v that is set and not one of allowed.
func (es *OptErrors) oneOf(key, v string, allowed ...string) {
	if v != "" && !slices.Contains(allowed, v) {
		es.add(key, "must be %s, got %q", strings.Join(allowed, ", "), v)
	}
}

// inRange refuses a v outside lo..hi; def, when not "", is the default
// that 0 stands for.
func (es *OptErrors) inRange(key string, v, lo, hi int, def string) {
	if v == 0 && def != "" || v >= lo && v <= hi {
		return
	}
	if def != "" {
		es.add(key, "must be %d..%d (0: %s), got %d", lo, hi, def, v)
		return
	}
	es.add(key, "must be %d..%d, got %d", lo, hi, v)
}

// err returns nil, or the problems as the error of the kind's check.
func (es OptErrors) err(kind string) error {
	if len(es) == 0 {
		return nil
	}
	return fmt.Errorf("led: %s: %w", kind, es)
}

// checkAddr refuses an address outside lo..hi, the range the protocol of
// the named device (a driver kind, "keypad") carries.
func checkAddr(device string, addr, lo, hi int) error {
	if addr < lo || addr > hi {
		return fmt.Errorf("led: %s address %d: %w (%d-%d)", device, addr, ErrAddress, lo, hi)
	}
	return nil
}
