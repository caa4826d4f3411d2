//go:build !race

package demo

// cpuScale is compute.cpu_scale for the demo: this machine's CPU counted
// as Fastly's (race.go has the -race build's).
const cpuScale = 1.0
