package tap

import (
	"os"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
)

func openT(t testing.TB, cfg Config) *Device {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func exists(name string) bool {
	_, err := os.Stat("/sys/class/net/" + name)
	return err == nil
}

func TestInternalCreatedUpAndDeletedOnClose(t *testing.T) {
	env := nettest.New(t)
	name := env.IfName("i0")
	t.Cleanup(func() { _ = nettest.Try("ip", "link", "del", name) })
	d := openT(t, Config{Name: name, Type: "internal"})
	if l := d.Link(); !l.AdminUp || l.IfIndex == 0 {
		t.Errorf("internal port link %+v, want admin up", l)
	}
	if st := d.Status(); st["driver_name"] != "tun" {
		t.Errorf("Status() = %v, want driver_name tun", st)
	}
	if d.Type() != "internal" || d.Capabilities().VnetHdr != true {
		t.Errorf("Type %q caps %+v", d.Type(), d.Capabilities())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !nettest.WaitGone(name, 2*time.Second) {
		t.Errorf("internal port %s still exists after Close", name)
	}
}

func TestTapExistingIsKept(t *testing.T) {
	env := nettest.New(t)
	name := env.IfName("t0")
	env.Run("ip", "tuntap", "add", "mode", "tap", "name", name)
	t.Cleanup(func() { _ = nettest.Try("ip", "link", "del", name) })
	d := openT(t, Config{Name: name, Type: "tap"})
	if d.Link().AdminUp {
		t.Errorf("an existing tap was brought up")
	}
	d.Close()
	time.Sleep(50 * time.Millisecond)
	if !exists(name) {
		t.Errorf("existing tap %s was deleted by Close", name)
	}
}

func TestTapMissingIsCreated(t *testing.T) {
	env := nettest.New(t)
	name := env.IfName("t1")
	d := openT(t, Config{Name: name, Type: "tap"})
	if !exists(name) {
		t.Fatalf("tap %s not created", name)
	}
	d.Close()
	if !nettest.WaitGone(name, 2*time.Second) {
		t.Errorf("tap %s we created survived Close", name)
	}
}

func TestBadType(t *testing.T) {
	if _, err := Open(Config{Name: "x", Type: "system"}); err == nil {
		t.Error("Open with type system succeeded")
	}
}

// TestKeepOnCloseAndTakeBack: a device KeepOnClose kept outlives Close
// (ovs-vswitchd's plain exit); the next Open takes it back as its own, so
// its Close removes it (a deleted port, exit --cleanup). A device someone
// else made is not taken: it stays after both.
func TestKeepOnCloseAndTakeBack(t *testing.T) {
	env := nettest.New(t)
	name := env.IfName("k0")
	t.Cleanup(func() { _ = nettest.Try("ip", "link", "del", name) })
	d, err := Open(Config{Name: name, Type: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	d.KeepOnClose()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if !exists(name) {
		t.Fatal("kept device gone after Close")
	}
	d, err = Open(Config{Name: name, Type: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !nettest.WaitGone(name, 2*time.Second) {
		t.Error("a device taken back was not removed by Close")
	}

	other := env.IfName("k1")
	env.Run("ip", "tuntap", "add", "mode", "tap", "name", other)
	t.Cleanup(func() { _ = nettest.Try("ip", "link", "del", other) })
	d, err = Open(Config{Name: other, Type: "tap"})
	if err != nil {
		t.Fatal(err)
	}
	d.KeepOnClose()
	d.Close()
	d, err = Open(Config{Name: other, Type: "tap"})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	time.Sleep(50 * time.Millisecond)
	if !exists(other) {
		t.Error("someone else's tap was removed")
	}
}
