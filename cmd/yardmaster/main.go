// Command yardmaster is a Kubernetes scheduler for pods that name it in
// spec.schedulerName. See README.md. Run as kubectl-yardmaster (a symlink
// on the PATH), it is a kubectl plugin: `kubectl yardmaster explain POD`.
package main

import (
	"os"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

func main() {
	os.Exit(app.ExecuteArgv(os.Args))
}
