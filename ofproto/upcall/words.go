package upcall

import (
	"unsafe"

	"gvs/packet"
)

const keyWordCount = int(unsafe.Sizeof(packet.Key{})) / 8

// keyWords views k as 64-bit words (packet.Key has no padding and is
// 8-byte aligned).
func keyWords(k *packet.Key) *[keyWordCount]uint64 {
	return (*[keyWordCount]uint64)(unsafe.Pointer(k))
}
