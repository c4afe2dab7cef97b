package promtest

import "syscall"

// sysProcAttr puts the server in its own process group, so Stop can kill it
// with anything it spawned, and has the kernel SIGKILL it when the thread
// that started it dies, so a crashed or killed test leaves no Prometheus
// behind. Pdeathsig follows the starting OS thread, not the process; the
// Go runtime retires a thread only when a goroutine exits while locked to
// it, which nothing in this module does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
