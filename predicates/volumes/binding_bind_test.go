package volumes

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
)

// bindWorld is one node, h1, with local volumes, and a fake API server
// that holds the same objects as the informers.
type bindWorld struct {
	t    *testing.T
	h    *frameworktest.Handle
	pl   *Binding
	node *v1.Node
}

func newBindWorld(t *testing.T, timeout int64, objects ...runtime.Object) *bindWorld {
	t.Helper()
	node := frameworktest.MakeNode().Name("n1").Label(v1.LabelHostname, "h1").Obj()
	h := frameworktest.NewHandle(frameworktest.NewSnapshot([]*v1.Node{node}, nil)).AddObjects(append(objects, node)...)
	for _, o := range objects {
		if err := h.Clientset.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	h.Clientset.PrependReactor("update", "*", optimisticConcurrency(h.Clientset.Tracker()))
	pl, err := NewBinding(&BindingArgs{BindTimeoutSeconds: &timeout}, h)
	if err != nil {
		t.Fatal(err)
	}
	return &bindWorld{t: t, h: h, pl: pl, node: node}
}

// optimisticConcurrency makes the fake API server do what the real one
// does on an update: refuse a stale resourceVersion with a conflict, and
// give the stored object a new one.
func optimisticConcurrency(tracker clienttesting.ObjectTracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		update := action.(clienttesting.UpdateAction)
		obj := update.GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), m.GetName())
		if err != nil {
			return true, nil, err
		}
		sm, _ := meta.Accessor(stored)
		if sm.GetResourceVersion() != m.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), m.GetName(), errors.New("the object has been modified"))
		}
		rv, _ := strconv.Atoi(m.GetResourceVersion())
		m.SetResourceVersion(strconv.Itoa(rv + 100))
		if err := tracker.Update(action.GetResource(), obj, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}

// cycle runs PreFilter, Filter and Reserve for pod on n1.
func (w *bindWorld) cycle(pod *v1.Pod) *framework.CycleState {
	w.t.Helper()
	state := framework.NewCycleState()
	ctx := context.Background()
	if _, st := w.pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		w.t.Fatalf("PreFilter: %v", st.Message())
	}
	ni := w.h.Lister.List()[0]
	if st := w.pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
		w.t.Fatalf("Filter: %v", st.Message())
	}
	if st := w.pl.Reserve(ctx, state, pod, "n1"); !st.IsSuccess() {
		w.t.Fatalf("Reserve: %v", st.Message())
	}
	return state
}

// chosen returns the volume Reserve assumed for claim in state.
func chosen(t *testing.T, state *framework.CycleState) string {
	t.Helper()
	s, err := framework.ReadAs[*volumeBindingState](state, volumeBindingStateKey)
	if err != nil || s.reserved == nil || len(s.reserved.static) != 1 {
		t.Fatalf("nothing reserved: %v", err)
	}
	return s.reserved.static[0].pv.Name
}

func localWorldObjects() []runtime.Object {
	class := frameworktest.MakeStorageClass("local", storagehelpers.NotSupportedProvisioner, storagev1.VolumeBindingWaitForFirstConsumer)
	return []runtime.Object{class,
		frameworktest.MakePV("small").Class("local").Capacity("5Gi").OnNode("h1").Version("10").Obj(),
		frameworktest.MakePV("large").Class("local").Capacity("10Gi").OnNode("h1").Version("11").Obj(),
		frameworktest.MakePVC("default", "c1").UID("c1-uid").Class("local").Request("4Gi").Version("20").Obj(),
		frameworktest.MakePVC("default", "c2").UID("c2-uid").Class("local").Request("4Gi").Version("21").Obj(),
	}
}

func podWith(name, claim string) *v1.Pod {
	return frameworktest.MakePod().Namespace("default").Name(name).UID(name + "-uid").PVC(claim).Obj()
}

// A volume Reserve assumed for one pod is taken for the next cycle's, and
// free again after Unreserve.
func TestVolumeBindingReserveTakesTheVolume(t *testing.T) {
	w := newBindWorld(t, 600, localWorldObjects()...)
	first := w.cycle(podWith("p1", "c1"))
	if got := chosen(t, first); got != "small" {
		t.Fatalf("p1 got %s, want the smallest volume that fits", got)
	}
	second := w.cycle(podWith("p2", "c2"))
	if got := chosen(t, second); got != "large" {
		t.Fatalf("p2 got %s while small is reserved for p1, want large", got)
	}
	w.pl.Unreserve(context.Background(), second, podWith("p2", "c2"), "n1")
	w.pl.Unreserve(context.Background(), first, podWith("p1", "c1"), "n1")
	if got := chosen(t, w.cycle(podWith("p2", "c2"))); got != "small" {
		t.Fatalf("after Unreserve p2 got %s, want small again", got)
	}
}

// PreBind writes the volume's claimRef and waits for the PV controller to
// bind the claim.
func TestVolumeBindingPreBindWaitsForTheController(t *testing.T) {
	w := newBindWorld(t, 600, localWorldObjects()...)
	pod := podWith("p1", "c1")
	state := w.cycle(pod)
	if st := w.pl.PreBindPreFlight(context.Background(), state, pod, "n1"); !st.IsSuccess() {
		t.Fatalf("PreBindPreFlight: %v, want Success", st)
	}
	done := make(chan *framework.Status, 1)
	go func() { done <- w.pl.PreBind(context.Background(), state, pod, "n1") }()

	// The write reaches the API.
	pv := w.claimRefWritten(t, "small")
	if ref := pv.Spec.ClaimRef; ref.Name != "c1" || ref.UID != "c1-uid" || pv.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Errorf("claimRef %+v, annotations %v", ref, pv.Annotations)
	}
	select {
	case st := <-done:
		t.Fatalf("PreBind returned %v before the claim was bound", st)
	case <-time.After(100 * time.Millisecond):
	}

	// The PV controller binds: the informers see both objects change.
	w.informerSees(pv)
	claim := frameworktest.MakePVC("default", "c1").UID("c1-uid").Class("local").Request("4Gi").Bound("small").Version("30").Obj()
	w.informerSees(claim)
	select {
	case st := <-done:
		if !st.IsSuccess() {
			t.Fatalf("PreBind: %v", st.Message())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("PreBind did not return once the claim was bound")
	}
}

// claimRefWritten waits for PreBind's write of the named volume's
// claimRef to reach the API, and returns the volume as written.
func (w *bindWorld) claimRefWritten(t *testing.T, name string) *v1.PersistentVolume {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := w.h.Clientset.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && got.Spec.ClaimRef != nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatal("PreBind never wrote the volume's claimRef")
		}
	}
}

// informerSees puts o in the informer's store and tells the cache, as the
// informer would.
func (w *bindWorld) informerSees(o runtime.Object) {
	w.t.Helper()
	w.h.AddObjects(o)
	switch o := o.(type) {
	case *v1.PersistentVolume:
		w.pl.cache.volumeChanged(o)
	case *v1.PersistentVolumeClaim:
		w.pl.cache.claimChanged(o)
	}
}

// PreBind fails clearly when the wait runs out, when the volume goes away
// meanwhile, and when the write conflicts.
func TestVolumeBindingPreBindFailures(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		w := newBindWorld(t, 1, localWorldObjects()...)
		pod := podWith("p1", "c1")
		state := w.cycle(pod)
		st := w.pl.PreBind(context.Background(), state, pod, "n1")
		want := `binding volumes: timed out after 1s waiting for the informer to see persistentvolume "small" bound to claim default/c1`
		if st.IsSuccess() || st.Message() != want {
			t.Errorf("PreBind: %q, want %q", st.Message(), want)
		}
	})
	t.Run("volume deleted", func(t *testing.T) {
		w := newBindWorld(t, 600, localWorldObjects()...)
		pod := podWith("p1", "c1")
		state := w.cycle(pod)
		done := make(chan *framework.Status, 1)
		go func() { done <- w.pl.PreBind(context.Background(), state, pod, "n1") }()
		time.Sleep(100 * time.Millisecond)
		pv, _ := w.pl.listers.volumes.Get("small")
		idx := w.h.Factory.Core().V1().PersistentVolumes().Informer().GetIndexer()
		if err := idx.Delete(pv); err != nil {
			t.Fatal(err)
		}
		w.pl.cache.volumeChanged(pv)
		select {
		case st := <-done:
			if want := `binding volumes: failed to check binding: persistentvolumes "small" not found`; st.Message() != want {
				t.Errorf("PreBind: %q, want %q", st.Message(), want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("PreBind did not notice the volume was deleted")
		}
	})
	t.Run("write conflict", func(t *testing.T) {
		w := newBindWorld(t, 600, localWorldObjects()...)
		pod := podWith("p1", "c1")
		state := w.cycle(pod)
		// Someone changed the volume since the informer saw it.
		stale, _ := w.h.Clientset.CoreV1().PersistentVolumes().Get(context.Background(), "small", metav1.GetOptions{})
		stale = stale.DeepCopy()
		stale.ResourceVersion = "99"
		if err := w.h.Clientset.Tracker().Update(v1.SchemeGroupVersion.WithResource("persistentvolumes"), stale, ""); err != nil {
			t.Fatal(err)
		}
		st := w.pl.PreBind(context.Background(), state, pod, "n1")
		// The API server's error as it is, as kube-scheduler reports it:
		// it names the object already.
		want := `Operation cannot be fulfilled on persistentvolumes "small": the object has been modified`
		if st.IsSuccess() || st.Message() != want {
			t.Errorf("PreBind: %q, want %q", st.Message(), want)
		}
	})
	t.Run("write refused", func(t *testing.T) {
		class := frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
		claim := frameworktest.MakePVC("default", "c1").UID("c1-uid").Class("csi").Request("4Gi").Version("20").Obj()
		w := newBindWorld(t, 600, class, claim)
		pod := podWith("p1", "c1")
		state := w.cycle(pod)
		refused := apierrors.NewForbidden(v1.Resource("persistentvolumeclaims"), "c1", errors.New("denied by policy"))
		w.h.Clientset.PrependReactor("update", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, refused
		})
		st := w.pl.PreBind(context.Background(), state, pod, "n1")
		if want := refused.Error(); st.IsSuccess() || st.Message() != want {
			t.Errorf("PreBind: %q, want %q", st.Message(), want)
		}
	})
}

// A claim the PV controller bound to another volume than the one PreBind
// wrote (an earlier attempt's, whose answer was lost) fails PreBind when
// the node does not reach that volume, and does not when it does.
func TestVolumeBindingPreBindClaimBoundElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		wantErr    string
	}{
		{name: "on another node", host: "h2", wantErr: `binding volumes: claim default/c1 got bound to pv "earlier", not "small", whose node affinity doesn't match node "n1"`},
		{name: "on the same node", host: "h1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newBindWorld(t, 600, localWorldObjects()...)
			pod := podWith("p1", "c1")
			state := w.cycle(pod)
			done := make(chan *framework.Status, 1)
			go func() { done <- w.pl.PreBind(context.Background(), state, pod, "n1") }()
			pv := w.claimRefWritten(t, "small")
			w.informerSees(pv)
			earlier := frameworktest.MakePV("earlier").Class("local").Capacity("5Gi").OnNode(tc.host).Version("40").Obj()
			earlier.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "c1", UID: "c1-uid"}
			w.informerSees(earlier)
			w.informerSees(frameworktest.MakePVC("default", "c1").UID("c1-uid").Class("local").Request("4Gi").Bound("earlier").Version("41").Obj())
			select {
			case st := <-done:
				if got := st.Message(); !strings.HasPrefix(got, tc.wantErr) || (tc.wantErr == "") != st.IsSuccess() {
					t.Errorf("PreBind: %q, want %q", got, tc.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("PreBind did not return once the claim was bound")
			}
		})
	}
}

// A claim to provision whose selected-node annotation is taken away while
// PreBind waits fails PreBind with kube-scheduler's message: "provisioning
// failed" when the claim still has other annotations (the external
// provisioner removes only that one when it gives up on the node, and the
// PV controller's storage-provisioner annotations stay), "annotation
// reset" only when it has none at all.
func TestVolumeBindingPreBindProvisioningGivenUp(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{
			name:        "the provisioner removed the selected node",
			annotations: map[string]string{storagehelpers.AnnStorageProvisioner: "csi.example.com"},
			want:        `binding volumes: provisioning failed for PVC "c1"`,
		},
		{
			name:        "the selected node moved",
			annotations: map[string]string{storagehelpers.AnnSelectedNode: "n2"},
			want:        `binding volumes: provisioning failed for PVC "c1"`,
		},
		{
			name: "every annotation removed",
			want: `binding volumes: selectedNode annotation reset for PVC "c1"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := frameworktest.MakeStorageClass("csi", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer)
			claim := frameworktest.MakePVC("default", "c1").UID("c1-uid").Class("csi").Request("4Gi").Version("20").Obj()
			w := newBindWorld(t, 600, class, claim)
			pod := podWith("p1", "c1")
			state := w.cycle(pod)
			done := make(chan *framework.Status, 1)
			go func() { done <- w.pl.PreBind(context.Background(), state, pod, "n1") }()
			written := w.selectedNodeWritten(t, "c1")
			given := written.DeepCopy()
			given.Annotations = tc.annotations
			given.ResourceVersion = "150" // after the write's
			w.informerSees(given)
			select {
			case st := <-done:
				if st.IsSuccess() || st.Message() != tc.want {
					t.Errorf("PreBind: %q, want %q", st.Message(), tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("PreBind did not notice the provisioner gave up")
			}
		})
	}
}

// selectedNodeWritten waits for PreBind's write of the claim's selected
// node to reach the API, and returns the claim as written.
func (w *bindWorld) selectedNodeWritten(t *testing.T, name string) *v1.PersistentVolumeClaim {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := w.h.Clientset.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && got.Annotations[storagehelpers.AnnSelectedNode] != "" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatal("PreBind never wrote the claim's selected node")
		}
	}
}
