package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopGracePeriod is how long a component gets between SIGTERM and SIGKILL.
// kube-apiserver drains in about a second when nothing holds it; a test
// suite should not wait longer for a process whose state is thrown away.
const stopGracePeriod = 5 * time.Second

// killWait bounds the wait after SIGKILL; only a process stuck in the
// kernel outlives it.
const killWait = 10 * time.Second

// logTailBytes is how much of a component's log goes into a start error.
const logTailBytes = 4 << 10

// errPortInUse marks a start that lost the race for a port picked as free.
var errPortInUse = errors.New("port already in use")

// process is a child in its own process group whose lifetime Stop owns.
// It is deliberately not an exec.CommandContext: a cancelled test context
// must not kill a control plane behind the back of its cleanup.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when cmd.Wait returns
	waitErr error         // set before done is closed
}

// startProcess runs path with args, stdout and stderr appended to logPath.
func startProcess(name, path string, args []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	// The child gets its own copy of the descriptor; an *os.File as
	// Stdout/Stderr also means no copying goroutine in this process.
	defer logFile.Close()

	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %q: %w", name, path, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, SIGKILL after grace, and waits
// for the leader. A final SIGKILL to the group takes any child the leader
// left behind.
func (p *process) stop(grace time.Duration) error {
	pgid := p.pid() // Setpgid makes the leader's pid the group id.
	if ended, _ := p.exited(); !ended {
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

// exitError describes a process that ended while it should be serving,
// with the tail of its log; it wraps errPortInUse when the log says so.
func (p *process) exitError() error {
	_, waitErr := p.exited()
	tail := logTail(p.logPath, logTailBytes)
	err := fmt.Errorf("%s exited early (%v); tail of %q:\n%s", p.name, waitErr, p.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// logTail returns up to n bytes from the end of the file at path.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		if _, err := f.Seek(-n, io.SeekEnd); err != nil {
			return fmt.Sprintf("(cannot read log: %v)", err)
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	// Start at a line boundary after seeking into the middle of the file.
	if i := bytes.IndexByte(b, '\n'); int64(len(b)) == n && i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Listeners are held until all are picked so the kernel cannot hand out
// one port twice; another process may still take one before the component
// binds it, which Start answers with a retry.
func freePorts(n int) ([]int, error) {
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
