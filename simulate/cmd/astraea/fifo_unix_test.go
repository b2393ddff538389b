//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestATraceFromAPipeIsReadOnce: a trace given as a FIFO (as with
// -trace /dev/stdin) feeds both policies and their zero-overhead twins,
// though it can be read only once.
func TestATraceFromAPipeIsReadOnce(t *testing.T) {
	const trace = "tenant,job,gpus,submit,duration\na,a1,8,0,600\nb,b1,8,10,600\nb,b2,4,20,300\n"
	dir := t.TempDir()
	quota := filepath.Join(dir, "quota.csv")
	if err := os.WriteFile(quota, []byte("tenant,weight\na,1\nb,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(f, trace)
		f.Close()
	}()
	var out bytes.Buffer
	err := run([]string{"-trace", fifo, "-quota", quota, "-policy", "astraea,fifo", "-nodes", "2", "-quiet"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "fifo") || !strings.Contains(out.String(), "astraea") {
		t.Fatalf("output lacks a policy:\n%s", out.String())
	}
}
