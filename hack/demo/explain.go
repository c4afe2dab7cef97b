package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/yardmaster-io/yardmaster/cmd/yardmaster/app"
)

// maxExplained bounds how many pending pods the demo explains: one per
// workload, the first few.
const maxExplained = 3

// explainPending ends the demo: `kubectl yardmaster explain` for one
// pending pod of each workload that has some, through a kubectl-yardmaster
// symlink to the binary (as a user installs the plugin), reading the
// cluster with the demo's configuration file. A pod that still fits
// nowhere is the answer exit code 2 (app.ExitPending), not a failure;
// exit code 0 (it would fit now: the cluster changed since its last
// attempt) is shown too; any other code fails the demo.
func explainPending(ctx context.Context, client kubernetes.Interface, binary, outDir, kubeconfig, configPath string) error {
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var names []string
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || seen[workloadOf(p)] {
			continue
		}
		seen[workloadOf(p)] = true
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		step("No pod is pending: nothing to explain")
		return nil
	}
	if len(names) > maxExplained {
		names = names[:maxExplained]
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	plugin := filepath.Join(outDir, "kubectl-yardmaster")
	_ = os.Remove(plugin)
	if err := os.Symlink(abs, plugin); err != nil {
		return fmt.Errorf("make the kubectl plugin: %w", err)
	}
	step(fmt.Sprintf("Why are they Pending? `kubectl yardmaster explain` (%s, a symlink to %s) for %s", plugin, binary, strings.Join(names, ", ")))
	for _, name := range names {
		args := []string{"explain", "pod/" + name, "-n", namespace, "--config", configPath, "--kubeconfig", kubeconfig}
		fmt.Printf("\n$ kubectl yardmaster %s\n", strings.Join(args[:4], " "))
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, plugin, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			fmt.Print(out.String())
			fmt.Println("(exit code 0: it would be placed now)")
		case errors.As(err, &exit) && exit.ExitCode() == app.ExitPending:
			fmt.Print(out.String())
			fmt.Println("(exit code 2: it would stay Pending)")
		default:
			return fmt.Errorf("kubectl yardmaster explain %s: %w\n%s", name, err, out.String())
		}
	}
	return nil
}
