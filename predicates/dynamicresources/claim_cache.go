package dynamicresources

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// errClaimNotFound is wrapped by claimCache.get for a claim it does not
// hold.
var errClaimNotFound = errors.New("claim not found")

// claimHandler is told of every change of a claim as the scheduler sees
// it: oldClaim nil for an add, newClaim nil for a delete.
type claimHandler func(oldClaim, newClaim *resourceapi.ResourceClaim)

// claimCache holds the ResourceClaims as the scheduler sees them: the
// informer's objects, and in their place, from the moment PreBind wrote a
// claim until the informer delivers that write or a later one, the object
// the API server returned (kube-scheduler's assume cache). A claim is
// therefore allocated here as soon as its allocation is written, not when
// the watch gets round to it, and the devices it holds are never handed
// out twice.
//
// Every change, the informer's and the scheduler's own, goes to the
// handlers, in order, outside the cache's lock: a handler may read the
// cache, and the queue's handler takes the queue's lock.
type claimCache struct {
	mu      sync.Mutex
	entries map[string]*claimEntry
	// pending are the changes not yet handed to the handlers.
	pending []claimChange

	// emitMu is held by the one goroutine handing changes out, so that
	// handlers see them in order.
	emitMu   sync.Mutex
	handlers []claimHandler
}

// claimEntry is one claim: latest is what the scheduler sees, api what the
// informer last delivered.
type claimEntry struct {
	latest, api *resourceapi.ResourceClaim
}

type claimChange struct{ old, new *resourceapi.ResourceClaim }

func newClaimCache() *claimCache {
	return &claimCache{entries: map[string]*claimEntry{}}
}

// addHandler registers h; call before the informer starts.
func (c *claimCache) addHandler(h claimHandler) {
	c.emitMu.Lock()
	c.handlers = append(c.handlers, h)
	c.emitMu.Unlock()
}

// informerHandlers returns the handlers to register on the claim informer.
func (c *claimCache) informerHandlers() toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.informerSaw(obj) },
		UpdateFunc: func(_, obj any) { c.informerSaw(obj) },
		DeleteFunc: c.informerDeleted,
	}
}

// informerSaw takes a claim from the informer, unless the scheduler
// already holds that version or a newer one (its own write coming back).
func (c *claimCache) informerSaw(obj any) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	key := claim.Namespace + "/" + claim.Name
	c.mu.Lock()
	e, found := c.entries[key]
	switch {
	case !found:
		c.entries[key] = &claimEntry{latest: claim, api: claim}
		c.pending = append(c.pending, claimChange{new: claim})
	case version(claim) <= version(e.latest):
		// An echo of what the scheduler assumed, or older: nothing new.
		e.api = claim
		if e.latest.ResourceVersion == claim.ResourceVersion {
			e.latest = claim
		}
	default:
		c.pending = append(c.pending, claimChange{old: e.latest, new: claim})
		e.latest, e.api = claim, claim
	}
	c.mu.Unlock()
	c.emit()
}

func (c *claimCache) informerDeleted(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	key := claim.Namespace + "/" + claim.Name
	c.mu.Lock()
	if e, found := c.entries[key]; found {
		delete(c.entries, key)
		c.pending = append(c.pending, claimChange{old: e.latest})
	}
	c.mu.Unlock()
	c.emit()
}

// assume puts claim, which the API server just returned for a write, in
// place of the informer's version until the informer catches up. The
// claim must be known (the informer saw it created) and not older than
// what the cache holds.
func (c *claimCache) assume(claim *resourceapi.ResourceClaim) error {
	key := claim.Namespace + "/" + claim.Name
	c.mu.Lock()
	e, found := c.entries[key]
	if !found {
		c.mu.Unlock()
		return fmt.Errorf("ResourceClaim %q: %w", key, errClaimNotFound)
	}
	if version(claim) < version(e.latest) {
		c.mu.Unlock()
		return fmt.Errorf("ResourceClaim %q is out of sync (stored: %s, assume: %s)", key, e.latest.ResourceVersion, claim.ResourceVersion)
	}
	c.pending = append(c.pending, claimChange{old: e.latest, new: claim})
	e.latest = claim
	c.mu.Unlock()
	c.emit()
	return nil
}

// restore drops what the scheduler assumed for the claim.
func (c *claimCache) restore(namespace, name string) {
	c.mu.Lock()
	if e, found := c.entries[namespace+"/"+name]; found && e.latest != e.api {
		c.pending = append(c.pending, claimChange{old: e.latest, new: e.api})
		e.latest = e.api
	}
	c.mu.Unlock()
	c.emit()
}

// get returns the claim as the scheduler sees it, or an error with
// kube-scheduler's message that wraps errClaimNotFound.
func (c *claimCache) get(namespace, name string) (*resourceapi.ResourceClaim, error) {
	key := namespace + "/" + name
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.entries[key]; found {
		return e.latest, nil
	}
	return nil, &notFoundError{key: key}
}

// emit hands the pending changes to the handlers, in order; the caller
// must not hold c.mu.
func (c *claimCache) emit() {
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	for {
		c.mu.Lock()
		changes := c.pending
		c.pending = nil
		c.mu.Unlock()
		if len(changes) == 0 {
			return
		}
		for _, ch := range changes {
			for _, h := range c.handlers {
				h(ch.old, ch.new)
			}
		}
	}
}

// version is a claim's resourceVersion as a number; 0 when it does not
// parse (a claim the scheduler made in memory).
func version(claim *resourceapi.ResourceClaim) int64 {
	v, _ := strconv.ParseInt(claim.ResourceVersion, 10, 64)
	return v
}

// notFoundError is kube-scheduler's assume cache's "not found" error.
type notFoundError struct{ key string }

func (e *notFoundError) Error() string { return fmt.Sprintf("could not find ResourceClaim %q", e.key) }

func (e *notFoundError) Unwrap() error { return errClaimNotFound }
