package datapathtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// The 300 MB transfer: a sink (GVSDP_HELPER=sink) in one namespace and a
// source (GVSDP_HELPER=source) in another, both the test binary, speaking
// plain TCP; each prints one JSON transferReport line on stdout.

const (
	addrEnv  = "GVSDP_ADDR"  // host:port to listen on or connect to
	bytesEnv = "GVSDP_BYTES" // how much the source sends
	seedEnv  = "GVSDP_SEED"  // seed of the source's pseudo-random data
)

// transferTimeout bounds each side's whole run.
const transferTimeout = 90 * time.Second

// transferReport is what a side saw: bytes and their SHA-256.
type transferReport struct {
	Listening bool    `json:",omitempty"` // the sink's first line
	Bytes     int64   `json:",omitempty"`
	SHA256    string  `json:",omitempty"`
	Seconds   float64 `json:",omitempty"`
	Error     string  `json:",omitempty"`
}

func runSinkHelper(out, errOut io.Writer) int {
	enc := json.NewEncoder(out)
	fail := func(err error) int { _ = enc.Encode(transferReport{Error: err.Error()}); return 1 }
	ln, err := net.Listen("tcp4", os.Getenv(addrEnv))
	if err != nil {
		return fail(err)
	}
	defer ln.Close()
	_ = enc.Encode(transferReport{Listening: true})
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(transferTimeout))
	c, err := ln.Accept()
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(transferTimeout))
	start := time.Now()
	h := sha256.New()
	n, err := io.CopyBuffer(h, c, make([]byte, 1<<20))
	if err != nil {
		return fail(fmt.Errorf("after %d bytes: %w", n, err))
	}
	return encodeReport(enc, n, h.Sum(nil), start)
}

func runSourceHelper(out, errOut io.Writer) int {
	enc := json.NewEncoder(out)
	fail := func(err error) int { _ = enc.Encode(transferReport{Error: err.Error()}); return 1 }
	total, err := strconv.ParseInt(os.Getenv(bytesEnv), 10, 64)
	if err != nil {
		return fail(err)
	}
	seed, _ := strconv.ParseUint(os.Getenv(seedEnv), 10, 64)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	data := rand.NewChaCha8(key)
	c, err := net.DialTimeout("tcp4", os.Getenv(addrEnv), 10*time.Second)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(transferTimeout))
	start := time.Now()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var sent int64
	for sent < total {
		chunk := buf[:min(int64(len(buf)), total-sent)]
		_, _ = data.Read(chunk)
		h.Write(chunk)
		n, err := c.Write(chunk)
		sent += int64(n)
		if err != nil {
			return fail(fmt.Errorf("after %d bytes: %w", sent, err))
		}
	}
	// Half-close and wait for the sink to close: everything was read.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return fail(err)
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		return fail(fmt.Errorf("waiting for the sink to close: %w", err))
	}
	return encodeReport(enc, sent, h.Sum(nil), start)
}

func encodeReport(enc *json.Encoder, n int64, sum []byte, start time.Time) int {
	_ = enc.Encode(transferReport{Bytes: n, SHA256: hex.EncodeToString(sum), Seconds: time.Since(start).Seconds()})
	return 0
}

// helperProc is a running sink or source.
type helperProc struct {
	mode   string
	cmd    *exec.Cmd
	lines  *bufio.Scanner
	stderr *lockedBuffer
}

func startHelper(t testing.TB, ns, mode string, env ...string) (*helperProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ip", "netns", "exec", ns, exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	p := &helperProc{mode: mode, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p.lines = bufio.NewScanner(stdout)
	return p, nil
}

// report reads the helper's next line (the caller bounds the wait with
// the helper's own deadlines).
func (p *helperProc) report() (transferReport, error) {
	var r transferReport
	if !p.lines.Scan() {
		return r, fmt.Errorf("%s helper ended without a report: %v; stderr:\n%s", p.mode, p.lines.Err(), p.stderr.String())
	}
	if err := json.Unmarshal(p.lines.Bytes(), &r); err != nil {
		return r, fmt.Errorf("helper said %q: %v", p.lines.Text(), err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// transfer sends size bytes of pseudo-random data from srcNS to
// dstIP:port in dstNS and returns both sides' reports.
func transfer(t testing.TB, srcNS, dstNS, dstIP string, size int64) (sent, got transferReport, err error) {
	addr := net.JoinHostPort(dstIP, "5301")
	sink, err := startHelper(t, dstNS, "sink", addrEnv+"="+addr)
	if err != nil {
		return sent, got, err
	}
	if r, err := sink.report(); err != nil || !r.Listening {
		return sent, got, fmt.Errorf("sink: %v", err)
	}
	source, err := startHelper(t, srcNS, "source", addrEnv+"="+addr,
		bytesEnv+"="+strconv.FormatInt(size, 10), seedEnv+"="+strconv.Itoa(os.Getpid()))
	if err != nil {
		return sent, got, err
	}
	type result struct {
		r   transferReport
		err error
	}
	srcDone := make(chan result, 1)
	go func() { r, err := source.report(); srcDone <- result{r, err} }()
	got, err = sink.report()
	if err != nil {
		return sent, got, fmt.Errorf("sink: %w", err)
	}
	sr := <-srcDone
	if sr.err != nil {
		return sent, got, fmt.Errorf("source: %w", sr.err)
	}
	return sr.r, got, nil
}
