package app

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a WriteSyncer that counts its writes.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

// Sync fails as fsync fails on a pipe or a terminal.
func (b *syncBuffer) Sync() error { return errors.New("sync /dev/stderr: invalid argument") }

func (b *syncBuffer) read() (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.writes
}

func TestLoggerBuffersInfoAndWritesWarningsAtOnce(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		t.Run(format, func(t *testing.T) {
			out := &syncBuffer{}
			logger, err := newLoggerTo("info", format, out, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			for range 100 {
				logger.Info("pod bound")
			}
			logger.Debug("not at info")
			if got, _ := out.read(); got != "" {
				t.Fatalf("info lines written before a flush:\n%s", got)
			}
			logger.Warn("binding failed")
			got, writes := out.read()
			if n := strings.Count(got, "pod bound"); n != 100 || !strings.Contains(got, "binding failed") {
				t.Fatalf("after a warning the output has %d of 100 info lines, warning %t:\n%s", n, strings.Contains(got, "binding failed"), got)
			}
			if writes != 1 {
				t.Errorf("101 lines took %d writes, want 1", writes)
			}
			if strings.Contains(got, "write error") {
				t.Errorf("the logger reported its flush as an error:\n%s", got)
			}
			if strings.Contains(got, "not at info") {
				t.Error("a debug line was written at level info")
			}
			if strings.Index(got, "pod bound") > strings.Index(got, "binding failed") {
				t.Error("the warning came before the lines logged ahead of it")
			}
			logger.Info("last line")
			if err := logger.Sync(); err != nil {
				t.Fatal(err)
			}
			if got, _ := out.read(); !strings.Contains(got, "last line") {
				t.Errorf("Sync did not write the buffered line:\n%s", got)
			}
		})
	}
}

func TestLoggerFlushesOnItsInterval(t *testing.T) {
	out := &syncBuffer{}
	logger, err := newLoggerTo("info", "console", out, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("pod bound")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, _ := out.read(); strings.Contains(got, "pod bound") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a buffered line was not written within 10 s of a 10 ms flush interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLoggerRefusesBadSettings(t *testing.T) {
	if _, err := newLoggerTo("loud", "console", &syncBuffer{}, time.Second); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("level loud: err = %v, want one naming --log-level", err)
	}
	if _, err := newLoggerTo("info", "xml", &syncBuffer{}, time.Second); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("format xml: err = %v, want one naming --log-format", err)
	}
}
