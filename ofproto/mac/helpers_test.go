package mac

func mac(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

func srcMAC(i int) [6]byte {
	return [6]byte{0x02, 0x01, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}
