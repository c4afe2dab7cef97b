package deploy_test

import (
	"io/fs"
	"path"
	"slices"
	"testing"

	"github.com/yardmaster-io/yardmaster/config"
	"github.com/yardmaster-io/yardmaster/deploy"
	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/priorities/loadaware"
)

// The commented load-aware profile, uncommented as its comment says, makes
// a valid configuration whose second profile scores with TargetLoadPacking
// and LoadVariationRiskBalancing and filters with LoadHotSpot, with the
// arguments shown.
func TestConfigLoadAwareBlock(t *testing.T) {
	file, err := fs.ReadFile(deploy.FS, path.Join(deploy.Base, deploy.ConfigKey))
	if err != nil {
		t.Fatal(err)
	}
	uncommented, err := uncomment(string(file), "# BEGIN LoadAware", "# END LoadAware")
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Decode([]byte(uncommented))
	if err != nil {
		t.Fatalf("uncommented configuration: %v\n%s", err, uncommented)
	}
	if len(c.Profiles) != 2 || c.Profiles[1].SchedulerName != "yardmaster-load-aware" {
		t.Fatalf("profiles %d, want the default one and yardmaster-load-aware", len(c.Profiles))
	}
	p := c.Profiles[1]
	for _, name := range []string{loadaware.TargetLoadPackingName, loadaware.LoadVariationRiskBalancingName} {
		if !slices.ContainsFunc(p.Score, func(w framework.WeightedPlugin) bool { return w.Name == name }) {
			t.Errorf("%s does not score: %+v", name, p.Score)
		}
	}
	if !slices.Contains(p.Filter, loadaware.LoadHotSpotName) {
		t.Errorf("LoadHotSpot does not filter: %v", p.Filter)
	}
	tlp, ok := p.Args[loadaware.TargetLoadPackingName].(*loadaware.TargetLoadPackingArgs)
	if !ok || tlp.TargetUtilization != 40 || tlp.RequestsMultiplier() != 1.5 {
		t.Errorf("TargetLoadPacking args %+v, want Trimaran's defaults as shown", p.Args[loadaware.TargetLoadPackingName])
	}
	hot, ok := p.Args[loadaware.LoadHotSpotName].(*loadaware.LoadHotSpotArgs)
	if !ok || hot.CPUUtilizationAbove != 90 {
		t.Errorf("LoadHotSpot args %+v, want cpuUtilizationAbove 90", p.Args[loadaware.LoadHotSpotName])
	}
}
