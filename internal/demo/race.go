//go:build race

package demo

// cpuScale undoes the race detector's slowdown, "2-20x" in execution time
// (https://go.dev/doc/articles/race_detector#Runtime_Overheads), so that a
// demo built with -race (its tests) measures a page's CPU against
// compute.cpu_limit_ms as the plain build would.
const cpuScale = 1.0 / 20
