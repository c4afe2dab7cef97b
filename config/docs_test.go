package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// docs/configuration.md's table of default plugins matches the registry:
// each default plugin has its row with its weight, marked as running. This
// fails when a later issue adds a plugin and leaves the page saying "not
// yet".
func TestDocsDefaultPlugins(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.Lines(string(data)) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) == 5 { // "| plugin | weight | yardmaster |"
			rows[strings.TrimSpace(cells[1])] = line
		}
	}
	for _, wp := range registry.DefaultPlugins() {
		row, ok := rows[wp.Name]
		if !ok {
			t.Errorf("docs/configuration.md has no row for default plugin %s", wp.Name)
			continue
		}
		weight := "–"
		if wp.Weight != 0 {
			weight = fmt.Sprint(wp.Weight)
		}
		if !strings.HasPrefix(strings.TrimSpace(row), fmt.Sprintf("| %s | %s | yes", wp.Name, weight)) {
			t.Errorf("docs/configuration.md row for %s is %q, want weight %s and yes", wp.Name, strings.TrimSpace(row), weight)
		}
	}
}
