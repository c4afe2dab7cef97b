package volumes

// VolumeBinding's view of PersistentVolumes and claims.
//
// The model is kube-scheduler's assume cache: the informers' objects, with
// the binder's own decisions laid over them from Reserve until the
// informer delivers another version of the object (the binder's write
// coming back, or anyone else's change), or Unreserve takes them back. A
// volume assumed for one pod is therefore taken for every later cycle,
// before its claimRef reaches the API.
//
// On top of that, per storage class, an index of the volumes a claim can
// be bound to, so that Filter looks at a node's own volumes rather than at
// every volume of the class (kube-scheduler scans them all for every
// node). Available volumes are filed by the node label their node
// affinity pins (a local volume's hostname, a zonal disk's zone) and
// sorted by size, so the smallest volume a node can use is among the
// first few of one or two short lists; volumes with a claimRef are filed
// under that claim. The index belongs to the scheduling goroutine: it is
// brought up to date in PreFilter from the volumes that changed since, and
// read by Filter's workers, which never change it. Everyone else (the
// informer handlers, Unreserve on a bind worker) only marks volumes dirty.

import (
	"fmt"
	"slices"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/yardmaster-io/yardmaster/framework"
)

// volumeCache holds the assumed volumes and claims, the index and the
// waiters of PreBind. All methods are safe for concurrent use except
// syncIndex and classIndex, which only the scheduling goroutine calls.
type volumeCache struct {
	listers storageListers

	mu          sync.Mutex
	assumedPVs  map[string]*v1.PersistentVolume
	assumedPVCs map[string]*v1.PersistentVolumeClaim
	// dirty are the volumes changed since the index last looked.
	dirty map[string]struct{}
	// waiters are woken when the object of their key changes.
	waiters map[string]map[*waiter]struct{}

	// The index, owned by the scheduling goroutine.
	classes map[string]*classIndex
	// filed is the entry each volume is filed under, by name.
	filed map[string]*pvEntry
}

// waiter is one PreBind waiting for objects to change.
type waiter struct {
	ch chan struct{}
}

func newVolumeCache(listers storageListers) *volumeCache {
	return &volumeCache{
		listers:     listers,
		assumedPVs:  map[string]*v1.PersistentVolume{},
		assumedPVCs: map[string]*v1.PersistentVolumeClaim{},
		dirty:       map[string]struct{}{},
		waiters:     map[string]map[*waiter]struct{}{},
		classes:     map[string]*classIndex{},
		filed:       map[string]*pvEntry{},
	}
}

// Keys of waited-for objects.
func pvKey(name string) string             { return "pv/" + name }
func pvcKey(namespace, name string) string { return "pvc/" + namespace + "/" + name }

// volumeChanged is the PV informer's handler: an assumed version older
// than the informer's expires, the index looks at the volume again, and
// PreBinds waiting for it look again.
func (c *volumeCache) volumeChanged(obj any) {
	name, rv, ok := objectNameAndVersion(obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVs[name]; ok && a.ResourceVersion != rv {
		delete(c.assumedPVs, name)
	}
	c.dirty[name] = struct{}{}
	c.wakeLocked(pvKey(name))
}

// claimChanged is the PVC informer's handler.
func (c *volumeCache) claimChanged(obj any) {
	key, rv, ok := objectNameAndVersion(obj)
	if !ok {
		return
	}
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVCs[key]; ok && a.ResourceVersion != rv {
		delete(c.assumedPVCs, key)
	}
	c.wakeLocked(pvcKey(ns, name))
}

// objectNameAndVersion returns an informer object's key and its
// resourceVersion, "" for a deleted one.
func objectNameAndVersion(obj any) (key, rv string, ok bool) {
	if t, isTombstone := obj.(toolscache.DeletedFinalStateUnknown); isTombstone {
		return t.Key, "", true
	}
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return o.Name, o.ResourceVersion, true
	case *v1.PersistentVolumeClaim:
		return o.Namespace + "/" + o.Name, o.ResourceVersion, true
	}
	return "", "", false
}

// handlers returns the informer handlers of kind's objects; deletions pass
// a version that matches nothing.
func (c *volumeCache) handlers(changed func(any)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, newObj any) { changed(newObj) },
		DeleteFunc: func(obj any) {
			switch o := obj.(type) {
			case *v1.PersistentVolume:
				changed(toolscache.DeletedFinalStateUnknown{Key: o.Name, Obj: o})
			case *v1.PersistentVolumeClaim:
				changed(toolscache.DeletedFinalStateUnknown{Key: o.Namespace + "/" + o.Name, Obj: o})
			default:
				changed(obj)
			}
		},
	}
}

// getPV returns the volume as the scheduler sees it: the assumed version
// while it is the latest, else the informer's.
func (c *volumeCache) getPV(name string) (*v1.PersistentVolume, error) {
	pv, err := c.listers.volumes.Get(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVs[name]; ok && a.ResourceVersion == pv.ResourceVersion {
		return a, nil
	}
	return pv, nil
}

// getPVC returns the claim as the scheduler sees it.
func (c *volumeCache) getPVC(namespace, name string) (*v1.PersistentVolumeClaim, error) {
	pvc, err := c.listers.claims.PersistentVolumeClaims(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVCs[namespace+"/"+name]; ok && a.ResourceVersion == pvc.ResourceVersion {
		return a, nil
	}
	return pvc, nil
}

// informerPV returns the informer's version of the volume, with
// kube-scheduler's assume cache's not-found error.
func (c *volumeCache) informerPV(name string) (*v1.PersistentVolume, error) {
	pv, err := c.listers.volumes.Get(name)
	if isNotFound(err) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
	}
	return pv, err
}

// informerPVC returns the informer's version of the claim, with
// kube-scheduler's assume cache's not-found error.
func (c *volumeCache) informerPVC(namespace, name string) (*v1.PersistentVolumeClaim, error) {
	pvc, err := c.listers.claims.PersistentVolumeClaims(namespace).Get(name)
	if isNotFound(err) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, namespace+"/"+name)
	}
	return pvc, err
}

// assumePV lays pv over the informer's version, which must be the one pv
// was made from.
func (c *volumeCache) assumePV(pv *v1.PersistentVolume) error {
	stored, err := c.listers.volumes.Get(pv.Name)
	if err != nil {
		return err
	}
	if stored.ResourceVersion != pv.ResourceVersion {
		return fmt.Errorf("persistentvolume %q is out of sync (stored: %s, assumed: %s)", pv.Name, stored.ResourceVersion, pv.ResourceVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assumedPVs[pv.Name] = pv
	c.dirty[pv.Name] = struct{}{}
	return nil
}

// assumePVC lays claim over the informer's version.
func (c *volumeCache) assumePVC(claim *v1.PersistentVolumeClaim) error {
	stored, err := c.listers.claims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
	if err != nil {
		return err
	}
	if stored.ResourceVersion != claim.ResourceVersion {
		return fmt.Errorf("persistentvolumeclaim %s/%s is out of sync (stored: %s, assumed: %s)", claim.Namespace, claim.Name, stored.ResourceVersion, claim.ResourceVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assumedPVCs[claim.Namespace+"/"+claim.Name] = claim
	return nil
}

// restorePV drops the assumed version of pv, if it is the one assumed.
func (c *volumeCache) restorePV(pv *v1.PersistentVolume) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVs[pv.Name]; ok && a.ResourceVersion == pv.ResourceVersion {
		delete(c.assumedPVs, pv.Name)
		c.dirty[pv.Name] = struct{}{}
	}
}

// restorePVC drops the assumed version of claim, if it is the one assumed.
func (c *volumeCache) restorePVC(claim *v1.PersistentVolumeClaim) {
	key := claim.Namespace + "/" + claim.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumedPVCs[key]; ok && a.ResourceVersion == claim.ResourceVersion {
		delete(c.assumedPVCs, key)
	}
}

// watch returns a waiter woken when any object of keys changes, and a
// function that unregisters it.
func (c *volumeCache) watch(keys []string) (*waiter, func()) {
	w := &waiter{ch: make(chan struct{}, 1)}
	c.mu.Lock()
	for _, k := range keys {
		if c.waiters[k] == nil {
			c.waiters[k] = map[*waiter]struct{}{}
		}
		c.waiters[k][w] = struct{}{}
	}
	c.mu.Unlock()
	return w, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, k := range keys {
			delete(c.waiters[k], w)
			if len(c.waiters[k]) == 0 {
				delete(c.waiters, k)
			}
		}
	}
}

func (c *volumeCache) wakeLocked(key string) {
	for w := range c.waiters[key] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// compareVersions compares two resourceVersions as the API server's
// versioner does (they are integers); a version that does not parse
// compares as equal.
func compareVersions(a, b string) int {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// pvEntry is one volume as the index files it.
type pvEntry struct {
	pv    *v1.PersistentVolume
	class string
	size  resource.Quantity
	// affinity is the volume's required node affinity; nil when it has
	// none, and then it fits every node.
	affinity *framework.NodeSelector
	// Where the entry is filed: under its claim (claimKey set), by the
	// label it pins (pinKey set), or among the unpinned.
	claimKey  string
	pinKey    string
	pinValues []string
}

// fitsNode reports whether the volume's node affinity admits a node with
// these labels, as component-helpers' CheckNodeAffinity does.
func (e *pvEntry) fitsNode(nodeLabels map[string]string) bool {
	return e.affinity == nil || e.affinity.MatchNodeLabels(nodeLabels)
}

// classIndex files the volumes of one storage class.
type classIndex struct {
	// claimed are the volumes with a claimRef, by the claim's
	// namespace/name, sorted by name.
	claimed map[string][]*pvEntry
	// unpinned are the available volumes whose node affinity pins no
	// label, sorted by size and name.
	unpinned []*pvEntry
	// pinned are the available volumes by pinned label key and value,
	// each list sorted by size and name.
	pinned map[string]map[string][]*pvEntry
}

func newClassIndex() *classIndex {
	return &classIndex{claimed: map[string][]*pvEntry{}, pinned: map[string]map[string][]*pvEntry{}}
}

// bySizeAndName orders available volumes: the smallest first, as
// FindMatchingVolume picks it, and by name among equals, so that the
// choice does not depend on an informer's order.
func bySizeAndName(a, b *pvEntry) int {
	if c := a.size.Cmp(b.size); c != 0 {
		return c
	}
	return cmpStrings(a.pv.Name, b.pv.Name)
}

func byName(a, b *pvEntry) int { return cmpStrings(a.pv.Name, b.pv.Name) }

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func insertSorted(list []*pvEntry, e *pvEntry, cmp func(a, b *pvEntry) int) []*pvEntry {
	i, _ := slices.BinarySearchFunc(list, e, cmp)
	return slices.Insert(list, i, e)
}

func removeEntry(list []*pvEntry, e *pvEntry) []*pvEntry {
	if i := slices.Index(list, e); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

func (ix *classIndex) add(e *pvEntry) {
	switch {
	case e.claimKey != "":
		ix.claimed[e.claimKey] = insertSorted(ix.claimed[e.claimKey], e, byName)
	case e.pinKey != "":
		byValue := ix.pinned[e.pinKey]
		if byValue == nil {
			byValue = map[string][]*pvEntry{}
			ix.pinned[e.pinKey] = byValue
		}
		for _, v := range e.pinValues {
			byValue[v] = insertSorted(byValue[v], e, bySizeAndName)
		}
	default:
		ix.unpinned = insertSorted(ix.unpinned, e, bySizeAndName)
	}
}

func (ix *classIndex) remove(e *pvEntry) {
	switch {
	case e.claimKey != "":
		if l := removeEntry(ix.claimed[e.claimKey], e); len(l) > 0 {
			ix.claimed[e.claimKey] = l
		} else {
			delete(ix.claimed, e.claimKey)
		}
	case e.pinKey != "":
		byValue := ix.pinned[e.pinKey]
		for _, v := range e.pinValues {
			if l := removeEntry(byValue[v], e); len(l) > 0 {
				byValue[v] = l
			} else {
				delete(byValue, v)
			}
		}
		if len(byValue) == 0 {
			delete(ix.pinned, e.pinKey)
		}
	default:
		ix.unpinned = removeEntry(ix.unpinned, e)
	}
}

// newEntry files pv, or returns nil when no claim can be bound to it: a
// volume being deleted, one without a claimRef that is not Available, or
// one whose node affinity admits no node.
func newEntry(pv *v1.PersistentVolume) *pvEntry {
	if pv.DeletionTimestamp != nil {
		return nil
	}
	e := &pvEntry{pv: pv, class: storagehelpers.GetPersistentVolumeClass(pv), size: pv.Spec.Capacity[v1.ResourceStorage]}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		e.affinity = framework.NewNodeSelector(na.Required)
	}
	if ref := pv.Spec.ClaimRef; ref != nil {
		e.claimKey = ref.Namespace + "/" + ref.Name
		return e
	}
	if pv.Status.Phase != v1.VolumeAvailable || (e.affinity != nil && e.affinity.MatchesNothing()) {
		return nil
	}
	if e.affinity != nil {
		if key, values, ok := e.affinity.PinningLabel(v1.LabelHostname); ok {
			e.pinKey, e.pinValues = key, values
		}
	}
	return e
}

// classIndex returns the index of class, brought up to date. Only the
// scheduling goroutine calls it; what it returns may be read concurrently
// until the next call.
func (c *volumeCache) classIndex(class string) (*classIndex, error) {
	c.syncIndex()
	if ix, ok := c.classes[class]; ok {
		return ix, nil
	}
	// First use of the class: file every volume of it.
	pvs, err := c.listers.volumes.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	ix := newClassIndex()
	c.classes[class] = ix
	for _, pv := range pvs {
		if storagehelpers.GetPersistentVolumeClass(pv) != class {
			continue
		}
		pv, err := c.getPV(pv.Name)
		if err != nil {
			continue // deleted meanwhile: the informer marked it dirty
		}
		if old := c.filed[pv.Name]; old != nil {
			c.unfile(old)
		}
		if e := newEntry(pv); e != nil {
			ix.add(e)
			c.filed[pv.Name] = e
		}
	}
	return ix, nil
}

// syncIndex refiles the volumes that changed since it last ran, in the
// classes indexed so far.
func (c *volumeCache) syncIndex() {
	c.mu.Lock()
	if len(c.dirty) == 0 {
		c.mu.Unlock()
		return
	}
	names := make([]string, 0, len(c.dirty))
	for n := range c.dirty {
		names = append(names, n)
	}
	clear(c.dirty)
	c.mu.Unlock()
	for _, name := range names {
		if old := c.filed[name]; old != nil {
			c.unfile(old)
		}
		pv, err := c.getPV(name)
		if err != nil {
			continue // gone
		}
		ix, ok := c.classes[storagehelpers.GetPersistentVolumeClass(pv)]
		if !ok {
			continue // a class nobody asked about yet
		}
		if e := newEntry(pv); e != nil {
			ix.add(e)
			c.filed[name] = e
		}
	}
}

func (c *volumeCache) unfile(e *pvEntry) {
	if ix, ok := c.classes[e.class]; ok {
		ix.remove(e)
	}
	delete(c.filed, e.pv.Name)
}

// isNotFound reports a lister's not-found error.
func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
