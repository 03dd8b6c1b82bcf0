// Package dpif will be the datapath interface: ports, the flow caches and
// classifier, and upcalls to the layer that decides what to do with a
// packet that matches no flow. Like Open vSwitch's lib/dpif.h, the
// datapath will hold no switching intelligence of its own.
//
// It is a placeholder: nothing lives here yet. It arrives with the issue
// that adds the datapath.
package dpif
