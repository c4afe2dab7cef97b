//go:build unix && !linux

package procgroup

import "syscall"

// sysProcAttr makes the child the leader of a new process group, so Stop
// can kill it with anything it spawned. Only Linux can also tie its life
// to ours.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
