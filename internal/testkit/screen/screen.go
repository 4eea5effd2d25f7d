// Package screen holds the helpers tests read a rendered text screen with
// (a Bubble Tea view, a tmux pane's capture). It imports only the standard
// library.
package screen

import "strings"

// Line returns the first line of screen that contains s, without its
// newline, or "" when none does: the row a test then checks.
func Line(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
