package afxdp

import (
	"fmt"
	"log/slog"
	"strconv"

	"golang.org/x/sys/unix"
)

// XDPMode says how the XDP program is attached and the socket bound; the
// names are the values of Open vSwitch's options:xdp-mode.
type XDPMode string

const (
	// ModeBestEffort tries native (driver) XDP, then generic (SKB) XDP,
	// both in copy mode; on veth generic first (see preferGeneric). The
	// default.
	ModeBestEffort XDPMode = "best-effort"
	// ModeNative insists on driver XDP, copy mode.
	ModeNative XDPMode = "native"
	// ModeGeneric uses generic (SKB) XDP, copy mode.
	ModeGeneric XDPMode = "generic"
	// ModeNativeZeroCopy insists on driver XDP and a zero-copy bind (veth
	// refuses it with EOPNOTSUPP).
	ModeNativeZeroCopy XDPMode = "native-with-zerocopy"
)

// Defaults for the zero fields of Config.
const (
	// DefaultRingSize is the number of descriptors in each of the four
	// rings of a socket, and the number of receive and transmit chunks.
	DefaultRingSize = 2048
	// maxRingSize keeps one queue's UMEM below 256 MiB.
	maxRingSize = 32768
)

// Config opens one AF_XDP device. Zero fields take the defaults.
type Config struct {
	Name string // kernel interface name; it must exist
	// Queues is n_rxq: how many queues (sockets) to open, from queue 0
	// up. Each gets four rings and reserves 2 × RingSize chunks of the
	// UMEM. 0 means 1.
	Queues int
	// XDPMode is options:xdp-mode; "" means ModeBestEffort.
	XDPMode XDPMode
	// TxBatchSize is options:tx-batch-size: descriptors per transmit kick
	// (1..packet.BatchSize); 0 means DefaultTxBatchSize().
	TxBatchSize int
	// RingSize is the size of each ring, a power of two; 0 means
	// DefaultRingSize.
	RingSize int
	// UMEM is the group whose UMEM the sockets share (see UMEMGroup);
	// nil, or a device the group cannot take (full, MTU beyond its
	// chunks, zero-copy, sharing refused), gets a private UMEM.
	UMEM *UMEMGroup
	// PrivateUMEM is options:xdp-shared-umem=false: ignore UMEM.
	PrivateUMEM bool
	Logger      *slog.Logger // nil: slog.Default()
}

// ConfigFromOptions builds a Config from an Interface's options column
// (n_rxq, xdp-mode, tx-batch-size, and gvs's xdp-shared-umem: true, the
// default, or false); unknown keys are ignored, as Open vSwitch ignores
// options another port type would use. The caller sets UMEM.
func ConfigFromOptions(name string, options map[string]string, logger *slog.Logger) (Config, error) {
	cfg := Config{Name: name, Logger: logger}
	if v, ok := options["n_rxq"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("%s: invalid n_rxq %q", name, v)
		}
		cfg.Queues = n
	}
	if v, ok := options["xdp-mode"]; ok {
		cfg.XDPMode = XDPMode(v)
	}
	if v, ok := options["xdp-shared-umem"]; ok {
		shared, err := strconv.ParseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: invalid xdp-shared-umem %q (want true or false)", name, v)
		}
		cfg.PrivateUMEM = !shared
	}
	if v, ok := options["tx-batch-size"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: invalid tx-batch-size %q", name, v)
		}
		cfg.TxBatchSize = n
	}
	_, err := cfg.withDefaults()
	return cfg, err
}

func (c Config) withDefaults() (Config, error) {
	if c.Queues <= 0 {
		c.Queues = 1
	}
	switch c.XDPMode {
	case "":
		c.XDPMode = ModeBestEffort
	case ModeBestEffort, ModeNative, ModeGeneric, ModeNativeZeroCopy:
	default:
		return c, fmt.Errorf("%s: unknown xdp-mode %q (want best-effort, native, generic or native-with-zerocopy)", c.Name, c.XDPMode)
	}
	if c.TxBatchSize == 0 {
		c.TxBatchSize = DefaultTxBatchSize()
	}
	if c.TxBatchSize < 1 || c.TxBatchSize > maxTxBatch {
		return c, fmt.Errorf("%s: tx-batch-size %d out of range 1..%d", c.Name, c.TxBatchSize, maxTxBatch)
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.RingSize < 64 || c.RingSize > maxRingSize || c.RingSize&(c.RingSize-1) != 0 {
		return c, fmt.Errorf("%s: ring size %d is not a power of two in 64..%d", c.Name, c.RingSize, maxRingSize)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// DefaultTxBatchSize is how many descriptors one transmit kick puts in
// flight when options:tx-batch-size is not set: what the running kernel
// drains per sendto in copy mode (KernelTxBudget). Open vSwitch queued 32
// per kick on kernels that drained 16 and lost TCP sessions; Send also
// kicks again until the ring is empty, so a wrong guess costs a kick, not
// a stall (see the package doc). 16 on a kernel that drains 32 took about
// 5% more CPU per forwarded frame (BenchmarkForwarderTCP).
func DefaultTxBatchSize() int {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return KernelTxBudget("")
	}
	return KernelTxBudget(unix.ByteSliceToString(u.Release[:]))
}

// KernelTxBudget is how many descriptors a kernel of this release (uname
// -r) transmits per sendto on a copy-mode AF_XDP socket: TX_BATCH_SIZE in
// net/xdp/xsk.c, 16 until Linux 5.13 raised it to 32 ("xsk: align xdp
// socket batch size with dpdk"). An unreadable release gets 16, which no
// kernel drains less than.
func KernelTxBudget(release string) int {
	var major, minor int
	if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err != nil {
		return 16
	}
	if major > 5 || major == 5 && minor >= 13 {
		return 32
	}
	return 16
}
