package protocol

import (
	"fmt"

	"github.com/nowserving/nowserving/protocol/wire"
)

// errDeviceRemoved closes the sessions of a device SetDevices removed: the
// device is told, as at a refused login, that it is not known.
var errDeviceRemoved = wire.ErrAuthFailed.WithMsg("device removed from the configuration")

// errDeviceChanged closes the sessions of a device whose role, site or
// counter SetDevices changed: retryable, so it logs in again at once with
// its new binding.
var errDeviceChanged = wire.ErrBusy.WithMsg("device configuration changed: log in again")

// deviceTable checks the configured devices and indexes them by id.
func (s *Server) deviceTable(in []Device) (map[string]*device, error) {
	devs := make(map[string]*device, len(in))
	for _, dv := range in {
		if err := s.addDevice(devs, dv); err != nil {
			return nil, fmt.Errorf("protocol: device %q: %w", dv.ID, err)
		}
	}
	return devs, nil
}

// device returns the configured device id.
func (s *Server) device(id string) (*device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.devices[id]
	return d, ok
}

// SetDevices replaces the devices that may connect, while the server runs
// (a configuration reload). Invalid devices are refused with the same
// errors as New, and the running ones stay. Sessions of a device that is
// gone are closed (ERROR 0x10); sessions of a device whose role, site or
// counter changed are closed with a retryable ERROR 0x31 so the device
// logs in again under its new binding; every other session stays
// connected, and a changed secret applies at the device's next login. It
// returns how many sessions it closed.
func (s *Server) SetDevices(in []Device) (closed int, err error) {
	devs, err := s.deviceTable(in)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, nd := range devs {
		if od, ok := s.devices[id]; ok && sameBinding(od, nd) {
			nd.bucket = od.bucket // a reload does not refill a device's rate budget
		}
	}
	s.devices = devs
	for ss := range s.sessions {
		if !ss.authed {
			continue
		}
		nd, ok := devs[ss.dev.ID]
		switch {
		case !ok:
			ss.kill(errDeviceRemoved, "device removed")
		case !sameBinding(ss.dev, nd):
			ss.kill(errDeviceChanged, "device changed")
		default:
			continue
		}
		closed++
	}
	return closed, nil
}

// sameBinding reports whether a and b allow the same session: same role,
// site and counter.
func sameBinding(a, b *device) bool {
	return a.Role == b.Role && a.Site == b.Site && a.Counter == b.Counter
}
