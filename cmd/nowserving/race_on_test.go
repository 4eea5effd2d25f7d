//go:build race

package main

// raceDetector is true when the tests run with the race detector, which
// slows the daemon about twentyfold: the busy day's daemon is then a
// nowserving built without it (dayBinary).
const raceDetector = true
