package probe

import (
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"time"
)

// PingResult is what _ping prints.
type PingResult struct {
	Sent     int       `json:"sent"`
	Received int       `json:"received"`
	RTTMicro []float64 `json:"rtt_us"` // one per reply, in send order
}

// pingMain: _ping -dst IP [-count N] [-interval D] [-timeout D] sends ICMP
// echo requests from a raw socket, one at a time, and records each round
// trip.
func pingMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ping", flag.ContinueOnError)
	dst := fs.String("dst", "", "destination IPv4 address")
	count := fs.Int("count", 20, "echo requests to send")
	interval := fs.Duration("interval", 50*time.Millisecond, "time between requests")
	timeout := fs.Duration("timeout", time.Second, "wait for each reply at most")
	if err := fs.Parse(args); err != nil {
		return err
	}
	addr := net.ParseIP(*dst).To4()
	if addr == nil {
		return errors.New("-dst must be an IPv4 address")
	}
	conn, err := net.ListenPacket("ip4:icmp", "0.0.0.0")
	if err != nil {
		return err
	}
	defer conn.Close()
	id := uint16(os.Getpid())
	res := PingResult{}
	buf := make([]byte, 1500)
	for seq := range *count {
		if seq > 0 {
			time.Sleep(*interval)
		}
		req := echoRequest(id, uint16(seq))
		start := time.Now()
		if _, err := conn.WriteTo(req, &net.IPAddr{IP: addr}); err != nil {
			return err
		}
		res.Sent++
		if rtt, ok := awaitReply(conn, buf, id, uint16(seq), start, *timeout); ok {
			res.Received++
			res.RTTMicro = append(res.RTTMicro, float64(rtt.Nanoseconds())/1e3)
		}
	}
	return writeJSON(stdout, res)
}

func awaitReply(conn net.PacketConn, buf []byte, id, seq uint16, start time.Time, timeout time.Duration) (time.Duration, bool) {
	conn.SetReadDeadline(start.Add(timeout))
	for {
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			return 0, false
		}
		rtt := time.Since(start)
		// The ip4:icmp socket delivers the ICMP message without the IP header.
		if n >= 8 && buf[0] == 0 && binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == seq {
			return rtt, true
		}
	}
}

// echoRequest builds an ICMP echo request with a 56-byte payload, like
// ping(8)'s default.
func echoRequest(id, seq uint16) []byte {
	msg := make([]byte, 8+56)
	msg[0] = 8
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	for i := 8; i < len(msg); i++ {
		msg[i] = byte(i)
	}
	binary.BigEndian.PutUint16(msg[2:], InternetChecksum(msg))
	return msg
}

// InternetChecksum is the RFC 1071 one's complement sum of b.
func InternetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}
