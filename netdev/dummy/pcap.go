package dummy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Pcap file constants, as Open vSwitch's lib/pcap-file.c writes them:
// microsecond timestamps in host byte order, Ethernet link type.
const (
	pcapMagic        = 0xa1b2c3d4
	pcapMagicSwapped = 0xd4c3b2a1
	pcapNanoMagic    = 0xa1b23c4d
	pcapSnapLen      = 1518
	pcapLinkEthernet = 1
	pcapHeaderLen    = 24
	pcapRecordLen    = 16
	// maxPcapRecord bounds a record ReadPcap accepts, so a corrupt length
	// cannot make it allocate gigabytes.
	maxPcapRecord = 256 << 10
)

// pcapWriter appends frames to a pcap file. Write does not allocate: the
// record header lives in the writer.
type pcapWriter struct {
	mu   sync.Mutex
	f    *os.File
	hdr  [pcapRecordLen]byte
	path string
	refs int // a writer shared by rxq_pcap and tx_pcap (options:pcap)
}

// openPcap opens path for appending and writes the file header when the
// file is new or empty.
func openPcap(path string) (*pcapWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: failed to open pcap file for writing (%w)", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() == 0 {
		var h [pcapHeaderLen]byte
		binary.NativeEndian.PutUint32(h[0:], pcapMagic)
		binary.NativeEndian.PutUint16(h[4:], 2)
		binary.NativeEndian.PutUint16(h[6:], 4)
		// thiszone and sigfigs stay 0.
		binary.NativeEndian.PutUint32(h[16:], pcapSnapLen)
		binary.NativeEndian.PutUint32(h[20:], pcapLinkEthernet)
		if _, err := f.Write(h[:]); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &pcapWriter{f: f, path: path, refs: 1}, nil
}

// Write appends one record: the whole frame, as ovs_pcap_write does (it
// does not cut at the snap length either).
func (w *pcapWriter) Write(frame []byte) error {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return os.ErrClosed
	}
	binary.NativeEndian.PutUint32(w.hdr[0:], uint32(now.Unix()))
	binary.NativeEndian.PutUint32(w.hdr[4:], uint32(now.Nanosecond()/1000))
	binary.NativeEndian.PutUint32(w.hdr[8:], uint32(len(frame)))
	binary.NativeEndian.PutUint32(w.hdr[12:], uint32(len(frame)))
	if _, err := w.f.Write(w.hdr[:]); err != nil {
		return err
	}
	_, err := w.f.Write(frame)
	return err
}

// release closes the file when its last user lets go.
func (w *pcapWriter) release() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refs--
	if w.refs > 0 || w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// ErrPcap is wrapped by every error ReadPcap returns for a malformed file.
var ErrPcap = errors.New("malformed pcap file")

// ReadPcap reads every frame of a pcap file (either byte order,
// microsecond or nanosecond timestamps), as Open vSwitch's ovs-pcap and
// tests read what tx_pcap wrote. A truncated last record is an error.
func ReadPcap(r io.Reader) ([][]byte, error) {
	var h [pcapHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrPcap, err)
	}
	var order binary.ByteOrder
	switch magic := binary.LittleEndian.Uint32(h[:]); magic {
	case pcapMagic, pcapNanoMagic:
		order = binary.LittleEndian
	case pcapMagicSwapped, 0x4d3cb2a1:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%w: bad magic 0x%08x", ErrPcap, magic)
	}
	if link := order.Uint32(h[20:]); link != pcapLinkEthernet {
		return nil, fmt.Errorf("%w: link type %d, not Ethernet", ErrPcap, link)
	}
	var frames [][]byte
	for {
		var rec [pcapRecordLen]byte
		_, err := io.ReadFull(r, rec[:])
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, fmt.Errorf("%w: record header: %v", ErrPcap, err)
		}
		caplen := order.Uint32(rec[8:])
		if caplen > maxPcapRecord {
			return frames, fmt.Errorf("%w: record of %d bytes", ErrPcap, caplen)
		}
		frame := make([]byte, caplen)
		if _, err := io.ReadFull(r, frame); err != nil {
			return frames, fmt.Errorf("%w: record data: %v", ErrPcap, err)
		}
		frames = append(frames, frame)
	}
}

func removeFile(path string) { os.Remove(path) }
