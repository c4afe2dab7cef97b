//go:build unix && !linux

package controlplane

import "syscall"

// sysProcAttr puts a child in its own process group, so Stop can kill it
// with anything it spawned. Only Linux can also tie its life to ours.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
