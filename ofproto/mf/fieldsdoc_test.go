package mf

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/openflow-fields.md from the registry")

const fieldsDocPath = "../../docs/openflow-fields.md"

// fieldsDoc renders the registry as the table of supported fields.
func fieldsDoc() string {
	var s strings.Builder
	s.WriteString(`# OpenFlow match fields supported by gvs

Generated from ofproto/mf's field registry (` + "`go test ./ofproto/mf -run TestFieldsDoc -update`" + `);
a test fails when this file and the registry disagree.

Every field below can be matched (NXM, OXM, flow syntax) with Open vSwitch's
name, width, masking and prerequisites; "writable" fields can be set by
set_field, load, move and learn. Fields Open vSwitch has that gvs's datapath
key cannot carry are not supported: MPLS (mpls_label, mpls_tc, mpls_bos,
mpls_ttl), NSH (nsh_*), ERSPAN and GTP-U tunnel fields, and packet types
other than Ethernet. Only one tunnel metadata option fits the key: the codecs
accept tun_metadata0 alone.

| field | alias | bits | maskable | writable | prerequisite | NXM/OXM headers |
|---|---|---|---|---|---|---|
`)
	prereqNames := map[Prereq]string{
		PrereqNone: "", PrereqEthernet: "Ethernet", PrereqARP: "ARP", PrereqVLANVID: "VLAN VID",
		PrereqIPv4: "IPv4", PrereqIPv6: "IPv6", PrereqIPAny: "IPv4/IPv6", PrereqTCP: "TCP", PrereqUDP: "UDP",
		PrereqSCTP: "SCTP", PrereqICMPv4: "ICMPv4", PrereqICMPv6: "ICMPv6", PrereqCTValid: "CT",
		PrereqND: "ND", PrereqNDSolicit: "ND solicit", PrereqNDAdvert: "ND advert",
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return ""
	}
	for i := range Fields() {
		fd := &Fields()[i]
		if fd.isVariableLength() && fd.ID != TunMetadata0 {
			continue
		}
		var hs []string
		for _, h := range fd.allHeaders() {
			if h.Version == neverSent || h.Version == 0 {
				hs = append(hs, h.Name)
			} else {
				hs = append(hs, fmt.Sprintf("%s (OF1.%d+)", h.Name, h.Version-1))
			}
		}
		fmt.Fprintf(&s, "| %s | %s | %d | %s | %s | %s | %s |\n", fd.Name, fd.ExtraName, fd.Bits,
			yes(fd.Maskable), yes(fd.Writable), prereqNames[fd.Prereq], strings.Join(hs, ", "))
	}
	return s.String()
}

// The fields document matches the registry.
func TestFieldsDoc(t *testing.T) {
	want := fieldsDoc()
	if *updateDocs {
		if err := os.WriteFile(fieldsDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(fieldsDocPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date: run go test ./ofproto/mf -run TestFieldsDoc -update", fieldsDocPath)
	}
}
