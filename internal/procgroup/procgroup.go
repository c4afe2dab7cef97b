// Package procgroup runs a child process whose lifetime its caller owns,
// for tests and harnesses that start real servers (etcd, kube-apiserver,
// Prometheus, yardmaster itself).
//
// The model: Start runs the child as the leader of a new process group
// (Setpgid), so its pid is also the group id, with stdout and stderr
// appended to a log file. Stop signals the whole group, SIGTERM and then
// SIGKILL after a grace period, and a last SIGKILL to the group takes any
// grandchild the leader left behind; a test that stops a server thus
// leaves no process of it running. On Linux the child also gets Pdeathsig
// SIGKILL: if the process that started it dies, the kernel kills the child,
// so a crashed or killed test binary leaves nothing behind either.
//
// Pdeathsig follows the OS thread that started the child, not the process:
// the kernel sends it when that thread exits. The Go runtime retires a
// thread only when a goroutine exits while locked to it
// (runtime.LockOSThread), so Start must not be called from such a
// goroutine; nothing in this module locks one.
//
// It is deliberately not exec.CommandContext: a cancelled context would
// SIGKILL only the leader, behind the back of the cleanup that owns it,
// with no grace period and no word to its children. Here a context bounds
// what the caller waits for, and Stop alone ends the process.
//
// FreePort and FreePorts pick loopback ports for such servers. A port is
// free only at the moment it is picked; another process may take it before
// the server binds it, and retrying is the caller's business, because only
// the caller can tell from the server's log that it lost that race.
package procgroup

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// killWait bounds the wait for the leader after SIGKILL; only a process
// stuck in the kernel (uninterruptible sleep) outlives it.
const killWait = 10 * time.Second

// Process is a child running as the leader of its own process group. Its
// methods are safe for concurrent use.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd.Wait returns
	waitErr error         // set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// Start runs path with args as the leader of a new process group, its
// stdout and stderr appended to logPath (created if missing). name is what
// errors and Stop call the process. The process runs until it exits or
// Stop ends it; see the package comment.
func Start(name, path string, args []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	// The child gets its own copy of the descriptor; an *os.File as
	// Stdout/Stderr also means no copying goroutine in this process.
	defer logFile.Close()

	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %q: %w", name, path, err)
	}
	p := &Process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Name returns the name given to Start.
func (p *Process) Name() string { return p.name }

// LogPath returns the path of the process's log.
func (p *Process) LogPath() string { return p.logPath }

// Pid returns the process id of the leader, which is also the id of its
// process group.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done returns a channel that is closed once the leader has exited and
// been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the leader has exited and, if it has, how: nil
// for status 0, else an *exec.ExitError (or the error of the wait).
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Signal sends sig to the leader alone, as kill(1) with its pid would; to
// end the whole group, use Stop. Once the leader has been reaped it
// returns os.ErrProcessDone.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s (pid %d): %w", sig, p.name, p.Pid(), err)
	}
	return nil
}

// Stop sends SIGTERM to the process group, SIGKILL after grace if the
// leader is still running, and waits for the leader. A final SIGKILL to
// the group takes any child the leader left behind, even when the leader
// had exited before Stop. A grace of zero or less skips SIGTERM. Stop may
// be called more than once; later calls return the first call's result.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(grace) })
	return p.stopErr
}

func (p *Process) stop(grace time.Duration) error {
	pgid := p.Pid() // Setpgid makes the leader's pid the group id.
	if ended, _ := p.Exited(); !ended && grace > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("%s (pid %d) still running %s after SIGKILL", p.name, pgid, killWait)
	}
}

// LogTail returns up to n bytes from the end of the process's log,
// starting at a line boundary when it cuts, for failure messages. A log
// that cannot be read yields a note saying why.
func (p *Process) LogTail(n int64) string { return logTail(p.logPath, n) }

func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	cut := false
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		if _, err := f.Seek(-n, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot read log: %v)", err)
		}
		cut = true
	}
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	// Drop the partial line that seeking into the middle of the file
	// leaves at the start.
	if i := bytes.IndexByte(b, '\n'); cut && i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct loopback TCP ports that were free a moment
// ago. The listeners are held until all are picked so the kernel cannot
// hand out one port twice; another process may still take one before the
// caller binds it (see the package comment).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
