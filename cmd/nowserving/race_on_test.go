//go:build race

package main

// raceDetector is true when the tests run with the race detector, which
// slows the daemon about twentyfold: the busy day is smaller then.
const raceDetector = true
