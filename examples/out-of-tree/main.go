// Command yardmaster-nodepool is yardmaster with one plugin more,
// NodePool: every command, flag and setting of yardmaster, and a
// KubeSchedulerConfiguration that may enable, weigh and configure
// NodePool like any built-in plugin (scheduler-config.yaml).
package main

import (
	"os"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"

	"example.com/yardmaster-nodepool/nodepool"
)

func main() {
	os.Exit(app.ExecuteArgv(os.Args, app.WithPlugin(nodepool.Registration())))
}
