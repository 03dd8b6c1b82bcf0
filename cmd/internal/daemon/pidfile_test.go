package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestPidfileLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.pid")
	pf, err := CreatePidfile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(path)
	if string(content) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("content %q", content)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	if err := pf.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile not removed: %v", err)
	}
}

func TestStalePidfileIsReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.pid")
	// Nobody holds a lock on this one: its daemon is gone.
	os.WriteFile(path, []byte("999999\n"), 0o644)
	if _, err := ReadPidfile(path); err == nil {
		t.Error("stale pidfile read as live")
	}
	pf, err := CreatePidfile(path, false)
	if err != nil {
		t.Fatalf("stale pidfile not replaced: %v", err)
	}
	defer pf.Remove()
}
