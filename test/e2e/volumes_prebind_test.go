package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/yardmaster-io/yardmaster/internal/controlplane"
)

// A volume deleted while its pod waits in PreBind for the PV controller:
// the binding fails with the reason, the pod is retried and takes the next
// volume that fits, under kube-scheduler and yardmaster alike. The test
// has a control plane of its own without a PV controller, so that the pod
// waits in PreBind (the volume's claimRef written, the claim never bound)
// until the test deletes the volume.
func TestVolumeDeletedInPreBindMatchesKubeScheduler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plane, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatalf("start a control plane without controllers: %v", err)
	}
	t.Cleanup(func() {
		if err := plane.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})

	// outcome is the reason the pod got when its volume went, and the
	// volume it was given next.
	type outcome struct{ Reason, Next string }
	play := func(t *testing.T, kube bool) outcome {
		e := newEnvOn(t, plane)
		r := &volumeRun{e: e}
		for _, n := range []string{"a", "b"} {
			e.addNode(e.node(n).Capacity("8", "16Gi", 110).Label(v1.LabelHostname, e.ns+"-"+n))
		}
		r.localClass("local")
		r.localVolume("first", "local", "a", "10Gi")
		e.markAvailable(e.ns + "-first")
		r.volumeClaim("data", "local", "1Gi")
		if kube {
			e.startKubeScheduler()
		} else {
			e.startScheduler()
		}
		e.createPod(e.pod("p").Req("100m", "64Mi").PVC("data"))
		e.waitClaimRef(e.ns + "-first")
		e.deletePersistentVolume(e.ns + "-first")
		var out outcome
		out.Reason = e.waitEventContaining("p", "not found")
		r.localVolume("second", "local", "b", "10Gi")
		e.markAvailable(e.ns + "-second")
		e.waitClaimRef(e.ns + "-second")
		out.Next = "second"
		e.expectPending("p", time.Second)
		return out
	}
	var want, got outcome
	t.Run("kube-scheduler", func(t *testing.T) { want = play(t, true) })
	t.Run("yardmaster", func(t *testing.T) { got = play(t, false) })
	if t.Failed() {
		return
	}
	t.Logf("kube-scheduler: %+v", want)
	if got != want {
		t.Errorf("yardmaster %+v, kube-scheduler %+v", got, want)
	}
}

// markAvailable sets the volume's phase to Available, as the PV controller,
// which this control plane lacks, would.
func (e *env) markAvailable(pv string) {
	e.t.Helper()
	got, err := e.client.CoreV1().PersistentVolumes().Get(e.ctx, pv, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	got.Status.Phase = v1.VolumeAvailable
	if _, err := e.client.CoreV1().PersistentVolumes().UpdateStatus(e.ctx, got, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("mark %s Available: %v", pv, err)
	}
}

// waitClaimRef waits until a scheduler wrote the volume's claimRef.
func (e *env) waitClaimRef(pv string) {
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := e.client.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
		return err == nil && got.Spec.ClaimRef != nil, nil
	}); err != nil {
		e.t.Fatalf("no scheduler bound volume %s to a claim: %v", pv, err)
	}
}

// waitEventContaining waits for a FailedScheduling event of the pod whose
// message contains sub, and returns the message with the namespace taken
// out.
func (e *env) waitEventContaining(pod, sub string) string {
	e.t.Helper()
	var msg string
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := e.client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=FailedScheduling"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, sub) {
				msg = strings.ReplaceAll(ev.Message, e.ns+"-", "")
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		e.t.Fatalf("no FailedScheduling event of %s containing %q: %v", pod, sub, err)
	}
	return msg
}
