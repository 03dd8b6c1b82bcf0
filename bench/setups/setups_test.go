package setups

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// setSysctls only raises what is below the wanted value and restores
// exactly what it changed.
func TestSetSysctlsRaisesAndRestores(t *testing.T) {
	dir := t.TempDir()
	low, high := filepath.Join(dir, "rmem_max"), filepath.Join(dir, "wmem_max")
	os.WriteFile(low, []byte("212992\n"), 0o644)
	os.WriteFile(high, []byte("33554432\n"), 0o644)
	atLeast := func(old string) string {
		if v, _ := strconv.Atoi(old); v >= 8388608 {
			return old
		}
		return "8388608"
	}
	restore, err := setSysctls([]string{low, high}, atLeast)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return strings.TrimSpace(string(b)) }
	if read(low) != "8388608" || read(high) != "33554432" {
		t.Errorf("raised to %s and %s", read(low), read(high))
	}
	os.WriteFile(high, []byte("1"), 0o644) // not ours to restore
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Errorf("second restore: %v", err)
	}
	if read(low) != "212992" || read(high) != "1" {
		t.Errorf("restored to %s and %s", read(low), read(high))
	}
	if _, err := setSysctls([]string{filepath.Join(dir, "missing")}, atLeast); err == nil {
		t.Error("a missing sysctl was not an error")
	}
}
