package ofproto_test

import (
	"fmt"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
	"gvs/ofproto"
)

// A datapath with one NORMAL bridge over three ports: a broadcast from
// port 1 floods to the other two.
func Example() {
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 64, FrameSize: 2048})
	if err != nil {
		panic(err)
	}
	defer dp.Close()
	sw := ofproto.New(dp, nil)
	defer sw.Close()
	br, _ := sw.AddBridge("br0", ofproto.BridgeConfig{})

	var devs []*netdevtest.Device
	for _, name := range []string{"eth1", "eth2", "eth3"} {
		dev := netdevtest.MustNew(netdevtest.Config{Name: name})
		no, _ := dp.PortAdd(dev, dpif.AutoPortNo)
		br.AddPort(no, ofproto.PortConfig{}) // trunk of all VLANs
		devs = append(devs, dev)
	}
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06})
	devs[0].Inject(0, frame)
	for i, dev := range devs {
		fmt.Printf("port %d sent %d\n", i+1, len(dev.WaitSent(1, 100*time.Millisecond)))
	}
	fmt.Println("learned:", br.MACStats().Learned)
	// Output:
	// port 1 sent 0
	// port 2 sent 1
	// port 3 sent 1
	// learned: 1
}
