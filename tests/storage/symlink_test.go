package storagetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// debianLayout makes dir/etc/conf.db a symbolic link to dir/lib/conf.db,
// which does not exist, as Debian's package leaves /etc/openvswitch
// before the first start, and returns the link and its target.
func debianLayout(t *testing.T, dir string) (link, target string) {
	t.Helper()
	for _, d := range []string{"etc", "lib"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link, target = filepath.Join(dir, "etc", "conf.db"), filepath.Join(dir, "lib", "conf.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link, target
}

func requireSymlink(t *testing.T, link, target string) {
	t.Helper()
	if dest, err := os.Readlink(link); err != nil || dest != target {
		t.Fatalf("%s is no longer a link to %s: %q %v", link, target, dest, err)
	}
}

// gvs-vswitchd (embedded database) and gvs-ovsdb-server start on a conf.db
// that is a link to a file not created yet: they create the target as
// `ovsdb-tool create` does, the link stays a link, ovsdb-tool reads the
// target, compaction writes through the link, and a restart serves what
// was committed.
func TestStartsThroughDanglingConfDBLink(t *testing.T) {
	needTools(t, ovsdbTool, ovsdbClient, ovsAppctl, ovsVsctl)
	for _, daemon := range []string{"gvs-ovsdb-server", "gvs-vswitchd"} {
		t.Run(daemon, func(t *testing.T) {
			dir := newDir(t)
			link, target := debianLayout(t, dir)
			start := func() *server {
				if daemon == "gvs-vswitchd" {
					return startVswitchd(t, dir, filepath.Dir(link))
				}
				return startServer(t, bin.server, dir, link)
			}
			s := start()
			requireSymlink(t, link, target)
			if out := run(t, nil, ovsdbTool, "db-name", target); out != "Open_vSwitch\n" {
				t.Fatalf("ovsdb-tool db-name of the target: %q", out)
			}
			vsctl(t, s, "init")
			vsctl(t, s, "set", "Open_vSwitch", ".", "external_ids:layout=debian")
			churn(t, s, 20)
			want := dumpColumn(t, s, "Open_vSwitch", "external_ids")
			if r := appctl(t, s, "ovsdb-server/compact"); r.code != 0 {
				t.Fatalf("compact: %+v", r)
			}
			requireSymlink(t, link, target)
			out := showLog(t, link)
			if !startsWithSnapshot(out) {
				t.Fatalf("show-log through the link after compaction:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "lib", ".conf.db.~lock~")); err != nil {
				t.Errorf("lock file not beside the target: %v", err)
			}
			s.kill()
			s = start()
			requireSymlink(t, link, target)
			if got := dumpColumn(t, s, "Open_vSwitch", "external_ids"); got != want || !strings.Contains(got, "layout=debian") {
				t.Fatalf("after restart:\n%s\nwant:\n%s", got, want)
			}
			s.stop(t)
		})
	}
}

// gvs-ovsdb-server creates only conf.db behind a dangling link (the
// Open_vSwitch database Debian lays out so); any other dangling link, like
// a missing file, is fatal with the message of Debian's ovsdb-server.
func TestOtherDanglingLinkIsFatal(t *testing.T) {
	needTools(t, debianServer)
	dir := newDir(t)
	link := filepath.Join(dir, "other.db")
	if err := os.Symlink(filepath.Join(dir, "missing.db"), link); err != nil {
		t.Fatal(err)
	}
	for _, binary := range []string{debianServer, bin.server} {
		_, err := startServerErr(binary, dir, link)
		if err == nil {
			t.Fatalf("%s started on a dangling link", binary)
		}
		if want := "I/O error: " + link + ": open failed (No such file or directory)"; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", filepath.Base(binary), err, want)
		}
		if _, err := os.Lstat(filepath.Join(dir, "missing.db")); err == nil {
			t.Fatalf("%s created the target of other.db", binary)
		}
	}
}
