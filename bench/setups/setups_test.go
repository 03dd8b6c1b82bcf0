package setups

import (
	"errors"
	"fmt"
	"testing"
)

func TestSkip(t *testing.T) {
	err := fmt.Errorf("start: %w", Skip("no %s yet", "datapath"))
	if reason, ok := IsSkip(err); !ok || reason != "no datapath yet" {
		t.Errorf("IsSkip(wrapped skip) = %q, %v", reason, ok)
	}
	if _, ok := IsSkip(errors.New("boom")); ok {
		t.Error("a plain error is not a skip")
	}
}

func TestPingAllReplied(t *testing.T) {
	for out, want := range map[string]bool{
		`{"sent":3,"received":3,"rtt_us":[1,2,3]}`: true,
		`{"sent":3,"received":2,"rtt_us":[1,2]}`:   false,
		`{"sent":0,"received":0}`:                  false,
		`garbage`:                                  false,
	} {
		if got := pingAllReplied(out); got != want {
			t.Errorf("pingAllReplied(%s) = %v", out, got)
		}
	}
}

func TestLastPart(t *testing.T) {
	got := lastPart("/usr/bin/ovs-vsctl --db=unix:/x add-br br0: exit status 1: ovs-vsctl: no bridge named br1")
	if got != "no bridge named br1" {
		t.Errorf("lastPart = %q", got)
	}
}

// Every setup has a unique name and a known kind; the references ratios
// use exist.
func TestAllSetups(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range append(All(Env{}), Extra(Env{})...) {
		if seen[s.Name()] {
			t.Errorf("setup %s twice", s.Name())
		}
		seen[s.Name()] = true
		switch s.Kind() {
		case KindKernel, KindOVS, KindGVS:
		default:
			t.Errorf("%s: kind %q", s.Name(), s.Kind())
		}
		if s.Description() == "" {
			t.Errorf("%s: no description", s.Name())
		}
		if err := s.Stop(); err != nil {
			t.Errorf("%s: Stop before Start: %v", s.Name(), err)
		}
	}
	for _, ref := range []string{DirectName, OVSDefaultName} {
		if !seen[ref] {
			t.Errorf("reference setup %s missing", ref)
		}
	}
}
