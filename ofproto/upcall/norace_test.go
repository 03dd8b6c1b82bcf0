//go:build !race

package upcall_test

const raceEnabled = false
