package probe

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Legacy ethtool ioctl commands: setting tx checksumming off through them
// goes through the kernel's feature logic like `ethtool -K DEV tx off`,
// which also drops TSO (it depends on checksum offload).
const (
	ethtoolGetTxCsum = 0x16
	ethtoolSetTxCsum = 0x17
)

type ethtoolValue struct {
	cmd  uint32
	data uint32
}

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte
}

// txOffMain: _txoff DEV... turns tx checksum offload off on each device of
// the current namespace and checks that it stuck.
func txOffMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("txoff", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: _txoff DEV...")
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for _, dev := range fs.Args() {
		if err := ethtool(fd, dev, &ethtoolValue{cmd: ethtoolSetTxCsum, data: 0}); err != nil {
			return fmt.Errorf("%s: set tx off: %w", dev, err)
		}
		v := ethtoolValue{cmd: ethtoolGetTxCsum}
		if err := ethtool(fd, dev, &v); err != nil {
			return fmt.Errorf("%s: get tx: %w", dev, err)
		}
		if v.data != 0 {
			return fmt.Errorf("%s: tx checksum offload still on", dev)
		}
	}
	return writeJSON(stdout, map[string]any{"tx_off": fs.Args()})
}

func ethtool(fd int, dev string, v *ethtoolValue) error {
	var req ifreqData
	if len(dev) >= len(req.name) {
		return fmt.Errorf("device name too long")
	}
	copy(req.name[:], dev)
	req.data = uintptr(unsafe.Pointer(v))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	runtime.KeepAlive(v)
	if errno != 0 {
		return errno
	}
	return nil
}
