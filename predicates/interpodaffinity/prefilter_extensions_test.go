package interpodaffinity_test

import (
	"testing"

	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/predicates/interpodaffinity"
)

// Preemption's what-if (AddPod, RemovePod) must answer as PreFilter on a
// cluster that really lacks (or has) the pod: the pod's terms, existing
// pods' anti-affinity, the first pod of a group.
func TestPreFilterExtensionsMatchPreFilter(t *testing.T) {
	frameworktest.CheckPreFilterExtensions(t, 11, 1500, func(h *frameworktest.Handle) frameworktest.WhatIfFilter {
		pl, err := interpodaffinity.NewFilter(h)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	})
}
