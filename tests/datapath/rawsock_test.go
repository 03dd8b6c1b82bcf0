package datapathtest

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSock is an AF_PACKET socket on one interface inside a namespace:
// it sends frames exactly as given (malformed ones too) and receives
// every frame with the VLAN tag the kernel may have stripped.
type rawSock struct {
	fd       int
	ifindex  int
	buf, oob []byte
}

// rawRcvBuf is the receive buffer of a rawSock.
const rawRcvBuf = 16 << 20

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openRaw opens the socket on dev in ns; cleanup closes it.
func openRaw(t testing.TB, ns, dev string) *rawSock {
	t.Helper()
	r := &rawSock{buf: make([]byte, 65536), oob: make([]byte, 256)}
	err := inNS(ns, func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		r.ifindex = ifi.Index
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		r.fd = fd
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
			return err
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
			return err
		}
		// Room for every frame a test sends before it reads (the
		// default 208 KiB holds about 20 jumbo frames).
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rawRcvBuf); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: r.ifindex})
	})
	if err != nil {
		t.Fatalf("AF_PACKET socket on %s in %s: %v", dev, ns, err)
	}
	t.Cleanup(func() { unix.Close(r.fd) })
	return r
}

// send transmits frame as is.
func (r *rawSock) send(frame []byte) error {
	return unix.Sendto(r.fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: r.ifindex, Protocol: htons(unix.ETH_P_ALL)})
}

// drain discards every frame already received.
func (r *rawSock) drain() {
	for {
		if _, _, _, _, err := unix.Recvmsg(r.fd, r.buf, r.oob, unix.MSG_DONTWAIT); err != nil {
			return
		}
	}
}

// recv waits until timeout for a frame that match accepts; vid is the
// VLAN ID the frame carried (-1 untagged), whether the kernel left the
// tag in the frame (then removed here) or moved it to metadata.
func (r *rawSock) recv(timeout time.Duration, match func(frame []byte, vid int) bool) ([]byte, int, error) {
	end := time.Now().Add(timeout)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil, 0, errors.New("no matching frame")
		}
		tv := unix.NsecToTimeval(left.Nanoseconds())
		if err := unix.SetsockoptTimeval(r.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return nil, 0, err
		}
		n, oobn, _, _, err := unix.Recvmsg(r.fd, r.buf, r.oob, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		frame, vid := untag(r.buf[:n], auxVLAN(r.oob[:oobn]))
		if match(frame, vid) {
			return append([]byte(nil), frame...), vid, nil
		}
	}
}

// auxVLAN returns the VLAN ID the kernel stripped into PACKET_AUXDATA,
// or -1.
func auxVLAN(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return -1
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA {
			continue
		}
		if len(m.Data) < int(unsafe.Sizeof(unix.TpacketAuxdata{})) {
			continue
		}
		aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
		if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
			return int(aux.Vlan_tci & 0x0fff)
		}
	}
	return -1
}

// untag removes an 802.1Q tag left in the frame.
func untag(frame []byte, vid int) ([]byte, int) {
	if vid < 0 && len(frame) >= 18 && binary.BigEndian.Uint16(frame[12:]) == unix.ETH_P_8021Q {
		vid = int(binary.BigEndian.Uint16(frame[14:]) & 0x0fff)
		frame = append(append([]byte(nil), frame[:12]...), frame[16:]...)
	}
	return frame, vid
}

// Frame builders. Checksums are computed; callers corrupt what they
// want afterwards.

// ethFrame builds an Ethernet frame, 802.1Q-tagged when vid >= 0.
func ethFrame(dst, src net.HardwareAddr, vid int, etherType uint16, payload []byte) []byte {
	f := append(append([]byte(nil), dst...), src...)
	if vid >= 0 {
		f = binary.BigEndian.AppendUint16(f, unix.ETH_P_8021Q)
		f = binary.BigEndian.AppendUint16(f, uint16(vid))
	}
	f = binary.BigEndian.AppendUint16(f, etherType)
	return append(f, payload...)
}

// ipv4Packet builds an IPv4 header (20 bytes, DF) in front of payload.
func ipv4Packet(src, dst string, proto byte, payload []byte) []byte {
	h := make([]byte, 20, 20+len(payload))
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	binary.BigEndian.PutUint16(h[6:], 0x4000)
	h[8] = 64
	h[9] = proto
	copy(h[12:16], net.ParseIP(src).To4())
	copy(h[16:20], net.ParseIP(dst).To4())
	binary.BigEndian.PutUint16(h[10:], ^inetSum(h))
	return append(h, payload...)
}

// icmpEcho builds an ICMP echo request with size bytes of data.
func icmpEcho(id, seq uint16, size int) []byte {
	m := make([]byte, 8+size)
	m[0] = 8
	binary.BigEndian.PutUint16(m[4:], id)
	binary.BigEndian.PutUint16(m[6:], seq)
	binary.BigEndian.PutUint16(m[2:], ^inetSum(m))
	return m
}

// isEchoReply reports whether frame (untagged) is an IPv4 ICMP echo
// reply from src with id and seq.
func isEchoReply(frame []byte, src string, id, seq uint16) bool {
	if len(frame) < 14+20+8 || binary.BigEndian.Uint16(frame[12:]) != unix.ETH_P_IP {
		return false
	}
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != unix.IPPROTO_ICMP || len(ip) < ihl+8 || !net.IP(ip[12:16]).Equal(net.ParseIP(src)) {
		return false
	}
	icmp := ip[ihl:]
	return icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == id && binary.BigEndian.Uint16(icmp[6:]) == seq
}
