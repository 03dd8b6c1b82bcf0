//go:build race

package upcall_test

// raceEnabled: the race detector is on (sync.Pool drops items at random
// then, so allocation counts mean nothing).
const raceEnabled = true
