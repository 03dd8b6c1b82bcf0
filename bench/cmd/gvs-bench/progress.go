package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress keeps one status line on a terminal (or prints stage changes
// as plain lines otherwise) and interleaves log lines with it.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	start    time.Time
	total    int
	done     int
	estimate time.Duration
	stage    string
	extra    string
}

func newProgress(w *os.File) *progress {
	st, err := w.Stat()
	return &progress{w: w, tty: err == nil && st.Mode()&os.ModeCharDevice != 0, start: time.Now()}
}

func (p *progress) setStage(run int, setup, step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage = fmt.Sprintf("run %d · %s · %s", run, setup, step)
	p.extra = ""
	if p.tty {
		p.redraw()
	} else if step == "start" {
		fmt.Fprintf(p.w, "[%s] %s\n", p.elapsed(), p.stage)
	}
}

func (p *progress) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.extra = s
	if p.tty {
		p.redraw()
	}
}

func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "[%s] %s\n", p.elapsed(), fmt.Sprintf(format, args...))
	if p.tty {
		p.redraw()
	}
}

// clear removes the status line before the final table.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progress) elapsed() string { return time.Since(p.start).Round(time.Second).String() }

func (p *progress) redraw() {
	line := fmt.Sprintf("[%s", p.elapsed())
	if p.estimate > 0 {
		line += fmt.Sprintf(" of ~%s", p.estimate.Round(time.Minute))
	}
	line += "]"
	if p.total > 0 {
		line += fmt.Sprintf(" %d/%d", p.done, p.total)
	}
	line += " " + p.stage
	if p.extra != "" {
		line += " (" + p.extra + ")"
	}
	fmt.Fprint(p.w, "\r\033[K"+line)
}
