package appctl

import (
	"fmt"
	"strconv"
	"strings"

	"gvs/dpif"
	"gvs/dpif/ipf"
	"gvs/unixctl"
)

// The fragment reassembly commands (lib/dpctl.c's ipf-*), with Open
// vSwitch's argument handling, replies and error texts:
//
//	dpctl/ipf-set-enabled [dp] v4|v6
//	dpctl/ipf-set-disabled [dp] v4|v6
//	dpctl/ipf-set-min-frag [dp] v4|v6 minfragment
//	dpctl/ipf-set-max-nfrags [dp] maxfrags
//	dpctl/ipf-get-status [-m] [dp]

// ipfDatapath is what a datapath that reassembles fragments for its
// tracker offers; *dpif.Datapath has it once the ct action runs through
// dpif/ipf.
type ipfDatapath interface {
	IPF() *ipf.IPF
}

func (c *Commands) registerIPF(s *unixctl.Server) {
	s.Register("dpctl/ipf-set-enabled", "[dp] v4|v6", 1, 2, c.dpctl(c.ipfSetEnabled(true)))
	s.Register("dpctl/ipf-set-disabled", "[dp] v4|v6", 1, 2, c.dpctl(c.ipfSetEnabled(false)))
	s.Register("dpctl/ipf-set-min-frag", "[dp] v4|v6 minfragment", 2, 3, c.dpctl(c.ipfSetMinFrag))
	s.Register("dpctl/ipf-set-max-nfrags", "[dp] maxfrags", 1, 2, c.dpctl(c.ipfSetMaxNFrags))
	s.Register("dpctl/ipf-get-status", "[dp]", 0, 1, c.dpctl(c.ipfGetStatus))
}

// openIPF is opt_dpif_open followed by the datapath's fragment module;
// args are without the command name, maxArgs counts it as Open vSwitch's
// does.
func (c *Commands) openIPF(args []string, p *dpctlParams, maxArgs int) *ipf.IPF {
	dp := c.openDatapath(args, p, maxArgs)
	if dp == nil {
		return nil
	}
	return datapathIPF(dp)
}

func datapathIPF(dp *dpif.Datapath) *ipf.IPF {
	if d, ok := any(dp).(ipfDatapath); ok {
		return d.IPF()
	}
	return nil
}

// family reads "v4" or "v6" as ovs_scan's "%2s" does: the first two
// characters of the argument.
func family(arg string) (v6, ok bool) {
	if len(arg) > 2 {
		arg = arg[:2]
	}
	switch arg {
	case "v4":
		return false, true
	case "v6":
		return true, true
	}
	return false, false
}

// scanUint32 reads a number as ovs_scan's "%"SCNu32 does: leading
// digits (after optional spaces and sign), the rest ignored.
func scanUint32(s string) (uint32, bool) {
	s = strings.TrimLeft(s, " \t\n")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:n], 10, 64)
	if err != nil {
		v = ^uint64(0) // scanf saturates; the setter then refuses it
	}
	if neg {
		v = -v
	}
	return uint32(v), true
}

const eOpNotSupp = "Operation not supported"

func (c *Commands) ipfSetEnabled(enable bool) func([]string, *dpctlParams) {
	verb := "disabling"
	if enable {
		verb = "enabling"
	}
	return func(args []string, p *dpctlParams) {
		dp := c.openDatapath(args, p, 4)
		if dp == nil {
			return
		}
		v6, ok := false, false
		if len(args) > 0 {
			v6, ok = family(args[len(args)-1])
		}
		if !ok {
			c.dpctlError(p, "Invalid argument", "parameter missing: 'v4' for IPv4 or 'v6' for IPv6")
			return
		}
		f := datapathIPF(dp)
		if f == nil {
			c.dpctlError(p, eOpNotSupp, "%s fragmentation reassembly failed", verb)
			return
		}
		f.SetEnabled(v6, enable)
		fmt.Fprintf(&p.out, "%s fragmentation reassembly successful", verb)
	}
}

func (c *Commands) ipfSetMinFrag(args []string, p *dpctlParams) {
	dp := c.openDatapath(args, p, 4)
	if dp == nil {
		return
	}
	v6, ok := false, false
	if len(args) >= 2 {
		v6, ok = family(args[len(args)-2])
	}
	if !ok {
		c.dpctlError(p, "Invalid argument", "parameter missing: v4 for IPv4 or v6 for IPv6")
		return
	}
	n, ok := scanUint32(args[len(args)-1])
	if !ok {
		c.dpctlError(p, "Invalid argument", "parameter missing for minimum fragment size")
		return
	}
	f := datapathIPF(dp)
	if f == nil {
		c.dpctlError(p, eOpNotSupp, "requested minimum fragment size too small; see documentation")
		return
	}
	if err := f.SetMinFrag(v6, n); err != nil {
		// lib/ipf.c refuses with 1, which dpctl prints as errno 1.
		c.dpctlError(p, "Operation not permitted", "requested minimum fragment size too small; see documentation")
		return
	}
	fmt.Fprintf(&p.out, "setting minimum fragment size successful")
}

func (c *Commands) ipfSetMaxNFrags(args []string, p *dpctlParams) {
	dp := c.openDatapath(args, p, 3)
	if dp == nil {
		return
	}
	n, ok := uint32(0), false
	if len(args) > 0 {
		n, ok = scanUint32(args[len(args)-1])
	}
	if !ok {
		c.dpctlError(p, "Invalid argument", "parameter missing for maximum fragments")
		return
	}
	f := datapathIPF(dp)
	if f == nil {
		c.dpctlError(p, eOpNotSupp, "setting maximum fragments failed")
		return
	}
	if err := f.SetMaxFrags(n); err != nil {
		c.dpctlError(p, "Operation not permitted", "setting maximum fragments failed")
		return
	}
	fmt.Fprintf(&p.out, "setting maximum fragments successful")
}

func (c *Commands) ipfGetStatus(args []string, p *dpctlParams) {
	f := c.openIPF(args, p, 2)
	if p.failed {
		return
	}
	if f == nil {
		c.dpctlError(p, eOpNotSupp, "ipf status could not be retrieved")
		return
	}
	p.out.WriteString(f.Status().Format())
	if p.verbosity > 0 {
		p.out.WriteString("\n        Fragment Lists:\n\n")
		f.Dump(func(l ipf.ListInfo) bool {
			p.out.WriteString(l.String())
			p.out.WriteByte('\n')
			return true
		})
	}
}
