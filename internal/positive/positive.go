// Package positive fills an option left at zero or below with its default:
// the one rule the Opts structs of the drivers and the protocol server
// share (a zero or negative timeout, size or count means "use the
// default"). It imports only the standard library.
package positive

import "cmp"

// Or returns v when it is above zero, else d: cmp.Or for options where a
// negative value means "unset" too.
func Or[T cmp.Ordered](v, d T) T {
	var zero T
	if v <= zero {
		return d
	}
	return v
}
