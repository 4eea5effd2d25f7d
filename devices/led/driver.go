package led

import "fmt"

// DriverOpts names a driver and its options, as a config file would; only
// the options of the named Kind are used.
type DriverOpts struct {
	// Kind is "modbus", "onbon", "alpha" or "template".
	Kind     string
	Modbus   ModbusOpts
	Onbon    OnbonOpts
	Alpha    AlphaOpts
	Template TemplateOpts
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
		return nil, fmt.Errorf("led: driver kind %q: want modbus, onbon, alpha or template", o.Kind)
	}
}
