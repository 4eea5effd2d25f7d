package conform

import (
	"errors"
	"fmt"

	"github.com/nowserving/nowserving/protocol/wire"
)

// ParseRole returns the role named s: kiosk, keypad, display or console.
func ParseRole(s string) (wire.Role, error) {
	if r, ok := wire.RoleNamed(s); ok {
		return r, nil
	}
	return 0, fmt.Errorf("conform: role %q: want kiosk, keypad, display or console", s)
}

// Credentials pairs the i-th id with the i-th secret and role (a role
// left out is kiosk for the first device, display for the others).
func Credentials(ids, secrets, roles []string) ([]Credential, error) {
	if len(ids) == 0 {
		return nil, errors.New("conform: give a device: --device ID --secret SECRET [--role ROLE]")
	}
	if len(secrets) != len(ids) || len(roles) > len(ids) {
		return nil, fmt.Errorf("conform: %d --device, %d --secret and %d --role: give one --secret (and at most one --role) per --device", len(ids), len(secrets), len(roles))
	}
	out := make([]Credential, len(ids))
	for i, id := range ids {
		role := wire.RoleKiosk
		if i > 0 {
			role = wire.RoleDisplay
		}
		if i < len(roles) {
			r, err := ParseRole(roles[i])
			if err != nil {
				return nil, err
			}
			role = r
		}
		if id == "" || secrets[i] == "" {
			return nil, fmt.Errorf("conform: device %d: id and secret must not be empty", i+1)
		}
		out[i] = Credential{ID: id, Secret: []byte(secrets[i]), Role: role}
	}
	return out, nil
}
