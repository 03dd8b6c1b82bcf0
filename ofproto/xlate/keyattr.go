package xlate

import (
	"unsafe"

	"gvs/dpif"
	"gvs/packet"
)

// copyAttr copies attr's fields (as dpif groups them) from src to dst.
func copyAttr(attr dpif.KeyAttr, dst, src *packet.Key) {
	switch attr {
	case dpif.AttrEthernet:
		dst.SrcMAC, dst.DstMAC = src.SrcMAC, src.DstMAC
	case dpif.AttrIPv4:
		dst.SrcIPv4, dst.DstIPv4 = src.SrcIPv4, src.DstIPv4
		dst.IPProto, dst.IPTOS, dst.IPTTL, dst.IPFrag = src.IPProto, src.IPTOS, src.IPTTL, src.IPFrag
	case dpif.AttrIPv6:
		dst.SrcIPv6, dst.DstIPv6, dst.FlowLabel = src.SrcIPv6, src.DstIPv6, src.FlowLabel
		dst.IPProto, dst.IPTOS, dst.IPTTL, dst.IPFrag = src.IPProto, src.IPTOS, src.IPTTL, src.IPFrag
	case dpif.AttrTCP, dpif.AttrUDP, dpif.AttrSCTP:
		dst.SrcPort, dst.DstPort = src.SrcPort, src.DstPort
	case dpif.AttrICMP, dpif.AttrICMPv6:
		dst.ICMPType, dst.ICMPCode = src.ICMPType, src.ICMPCode
	case dpif.AttrARP:
		dst.SrcIPv4, dst.DstIPv4, dst.ARPOp = src.SrcIPv4, src.DstIPv4, src.ARPOp
		dst.ARPSHA, dst.ARPTHA = src.ARPSHA, src.ARPTHA
	case dpif.AttrND:
		dst.NDTarget, dst.ARPSHA, dst.ARPTHA = src.NDTarget, src.ARPSHA, src.ARPTHA
	case dpif.AttrSkbMark:
		dst.PktMark = src.PktMark
	case dpif.AttrPriority:
		dst.SkbPriority = src.SkbPriority
	}
}

// copyAttrOr ORs attr's fields of src into dst: src holds only attr's
// fields (copyAttr made it), so a whole-key OR is exact.
func copyAttrOr(_ dpif.KeyAttr, dst, src *packet.Key) {
	dw, sw := keyWords(dst), keyWords(src)
	for i := range dw {
		dw[i] |= sw[i]
	}
}

const keyWordCount = int(unsafe.Sizeof(packet.Key{})) / 8

// keyWords views k as words (packet.Key has no padding and is 8-byte
// aligned; packet's own tests check it).
func keyWords(k *packet.Key) *[keyWordCount]uint64 {
	return (*[keyWordCount]uint64)(unsafe.Pointer(k))
}
