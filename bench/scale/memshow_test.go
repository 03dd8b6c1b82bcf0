package scale

import "testing"

func TestParseMemoryShow(t *testing.T) {
	got := ParseMemoryShow("bridges:1 flows:3 go-heap-kB:2048 goroutines:41 ports:1001 rx-ring-kB:5120 junk x:y :5\nhandlers:2\n")
	want := map[string]uint64{"bridges": 1, "flows": 3, "go-heap-kB": 2048, "goroutines": 41, "ports": 1001, "rx-ring-kB": 5120, "handlers": 2}
	if len(got) != len(want) {
		t.Errorf("parsed %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

func TestRingBytes(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]uint64
		want int64
		key  string
		ok   bool
	}{
		{map[string]uint64{"ports": 10, "go-heap-kB": 900}, 0, "", false},
		{map[string]uint64{"rx-ring-kB": 2048, "rx-ring-budget-kB": 1 << 20}, 2048 * 1024, "rx-ring-kB", true},
		{map[string]uint64{"rx_ring_bytes_total": 1 << 30, "rx-ring-max-bytes": 1 << 40}, 1 << 30, "rx_ring_bytes_total", true},
		{map[string]uint64{"rings": 1000, "ring-MiB": 3}, 3 << 20, "ring-MiB", true},
		// A per-port counter beside the total: the total wins.
		{map[string]uint64{"rx-ring-kB-p0": 4096, "rx-ring-total-kB": 1024}, 1024 * 1024, "rx-ring-total-kB", true},
		// gvs's own counters: the total, not the reservation or a port's.
		{ParseMemoryShow("bridges:1 ports:201 rx-ring-budget-kB:1048576 rx-ring-kB:51200 rx-ring-kB(p7):4096 rx-ring-reserved-kB:60000 rx-rings:200"), 51200 * 1024, "rx-ring-kB", true},
		{ParseMemoryShow("rx-ring-kB(p7):4096 rx-rings:200"), 0, "", false},
		// Two counters, neither a total: the larger.
		{map[string]uint64{"ring-a-kB": 10, "ring-b-kB": 30}, 30 * 1024, "ring-b-kB", true},
	} {
		got, key, ok := RingBytes(tc.in)
		if got != tc.want || key != tc.key || ok != tc.ok {
			t.Errorf("RingBytes(%v) = %d, %q, %v; want %d, %q, %v", tc.in, got, key, ok, tc.want, tc.key, tc.ok)
		}
	}
}
