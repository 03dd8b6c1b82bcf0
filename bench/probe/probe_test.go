package probe

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestInternetChecksum(t *testing.T) {
	// RFC 1071's example: the sum of these words is ddf2, complement 220d.
	data := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := InternetChecksum(data); got != 0x220d {
		t.Errorf("checksum = %#04x, want 0x220d", got)
	}
	// A message carrying its own checksum sums to zero.
	msg := echoRequest(0x1234, 7)
	if got := InternetChecksum(msg); got != 0 {
		t.Errorf("checksum over a checksummed echo request = %#04x, want 0", got)
	}
	if msg[0] != 8 || binary.BigEndian.Uint16(msg[4:]) != 0x1234 || binary.BigEndian.Uint16(msg[6:]) != 7 {
		t.Errorf("echo request header %x", msg[:8])
	}
}

func TestFlowTuplesAreNew(t *testing.T) {
	seen := map[[2]uint16]bool{}
	for i := range flowSrcPorts * FlowPorts {
		src, dst := FlowTuple(i)
		if dst < FlowBasePort || dst >= FlowBasePort+FlowPorts || src < flowFirstSrcPort {
			t.Fatalf("flow %d: ports %d -> %d out of range", i, src, dst)
		}
		k := [2]uint16{src, dst}
		if seen[k] {
			t.Fatalf("flow %d repeats %v", i, k)
		}
		seen[k] = true
	}
}

func TestUnknownCommand(t *testing.T) {
	if IsCommand("_nope") || !IsCommand("_ping") {
		t.Error("IsCommand disagrees with the command table")
	}
}

func TestFlagErrors(t *testing.T) {
	var out bytes.Buffer
	for name, args := range map[string][]string{
		"_ping":      {"-dst", "not-an-ip"},
		"_flow-send": {"-dst", "198.18.0.2", "-rate", "0"},
		"_rr-client": {"-dst", "198.18.0.2", "-proto", "sctp"},
		"_txoff":     {},
	} {
		if err := commands[name](args, &out); err == nil {
			t.Errorf("%s %s succeeded", name, strings.Join(args, " "))
		}
	}
}
