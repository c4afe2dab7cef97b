// Command yardmaster is a Kubernetes scheduler for pods that name it in
// spec.schedulerName. See README.md.
package main

import (
	"os"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

func main() {
	os.Exit(app.Execute(os.Args[1:]))
}
