package tests

import (
	"strings"
	"testing"
)

// TestLock drives RFC 7047 locks with three ovsdb-client sessions: A takes
// the lock, B queues for it, C steals it (A is told "stolen"), C leaves
// (the lock returns to A), A leaves (B gets it). Each session's output must
// match Debian's.
func TestLock(t *testing.T) {
	p := startPair(t, clientPath)
	var outputs [2][3]result
	for side, s := range p.both() {
		outputs[side] = runLockScenario(t, s)
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for i, name := range []string{"A-lock", "B-lock-waits", "C-steal"} {
		t.Run(name, func(t *testing.T) {
			compareResults(t, "ovsdb-client "+name, nref.result(outputs[0][i]), nours.result(outputs[1][i]))
		})
	}
}

func runLockScenario(t *testing.T, s *server) [3]result {
	t.Helper()
	const lock = "gvs_lock"
	step := func(b *background, what string, cond func(string) bool) {
		t.Helper()
		if !b.waitStdout(updateTimeout, cond) {
			t.Errorf("%s: %s: not seen within %v; output so far %q", s.kind.name, what, updateTimeout, b.stdout.String())
		}
	}
	countLine := func(line string, n int) func(string) bool {
		return func(out string) bool { return strings.Count("\n"+out, "\n"+line+"\n") >= n }
	}
	a := s.startTool(t, clientPath, "lock", s.remote, lock)
	step(a, "A acquires the lock", hasLine(`{"locked":true}`))
	b := s.startTool(t, clientPath, "lock", s.remote, lock)
	step(b, "B queues for the lock", hasLine(`{"locked":false}`))
	c := s.startTool(t, clientPath, "steal", s.remote, lock)
	step(c, "C steals the lock", hasLine(`{"locked":true}`))
	step(a, "A is told the lock was stolen", hasLine("stolen"))
	cOut := c.stop(t)
	step(a, "A gets the lock back after C leaves", countLine("locked", 1))
	aOut := a.stop(t)
	step(b, "B gets the lock after A leaves", countLine("locked", 1))
	return [3]result{aOut, b.stop(t), cOut}
}
