//go:build unix && !linux

package promtest

import "syscall"

// sysProcAttr puts the server in its own process group, so Stop can kill it
// with anything it spawned. Only Linux can also tie its life to ours.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
