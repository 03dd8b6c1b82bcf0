package afxdp

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// xdpMDRxQueueIndex is the offset of rx_queue_index in struct xdp_md
// (data, data_end, data_meta, ingress_ifindex, rx_queue_index: u32 each).
const xdpMDRxQueueIndex = 16

// xdpPass is XDP_PASS: bpf_redirect_map returns it when the slot is empty.
const xdpPass = 2

// fragsMTU is the MTU above which the program must declare that it
// handles multi-buffer frames: native veth XDP refuses a larger peer MTU
// otherwise (a page minus XDP headroom, Ethernet header and
// skb_shared_info is about 3.5K).
const fragsMTU = 3500

// redirector is a device's XDP side: the XSKMAP, the program that
// redirects every frame to the socket of its receive queue, and the
// bpf_link attaching it. Nothing is pinned: closing the link (or the
// process exiting) detaches the program, and the map and program go when
// their last file descriptor does.
type redirector struct {
	xsks *ebpf.Map
	prog *ebpf.Program
	link link.Link
	// mode is "native" or "generic": how the program got attached.
	mode string
}

// newRedirector creates the map with one slot per receive queue the
// device has and loads the program. A frame arriving on a queue without a
// socket falls through to the kernel stack (XDP_PASS).
func newRedirector(name string, deviceQueues int, frags bool) (*redirector, error) {
	xsks, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "gvs_xsks",
		Type:       ebpf.XSKMap,
		KeySize:    4,
		ValueSize:  4,
		MaxEntries: uint32(deviceQueues),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: create XSKMAP: %w", name, err)
	}
	var flags uint32
	if frags {
		flags = unix.BPF_F_XDP_HAS_FRAGS
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:    "gvs_xsk_redir",
		Type:    ebpf.XDP,
		License: "Dual MIT/GPL",
		Flags:   flags,
		Instructions: asm.Instructions{
			// r2 = ctx->rx_queue_index
			asm.LoadMem(asm.R2, asm.R1, xdpMDRxQueueIndex, asm.Word),
			// return bpf_redirect_map(&xsks, r2, XDP_PASS)
			asm.LoadMapPtr(asm.R1, xsks.FD()),
			asm.Mov.Imm(asm.R3, xdpPass),
			asm.FnRedirectMap.Call(),
			asm.Return(),
		},
	})
	if err != nil {
		xsks.Close()
		return nil, fmt.Errorf("%s: load XDP program: %w", name, err)
	}
	return &redirector{xsks: xsks, prog: prog}, nil
}

// attach links the program to the device in the requested mode:
// best-effort tries driver mode and falls back to generic, or the other
// way round when genericFirst (see preferGeneric).
func (r *redirector) attach(name string, ifindex int, mode XDPMode, genericFirst bool, logger *slog.Logger) error {
	type attempt struct {
		flags link.XDPAttachFlags
		label string
	}
	native, generic := attempt{link.XDPDriverMode, "native"}, attempt{link.XDPGenericMode, "generic"}
	try := func(a attempt) error {
		l, err := link.AttachXDP(link.XDPOptions{Program: r.prog, Interface: ifindex, Flags: a.flags})
		if err != nil {
			return fmt.Errorf("%s: attach XDP program in %s mode: %w", name, a.label, err)
		}
		r.link, r.mode = l, a.label
		return nil
	}
	switch mode {
	case ModeGeneric:
		return try(generic)
	case ModeNative, ModeNativeZeroCopy:
		return try(native)
	}
	first, second := native, generic
	if genericFirst {
		first, second = generic, native
	}
	firstErr := try(first)
	if firstErr == nil {
		return nil
	}
	logger.Info(first.label+" XDP unavailable, trying "+second.label, "device", name, "error", firstErr)
	if err := try(second); err != nil {
		return errors.Join(firstErr, err)
	}
	return nil
}

// insert puts a bound socket into the map slot of its queue.
func (r *redirector) insert(q, fd int) error {
	if err := r.xsks.Update(uint32(q), uint32(fd), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("XSKMAP[%d] = socket: %w", q, err)
	}
	return nil
}

// close detaches the program and releases the map and program.
func (r *redirector) close() error {
	var err error
	if r.link != nil {
		err = r.link.Close()
		r.link = nil
	}
	r.prog.Close()
	r.xsks.Close()
	return err
}

// preferGeneric reports whether best-effort should attach in generic
// mode first: on veth it forwards TCP with less CPU than native mode.
// Native veth XDP turns TSO off on the peer, so the sending host
// segments every 64 KB write in software and each MTU-sized frame
// crosses the XDP hook (and veth's skb-to-xdp_buff conversion, a copy)
// on its own; generic XDP leaves the peer's TSO on, one super-frame
// crosses the hook per 64 KB, and Recv cuts it (segment.go). Measured
// with BenchmarkForwarderTCP (CPU per forwarded frame) and gvs-bench
// (switch CPU per Gbit/s): about 20% less. Hardware drivers keep the
// native-first order: there native XDP is what makes AF_XDP fast.
func preferGeneric(mode XDPMode, driver map[string]string) bool {
	return mode == ModeBestEffort && driver["driver_name"] == "veth"
}
