package xlate

import (
	"fmt"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// learn builds the flow a learn action describes from the packet's
// fields (Open vSwitch's learn_execute) and records it; the fields it
// reads are unwildcarded (learn_mask), since the learned flow depends on
// them.
func (ctx *context) learn(a *ofpact.Learn) {
	for i := range a.Specs {
		if s := &a.Specs[i]; s.SrcType == ofpact.LearnSrcField {
			s.Src.Unwildcard(ctx.wc)
		}
	}
	lf := LearnedFlow{
		TableID: a.TableID, Priority: a.Priority, Cookie: a.Cookie,
		IdleTimeout: a.IdleTimeout, HardTimeout: a.HardTimeout,
		FinIdle: a.FinIdleTimeout, FinHard: a.FinHardTimeout,
		DeleteLearned: a.Flags&ofpact.LearnDeleteLearned != 0,
		Limit:         a.Limit,
		Learner:       ctx.rule,
	}
	if a.Flags&ofpact.LearnSendFlowRem != 0 {
		lf.Flags |= 1 // OFPFF_SEND_FLOW_REM
	}
	var acts []Action
	if a.FinIdleTimeout != 0 || a.FinHardTimeout != 0 {
		acts = append(acts, &ofpact.FinTimeout{IdleTimeout: a.FinIdleTimeout, HardTimeout: a.FinHardTimeout})
	}
	for i := range a.Specs {
		s := &a.Specs[i]
		var v mf.Value
		if s.SrcType == ofpact.LearnSrcField {
			v = s.Src.Read(&ctx.flow)
		} else {
			copy(v[16-len(s.Imm):], s.Imm)
		}
		switch s.DstType {
		case ofpact.LearnDstMatch:
			s.Dst.SetMatch(&lf.Match, v)
		case ofpact.LearnDstLoad:
			fd := s.Dst.Field
			var val, mask mf.Value
			mf.CopyBits(v, 16, 0, &val, fd.Bytes, s.Dst.Ofs, s.NBits)
			mask = s.Dst.Mask()
			acts = append(acts, &ofpact.SetField{Field: fd, Value: val, Mask: mask, Raw: ofpact.RawNXRegLoad})
		case ofpact.LearnDstOutput:
			port := uint32(v.Uint(16))
			if s.NBits <= 16 || v.Uint(16) <= 0xffff {
				if port < mf.PortMax || port == mf.PortInPort || port == mf.PortFlood || port == mf.PortLocal || port == mf.PortAll {
					acts = append(acts, &ofpact.Output{Port: port})
				}
			}
		}
	}
	lf.Actions = acts
	if a.Flags&ofpact.LearnWriteResult != 0 && a.ResultDst.Field != nil {
		// The bridge adds the flow after translation, so the result is
		// what it will be without a limit: success. (With a limit Open
		// vSwitch knows at once; here the flow may still be refused.)
		a.ResultDst.Unwildcard(ctx.wc)
		a.ResultDst.WriteUint(&ctx.flow, 1)
	}
	if ctx.trace != nil {
		ctx.detail(fmt.Sprintf("table=%d priority=%d", lf.TableID, lf.Priority))
	}
	ctx.res.Cache.Learned = append(ctx.res.Cache.Learned, lf)
}

// multipath hashes the flow's fields and writes a link number into the
// destination (Open vSwitch's multipath_execute). The hash is gvs's own,
// so the link a flow gets differs from Open vSwitch's; the spread and
// the stability are the same.
func (ctx *context) multipath(a *ofpact.Multipath) {
	h := ctx.hashNXFields(a.Fields, uint64(a.Basis))
	n := uint64(a.MaxLink) + 1
	var link uint64
	switch a.Algorithm {
	case ofpact.MultipathModuloN:
		link = h % n
	case ofpact.MultipathHashThreshold:
		link = (h & 0xffffffff) * n >> 32
	default: // HRW, iterative hash: highest random weight
		best := uint64(0)
		for i := uint64(0); i < n; i++ {
			if w := mix64(h ^ i); i == 0 || w > best {
				best, link = w, i
			}
		}
	}
	a.Dst.Unwildcard(ctx.wc)
	a.Dst.WriteUint(&ctx.flow, link)
}

// hashNXFields hashes a multipath/bundle field set (nx_hash_fields),
// unwildcarding what it reads.
func (ctx *context) hashNXFields(fields uint16, basis uint64) uint64 {
	f, m := &ctx.flow, &ctx.wc.Masks
	switch fields {
	case ofpact.HashEthSrc:
		m.SrcMAC = allOnesMAC
		return mix64(basis ^ macWord(f.SrcMAC))
	default:
		return ctx.hashSymmetricL4(basis)
	}
}

// bundle picks a live member port (active_backup: the first; hrw: the
// highest random weight of the flow's hash) and outputs to it, or loads
// it into a field (bundle_load). Open vSwitch's bundle_execute.
func (ctx *context) bundle(a *ofpact.Bundle) {
	member := uint32(mf.PortNone)
	switch a.Algorithm {
	case ofpact.BundleActiveBackup:
		for _, m := range a.Members {
			if p := ctx.br.Port(m); p != nil && p.Live {
				member = m
				break
			}
		}
	default:
		h := ctx.hashNXFields(a.Fields, uint64(a.Basis))
		best := uint64(0)
		for _, m := range a.Members {
			if p := ctx.br.Port(m); p != nil && p.Live {
				if w := mix64(h ^ uint64(m)); member == mf.PortNone || w > best {
					member, best = m, w
				}
			}
		}
	}
	if a.Dst.Field != nil {
		a.Dst.Unwildcard(ctx.wc)
		a.Dst.WriteUint(&ctx.flow, uint64(member))
		return
	}
	if member != mf.PortNone {
		ctx.output(member, 0)
	}
}
