package pipeline

import (
	"testing"
	"time"
	"unsafe"
)

// TestRuleSizeClass: a Rule (with the 8-byte header the Go allocator puts
// in front of a pointerful object over 512 bytes) fits the 896-byte size
// class; one byte more and every rule costs 1,024.
func TestRuleSizeClass(t *testing.T) {
	const header, class = 8, 896
	if n := unsafe.Sizeof(Rule{}) + header; n > class {
		t.Fatalf("a Rule takes %d bytes with its header, more than the %d-byte size class", n, class)
	}
}

// TestRuleCountersWithoutExt: a rule never credited has zero counters and
// no extension; credits, refreshes and forwarding make one.
func TestRuleCountersWithoutExt(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	r := &Rule{created: now.UnixNano(), modified: now.UnixNano()}
	if pk, by, _ := r.Stats(); pk != 0 || by != 0 || r.ext.Load() != nil {
		t.Fatalf("fresh rule: %d packets %d bytes, ext %v", pk, by, r.ext.Load())
	}
	r.Credit(0, 0, now.Add(time.Second))
	if r.ext.Load() != nil {
		t.Fatal("a credit of nothing made an extension")
	}
	if _, _, used := r.Stats(); !used.Equal(now.Add(time.Second)) {
		t.Fatalf("used %v", used)
	}
	r.Credit(3, 300, now)
	if pk, by, _ := r.Stats(); pk != 3 || by != 300 {
		t.Fatalf("after a credit: %d packets %d bytes", pk, by)
	}
	if !r.hardStart().Equal(now) {
		t.Fatalf("hard start %v", r.hardStart())
	}
	r.Refresh(now.Add(5 * time.Second))
	if !r.hardStart().Equal(now.Add(5 * time.Second)) {
		t.Fatalf("hard start after refresh %v", r.hardStart())
	}
}
