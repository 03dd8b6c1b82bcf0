package ipf

import (
	"encoding/hex"
	"gvs/internal/ovsref"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// refSwitch is Debian's ovs-vswitchd with a dummy (userspace) datapath
// and a bridge of two dummy ports, in a temporary directory, reached
// through unix sockets only: the reference for what ipf counts.
type refSwitch struct {
	t   *testing.T
	dir string
	ctl string
	env []string
}

func startRefSwitch(t *testing.T) *refSwitch {
	t.Helper()
	d := ovsref.Start(t, "gvsipf", "--enable-dummy=override")
	dir := d.Dir
	r := &refSwitch{t: t, dir: dir, env: d.Env, ctl: d.Ctl}
	r.run("ovs-vsctl", "--db=unix:"+dir+"/db.sock", "--timeout=10", "--", "init", "--", "add-br", "br0", "--", "set", "bridge", "br0",
		"datapath_type=dummy", "fail-mode=secure", "--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy",
		"ofport_request=1", "--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2")
	return r
}

func (r *refSwitch) run(name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = r.env, r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(r.dir, "vswitchd.log"))
		r.t.Fatalf("%s %v: %v\n%s\nlog:\n%s", name, args, err, out, log)
	}
	return string(out)
}

// appctl runs ovs-appctl against the reference and returns its output
// and whether it succeeded.
func (r *refSwitch) appctl(args ...string) (string, bool) {
	r.t.Helper()
	out, err := exec.Command("ovs-appctl", append([]string{"-t", r.ctl}, args...)...).CombinedOutput()
	return string(out), err == nil
}

// TestCountsMatchOpenVSwitch sends the same fragments through Debian's
// ovs-vswitchd (a ct(zone=3) flow on its userspace datapath) and through
// an IPF, and compares `dpctl/ipf-get-status -m` with Status().Format()
// and Dump: complete sets in several orders, a duplicate, a fragment
// under min-frag, a set missing its last fragment, for both families.
func TestCountsMatchOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	mgmt := "unix:" + r.dir + "/br0.mgmt"
	r.run("ovs-ofctl", "add-flow", mgmt, "ip,actions=ct(zone=3),output:2")
	r.run("ovs-ofctl", "add-flow", mgmt, "ipv6,actions=ct(zone=3),output:2")

	f := New(nil)
	if got, ok := r.appctl("dpctl/ipf-get-status"); !ok || got != f.Status().Format() {
		t.Fatalf("initial status: Open vSwitch (ok=%v):\n%s\nours:\n%s", ok, got, f.Status().Format())
	}

	var frames [][]byte
	for _, v6 := range []bool{false, true} {
		hdr := 20
		if v6 {
			hdr = 40
		}
		whole := udpFrame(v6, 4000, 5)
		set := fragmentFrame(whole, v6, 101, evenPieces(len(whole)-14-hdr, 1400))
		// In order, with a duplicate of the first before the set
		// completes.
		frames = append(frames, set[0], set[0], set[1], set[2])
		// Reversed.
		set2 := fragmentFrame(whole, v6, 102, evenPieces(len(whole)-14-hdr, 1400))
		frames = append(frames, set2[2], set2[1], set2[0])
		// Too small (a non-last fragment of 900 bytes).
		small := fragmentFrame(whole, v6, 103, []piece{{0, 799}})
		frames = append(frames, small[0])
		// Incomplete: held.
		frames = append(frames, fragmentFrame(whole, v6, 104, evenPieces(len(whole)-14-hdr, 1400))[0])
	}
	pool := testPool()
	for _, fr := range frames {
		r.appctl("netdev-dummy/receive", "p1", hex.EncodeToString(fr))
		v, re := f.Preprocess(bufferOf(fr, 1), 3)
		if v == Reassembled {
			for _, b := range f.Postprocess(re, pool, nil) {
				b.Free()
			}
		}
	}
	ours := f.Status().Format()
	var lists []string
	f.Dump(func(l ListInfo) bool { lists = append(lists, l.String()); return true })
	if len(lists) != 2 {
		t.Fatalf("%d lists held, want 2", len(lists))
	}
	ours += "\n        Fragment Lists:\n\n" + strings.Join(lists, "\n") + "\n"
	var got string
	for range 50 {
		got, _ = r.appctl("dpctl/ipf-get-status", "-m")
		if sortListLines(got) == sortListLines(ours) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("Open vSwitch:\n%s\nours:\n%s", got, ours)
}

// sortListLines sorts the fragment list lines (Open vSwitch prints them
// in hash order).
func sortListLines(s string) string {
	lines := strings.Split(s, "\n")
	var head, lists []string
	for _, l := range lines {
		if strings.HasPrefix(l, "(") {
			lists = append(lists, l)
		} else {
			head = append(head, l)
		}
	}
	slices.Sort(lists)
	return strings.Join(head, "\n") + strings.Join(lists, "\n")
}
