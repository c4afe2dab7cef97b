package procgroup

import "syscall"

// sysProcAttr makes the child the leader of a new process group, so Stop
// can kill it with anything it spawned, and has the kernel SIGKILL it when
// the thread that started it dies (see the package comment).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
