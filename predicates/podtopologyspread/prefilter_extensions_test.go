package podtopologyspread_test

import (
	"testing"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/podtopologyspread"
)

// Preemption's what-if (AddPod, RemovePod) must answer as PreFilter on a
// cluster that really lacks (or has) the pod: counts, minimum, node
// inclusion policies.
func TestPreFilterExtensionsMatchPreFilter(t *testing.T) {
	frameworktest.CheckPreFilterExtensions(t, 12, 1500, func(h *frameworktest.Handle) frameworktest.WhatIfFilter {
		ts, err := podtopologyspread.NewSpread(podtopologyspread.DefaultArgs(), h)
		if err != nil {
			t.Fatal(err)
		}
		return podtopologyspread.NewFilter(ts)
	})
}
