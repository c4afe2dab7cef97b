package procgroup

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a helper process instead of
// running tests; see TestPdeathsig.
const helperEnv = "PROCGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	goleak.VerifyTestMain(m)
}

// helperMain starts `sleep 60`, prints its pid and exits without stopping
// it, as a crashed test binary would.
func helperMain() int {
	p, err := Start("sleep", "sleep", []string{"60"}, os.Getenv(helperEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(p.Pid())
	return 0
}

// sh starts `sh -c script` with a log in a temporary directory and stops
// it when the test ends.
func sh(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start("sh", "sh", []string{"-c", script}, filepath.Join(t.TempDir(), "sh.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(0) })
	return p
}

// readPid waits for a pid to be written to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid names a process that has not yet exited. An
// orphan killed by Stop is reaped by init, not by the test, so a zombie
// counts as dead.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// Without /proc (not Linux) kill's answer stands; with it, the
		// process was reaped in between.
		_, noProc := os.Stat("/proc/self")
		return noProc != nil
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// waitGone fails the test unless pid has exited within a few seconds.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %d) still running", what, pid)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop ends the leader and its grandchild, whichever of them ignores
// SIGTERM, and takes the grace period only when the leader ignores it.
func TestStopKillsGroup(t *testing.T) {
	const grace = 500 * time.Millisecond
	tests := []struct {
		name string
		// script starts a grandchild, writes its pid to $1 and waits.
		script string
		// wantGrace is whether Stop waits out the grace period.
		wantGrace bool
	}{
		{
			name:   "both end on SIGTERM",
			script: `sleep 60 & echo $! > "$0"; wait`,
		},
		{
			name:   "grandchild ignores SIGTERM",
			script: `(trap "" TERM; exec sleep 60) & echo $! > "$0"; wait`,
		},
		{
			name:      "leader ignores SIGTERM",
			script:    `trap "" TERM; sleep 60 & echo $! > "$0"; wait`,
			wantGrace: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
			p, err := Start("sh", "sh", []string{"-c", tt.script, pidFile}, filepath.Join(t.TempDir(), "sh.log"))
			if err != nil {
				t.Fatal(err)
			}
			leader, grandchild := p.Pid(), readPid(t, pidFile)
			if pgid, err := syscall.Getpgid(grandchild); err != nil || pgid != leader {
				t.Fatalf("grandchild's process group = %d (%v), want the leader's pid %d", pgid, err, leader)
			}

			start := time.Now()
			if err := p.Stop(grace); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			took := time.Since(start)
			if tt.wantGrace && took < grace {
				t.Errorf("Stop took %v, want at least the grace period %v", took, grace)
			}
			if !tt.wantGrace && took >= grace {
				t.Errorf("Stop took %v, want less than the grace period %v", took, grace)
			}
			if ended, _ := p.Exited(); !ended {
				t.Error("Exited() = false after Stop")
			}
			waitGone(t, "leader", leader)
			waitGone(t, "grandchild", grandchild)
			if err := p.Stop(grace); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

// The final SIGKILL to the group takes a grandchild whose leader had
// already exited before Stop.
func TestStopAfterLeaderExited(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	p := sh(t, `sleep 60 & echo $! > "`+pidFile+`"`)
	grandchild := readPid(t, pidFile)
	<-p.Done()
	if !alive(grandchild) {
		t.Fatal("the grandchild died with its leader; the test proves nothing")
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "grandchild", grandchild)
}

// Signal addresses the leader alone; Stop is what ends the group.
func TestSignal(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	p := sh(t, `sleep 60 & echo $! > "`+pidFile+`"; wait`)
	grandchild := readPid(t, pidFile)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader is still running after SIGTERM")
	}
	var exitErr *exec.ExitError
	if _, err := p.Exited(); !errors.As(err, &exitErr) {
		t.Errorf("Exited() error = %v, want an *exec.ExitError", err)
	}
	if !alive(grandchild) {
		t.Error("the grandchild died of a signal sent to the leader alone")
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after exit = %v, want os.ErrProcessDone", err)
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "grandchild", grandchild)
}

func TestExited(t *testing.T) {
	p := sh(t, `exit 3`)
	<-p.Done()
	ended, err := p.Exited()
	var exitErr *exec.ExitError
	if !ended || !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("Exited() = %v, %v; want true, exit status 3", ended, err)
	}

	p = sh(t, `exit 0`)
	<-p.Done()
	if ended, err := p.Exited(); !ended || err != nil {
		t.Errorf("Exited() = %v, %v; want true, nil", ended, err)
	}
}

// A child of a process that dies without stopping it is killed by the
// kernel.
func TestPdeathsig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+filepath.Join(t.TempDir(), "helper.log"))
	out, err := helper.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper printed %q, want a pid", out)
	}
	waitGone(t, "child of the exited helper", pid)
	if alive(pid) { // leave no sleep behind when the test fails
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, logPath, want string
	}{
		{"missing binary", filepath.Join(dir, "missing"), filepath.Join(dir, "a.log"), `starting x "` + dir},
		{"log dir missing", "sh", filepath.Join(dir, "no", "a.log"), "opening x log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start("x", tt.path, nil, tt.logPath)
			if err == nil {
				_ = p.Stop(0)
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// The log takes stdout and stderr, appended to what the file held.
func TestLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "sh.log")
	if err := os.WriteFile(logPath, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Start("sh", "sh", []string{"-c", `echo out; echo err >&2`}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if p.LogPath() != logPath || p.Name() != "sh" {
		t.Errorf("LogPath(), Name() = %q, %q; want %q, %q", p.LogPath(), p.Name(), logPath, "sh")
	}
	if got, want := p.LogTail(1<<10), "before\nout\nerr\n"; got != want {
		t.Errorf("LogTail(1KiB) = %q, want %q", got, want)
	}
}

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // "" means no file
		n       int64
		want    string
	}{
		{name: "whole log fits", content: "a\nb\n", n: 4, want: "a\nb\n"},
		// The last 5 bytes are "b\ncc\n"; the partial line "b" goes.
		{name: "cut at a line boundary", content: "aa\nbb\ncc\n", n: 5, want: "cc\n"},
		// The last 6 bytes start exactly at a line; it still goes, as
		// the cut cannot tell.
		{name: "cut on a line start", content: "aa\nbb\ncc\n", n: 6, want: "cc\n"},
		{name: "one long line is kept whole", content: "abcdefgh", n: 3, want: "fgh"},
		{name: "missing log", n: 10, want: "(cannot read log: "},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strconv.Itoa(i)+".log")
			if tt.content != "" {
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := logTail(path, tt.n)
			if tt.content == "" {
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("logTail = %q, want prefix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("logTail(%q, %d) = %q, want %q", tt.content, tt.n, got, tt.want)
			}
		})
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 3 || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("FreePorts(3) = %v, want 3 distinct ports", ports)
	}
	one, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range append(ports, one) {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d is not free: %v", port, err)
			continue
		}
		l.Close()
	}
}
