// Package positive fills an option left at zero or below with its default:
// the one rule the Opts structs outside queue share (a zero or negative
// timeout, size or count means "use the default"); queue, which imports
// only the standard library, keeps its own. It imports only the standard
// library.
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
