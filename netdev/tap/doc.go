// Package tap is the "internal" and "tap" port types: a Linux tap device
// driven through /dev/net/tun, opened with IFF_TAP|IFF_NO_PI|IFF_VNET_HDR
// and TUNSETOFFLOAD (partial checksums, TSO4/6, ECN), so the host's TCP
// reaches the datapath as 64 KiB GSO frames with their virtio_net_hdr
// instead of being segmented and checksummed in software.
//
// Open attaches to the named device and creates it if missing (both types,
// as Open vSwitch does). A device it created is not persistent: closing
// the descriptor removes it, so Close deletes exactly the devices Open
// created and leaves pre-existing ones (ip tuntap add) in place.
// KeepOnClose makes Close leave a device it created too (persistent, its
// alias "gvs: kept by exit"), as ovs-vswitchd's plain exit leaves its
// taps; the next Open takes such a device back as its own (persistence
// and alias cleared), so that deleting the port or exit --cleanup then
// removes it. An
// "internal" port it creates is brought administratively up; Config.MAC or
// SetMAC sets its address.
//
// Recv reads one frame per read(2) directly into a buffer from the
// caller's pool (the kernel's copy is the only one), until the batch is
// full or the device is empty; Send writes one frame per write(2), with
// the virtio_net_hdr built in the buffer's headroom. Frames over MTU +
// Ethernet + one VLAN header that are not GSO are dropped and counted
// (TxDrops). RxKernelDrops is the device's own tx_dropped since Open:
// frames the kernel could not queue for us, read with a netlink query on
// every Stats call (StatsWithin: when the last is older than its maxAge);
// the MTU Send checks against follows that read, SetMTU and RefreshMTU.
//
// One queue. The descriptor is non-blocking and is the PollFD. A tap
// device has no socket buffer: SetSocketBuffers only reports the request.
//
// Goroutines: as in package netdev. Recv and Send do not allocate
// (forward_test.go, TestRecvSendNoAllocs).
package tap
