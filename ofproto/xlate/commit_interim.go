//go:build !pending

package xlate

import (
	"gvs/dpif"
	"gvs/packet"
)

// INTERIM until dpif's set actions are on main (then commit.go, built
// with the "pending" tag today, replaces this file): Ethernet addresses
// and VLAN tags only.
func (ctx *context) commit() {
	f, b := &ctx.flow.Key, &ctx.base.Key
	if f.SrcMAC != b.SrcMAC {
		ctx.emit(dpif.SetEthSrc(f.SrcMAC))
		ctx.wc.Masks.SrcMAC = allOnesMAC
		b.SrcMAC = f.SrcMAC
	}
	if f.DstMAC != b.DstMAC {
		ctx.emit(dpif.SetEthDst(f.DstMAC))
		ctx.wc.Masks.DstMAC = allOnesMAC
		b.DstMAC = f.DstMAC
	}
	if f.VLANs == b.VLANs {
		return
	}
	fn, bn := f.NumVLANs(), b.NumVLANs()
	for fn > 0 && bn > 0 && f.VLANs[fn-1] == b.VLANs[bn-1] {
		fn--
		bn--
	}
	for i := 0; i < bn; i++ {
		ctx.emit(dpif.PopVLAN())
		ctx.wc.Masks.VLANs[i] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
	}
	for i := fn - 1; i >= 0; i-- {
		ctx.emit(dpif.PushVLAN(f.VLANs[i].TCI))
	}
	b.VLANs = f.VLANs
}
