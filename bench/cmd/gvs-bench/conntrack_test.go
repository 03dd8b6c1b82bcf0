package main

import (
	"strings"
	"testing"

	"gvs/bench/report"
	"gvs/bench/setups"
)

// TestConntrackPlan: the conntrack part's figures are its own (prefixed,
// unique), every target names one of them and setups that exist.
func TestConntrackPlan(t *testing.T) {
	for _, quick := range []bool{true, false} {
		seen := map[string]bool{}
		for _, tst := range conntrackPlan(newConfig(quick, 0)) {
			for _, f := range tst.figures {
				if !strings.HasPrefix(f.ID, "ct-") || seen[f.ID] {
					t.Errorf("figure %q: not prefixed ct- or repeated", f.ID)
				}
				seen[f.ID] = true
			}
		}
		names := map[string]bool{}
		for _, s := range setups.ConntrackSetups(setups.Env{}) {
			names[s.Name()] = true
		}
		for _, tg := range report.ConntrackTargets() {
			if !seen[tg.Figure] || !names[tg.Setup] || !names[tg.Ref] {
				t.Errorf("target %q: figure %s, setups %s/%s not all in the plan", tg.Text, tg.Figure, tg.Setup, tg.Ref)
			}
		}
	}
}

func TestWithoutSetups(t *testing.T) {
	ct := setups.ConntrackSetups(setups.Env{})
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"gvs-system,gvs-system-ct", "gvs-system"},
		{"gvs-system-ct,ovs-netdev-tso-bigbuf-ct", noSetup},
		{"direct", "direct"},
	} {
		if got := withoutSetups(c.in, ct); got != c.want {
			t.Errorf("withoutSetups(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
