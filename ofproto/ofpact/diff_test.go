package ofpact

import (
	"math/rand"
	"testing"
)

// TestMutatedActionsAgainstOVS flips random bytes of the hand-written
// cases and the encodings of the built actions and requires gvs to agree
// with OVS on every result: the same error, or the same text and the same
// re-encoding.
func TestMutatedActionsAgainstOVS(t *testing.T) {
	needOVS(t)
	n := 1000
	if testing.Short() {
		n = 50
	}
	var seeds [][]byte
	seeds = append(seeds, hexCases(t, of10Cases)...)
	seeds = append(seeds, hexCases(t, of13Cases)...)
	seeds = append(seeds, hexCases(t, of15Cases)...)
	rng := rand.New(rand.NewSource(1))
	for _, version := range []uint8{of10, of11, of12, of13, of14, of15} {
		for _, acts := range builtActions(t) {
			if b := AppendActions(nil, acts, version); len(b) > 0 {
				seeds = append(seeds, b)
			}
		}
	}
	for _, version := range []uint8{of10, of11, of12, of13, of14, of15} {
		var inputs [][]byte
		for i := 0; i < n; i++ {
			b := append([]byte(nil), seeds[rng.Intn(len(seeds))]...)
			for k := rng.Intn(3) + 1; k > 0; k-- {
				pos := rng.Intn(len(b))
				if pos < 4 && rng.Intn(4) != 0 {
					pos += 4 // keep most mutations out of the type/length
				}
				if pos < len(b) {
					b[pos] = byte(rng.Intn(256))
				}
			}
			inputs = append(inputs, b)
		}
		compareWithOVS(t, false, version, inputs)
	}
}

// TestMutatedInstructionsAgainstOVS does the same for instruction lists,
// which ovs-ofctl also checks against an empty match in table 0.
func TestMutatedInstructionsAgainstOVS(t *testing.T) {
	needOVS(t)
	n := 1000
	if testing.Short() {
		n = 50
	}
	seeds := hexCases(t, of13Instructions)
	for _, acts := range builtActions(t) {
		seeds = append(seeds, AppendInstructions(nil, append(acts, &GotoTable{TableID: 4}), of13))
	}
	rng := rand.New(rand.NewSource(3))
	for _, version := range []uint8{of11, of12, of13, of14, of15} {
		var inputs [][]byte
		for i := 0; i < n; i++ {
			b := append([]byte(nil), seeds[rng.Intn(len(seeds))]...)
			for k := rng.Intn(3) + 1; k > 0; k-- {
				pos := rng.Intn(len(b))
				b[pos] = byte(rng.Intn(256))
			}
			inputs = append(inputs, b)
		}
		compareWithOVS(t, true, version, inputs)
	}
}

// TestRestructuredActionsAgainstOVS concatenates action lists and drops or
// inserts 8-byte chunks, so lengths and boundaries go wrong, and compares
// with OVS as above.
func TestRestructuredActionsAgainstOVS(t *testing.T) {
	needOVS(t)
	var seeds [][]byte
	seeds = append(seeds, hexCases(t, of10Cases)...)
	seeds = append(seeds, hexCases(t, of13Cases)...)
	for _, acts := range builtActions(t) {
		seeds = append(seeds, AppendActions(nil, acts, of13))
	}
	rng := rand.New(rand.NewSource(4))
	for _, version := range []uint8{of10, of13, of15} {
		var inputs [][]byte
		for i := 0; i < 1000; i++ {
			a := seeds[rng.Intn(len(seeds))]
			b := seeds[rng.Intn(len(seeds))]
			var in []byte
			switch rng.Intn(3) {
			case 0: // concatenate
				in = append(append([]byte(nil), a...), b...)
			case 1: // drop an 8-byte chunk
				if len(a) < 16 {
					continue
				}
				k := rng.Intn(len(a)/8) * 8
				in = append(append([]byte(nil), a[:k]...), a[k+8:]...)
			case 2: // insert 8 random bytes
				k := rng.Intn(len(a)/8+1) * 8
				chunk := make([]byte, 8)
				rng.Read(chunk)
				in = append(append(append([]byte(nil), a[:k]...), chunk...), a[k:]...)
			}
			if len(in) > 0 {
				inputs = append(inputs, in)
			}
		}
		compareWithOVS(t, false, version, inputs)
	}
}
