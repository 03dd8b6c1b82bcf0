package ofp

import (
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// TestOfctlFlowMods: ovs-ofctl's flow mods in every version decode to the
// flow it was given (match and actions as ovs-ofctl prints them) with the
// flow mod's fields in Open vSwitch's decoded form.
func TestOfctlFlowMods(t *testing.T) {
	cases := []struct {
		version uint8
		args    []string
		match   string
		actions string
		check   func(t *testing.T, fm *FlowMod)
	}{
		{Version15, []string{"-O", "OpenFlow15", "add-flow", "SOCK", "table=3,priority=100,cookie=0x77,in_port=1,ip,nw_src=10.0.0.0/8,tcp,tp_dst=80,actions=ct(commit,zone=5),resubmit(,4)"},
			"priority=100,tcp,in_port=1,nw_src=10.0.0.0/8,tp_dst=80", "ct(commit,zone=5),resubmit(,4)",
			func(t *testing.T, fm *FlowMod) {
				if fm.TableID != 3 || fm.Command != FlowAdd || fm.NewCookie != 0x77 || fm.Priority != 100 || fm.BufferID != BufferNone {
					t.Errorf("%+v", fm)
				}
			}},
		{Version13, []string{"-O", "OpenFlow13", "mod-flows", "SOCK", "table=1,cookie=0x5/0xff,reg0=0x5/0xff,actions=drop"},
			"reg0=0x5/0xff", "drop",
			func(t *testing.T, fm *FlowMod) {
				if fm.Command != FlowModify || fm.Cookie != 5 || fm.CookieMask != 0xff || fm.ModifyCookie() {
					t.Errorf("%+v", fm)
				}
			}},
		{Version10, []string{"-O", "OpenFlow10", "add-flow", "SOCK", "priority=7,arp,arp_tpa=192.168.0.1,actions=NORMAL"},
			"priority=7,arp,arp_tpa=192.168.0.1", "NORMAL",
			func(t *testing.T, fm *FlowMod) {
				if fm.Flags&FlowFlagResetCounts == 0 || fm.NX {
					t.Errorf("%+v", fm)
				}
			}},
		{Version10, []string{"-O", "OpenFlow10", "add-flow", "SOCK", "priority=8,reg3=9,actions=load:0x1->NXM_NX_REG0[0..3]"},
			"priority=8,reg3=0x9", "load:0x1->NXM_NX_REG0[0..3]",
			func(t *testing.T, fm *FlowMod) {
				if !fm.NX {
					t.Errorf("a register match needs NXT_FLOW_MOD: %+v", fm)
				}
			}},
		{Version14, []string{"-O", "OpenFlow14", "del-flows", "SOCK", "--strict", "priority=9,udp,udp_src=53"},
			"priority=9,udp,tp_src=53", "drop",
			func(t *testing.T, fm *FlowMod) {
				if fm.Command != FlowDeleteStrict || fm.TableID != TableAll || fm.OutPort != mf.PortNone || fm.OutGroup != GroupAny {
					t.Errorf("%+v", fm)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.args[2], func(t *testing.T) {
			fs := startFakeSwitch(t, c.version)
			runOfctl(t, fs, c.args...)
			fs.ln.Close()
			<-fs.done
			fs.mu.Lock()
			defer fs.mu.Unlock()
			var fm *FlowMod
			for i, m := range fs.decoded {
				if fs.errs[i] != nil {
					t.Errorf("%x: %v", fs.got[i], fs.errs[i])
				}
				if f, ok := m.(*FlowMod); ok {
					fm = f
				}
			}
			if fm == nil {
				t.Fatal("no flow mod")
			}
			if got := fm.Match.Format(int(fm.Priority)); got != c.match {
				t.Errorf("match %q, want %q", got, c.match)
			}
			if got := ofpact.Format(fm.Actions); got != c.actions {
				t.Errorf("actions %q, want %q", got, c.actions)
			}
			c.check(t, fm)
		})
	}
}
