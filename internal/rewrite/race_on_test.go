//go:build race

package rewrite

// raceEnabled: sync.Pool drops items at random under the race detector.
const raceEnabled = true
