package datapathtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// helperEnv selects a helper mode when the test binary is started as a
// child process (see doc.go).
const helperEnv = "GVSDP_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	removeStaleNamespaces()
	os.Exit(m.Run())
}

func runHelper(mode string) int {
	switch mode {
	case "switch":
		return runSwitchHelper(os.Stdin, os.Stdout, os.Stderr)
	case "sink":
		return runSinkHelper(os.Stdout, os.Stderr)
	case "source":
		return runSourceHelper(os.Stdout, os.Stderr)
	}
	fmt.Fprintf(os.Stderr, "unknown %s=%q\n", helperEnv, mode)
	return 2
}

// removeStaleNamespaces deletes namespaces of this package left behind by
// a run that was killed before its cleanup: gvsdp<pid>-... whose pid is
// no longer alive. Others' namespaces are never touched.
func removeStaleNamespaces() {
	if os.Geteuid() != 0 {
		return
	}
	names, _ := filepath.Glob("/run/netns/" + nsPrefix + "*")
	for _, path := range names {
		name := filepath.Base(path)
		pidStr, _, ok := strings.Cut(strings.TrimPrefix(name, nsPrefix), "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + pidStr); err == nil {
			continue // that run is still going
		}
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
}
