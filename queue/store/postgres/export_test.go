package postgres

import "time"

// SetListenCheck sets listenCheck for a test and returns the old value.
func SetListenCheck(d time.Duration) time.Duration {
	old := listenCheck
	listenCheck = d
	return old
}
