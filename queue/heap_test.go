package queue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/yardmaster-io/yardmaster/framework"
)

// TestPodHeapRandomOps adds, removes, re-prioritises and pops pods at random
// and checks, after each op, the index and heap order, and at the end that
// pops come out in compareActive order with insertion order breaking ties.
func TestPodHeapRandomOps(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			h := newPodHeap(compareActive)
			type ref struct {
				qpi *QueuedPodInfo
				seq int
			}
			model := map[types.UID]ref{}
			seq := 0
			check := func() {
				t.Helper()
				if len(h.items) != len(model) || len(h.pos) != len(model) {
					t.Fatalf("heap holds %d items, %d index entries; want %d", len(h.items), len(h.pos), len(model))
				}
				for i, it := range h.items {
					if h.pos[it.pod.Pod.UID] != it || it.index != i {
						t.Fatalf("item of %s at %d: index map or position (%d) disagree", it.pod.Pod.UID, i, it.index)
					}
					if i > 0 && h.Less(i, (i-1)/2) {
						t.Fatalf("item %d sorts before its parent", i)
					}
				}
			}
			for i := range 500 {
				switch r := rng.IntN(10); {
				case r < 5 || len(model) == 0:
					qpi := &QueuedPodInfo{QueuedPodInfo: framework.QueuedPodInfo{
						PodInfo:   framework.NewPodInfo(makePod(fmt.Sprint("p", i)).Priority(rng.Int32N(4)).Obj()),
						Timestamp: t0.Add(time.Duration(rng.IntN(3)) * time.Second),
					}}
					h.add(qpi)
					seq++
					model[qpi.Pod.UID] = ref{qpi, seq}
				case r < 7:
					uid := randomKey(rng, model)
					if got, ok := h.remove(uid); !ok || got != model[uid].qpi {
						t.Fatalf("remove(%s) = %v, %v", uid, got, ok)
					}
					delete(model, uid)
				case r < 8:
					uid := randomKey(rng, model)
					model[uid].qpi.Timestamp = model[uid].qpi.Timestamp.Add(-time.Second)
					h.fix(uid)
				default:
					head := h.peek()
					if got := h.pop(); got != head {
						t.Fatalf("pop returned %s, peek %s", got.Pod.UID, head.Pod.UID)
					}
					delete(model, head.Pod.UID)
				}
				check()
			}
			want := make([]ref, 0, len(model))
			for _, r := range model {
				want = append(want, r)
			}
			slices.SortFunc(want, func(a, b ref) int {
				if c := compareActive(a.qpi, b.qpi); c != 0 {
					return c
				}
				return a.seq - b.seq
			})
			var wantUIDs, gotUIDs []types.UID
			for _, r := range want {
				wantUIDs = append(wantUIDs, r.qpi.Pod.UID)
			}
			for h.len() > 0 {
				gotUIDs = append(gotUIDs, h.pop().Pod.UID)
			}
			if diff := cmp.Diff(wantUIDs, gotUIDs); diff != "" {
				t.Errorf("pop order (-want +got):\n%s", diff)
			}
			if h.peek() != nil {
				t.Errorf("peek on an empty heap returned a pod")
			}
		})
	}
}

// randomKey picks a key of m; sorting first keeps the pick reproducible.
func randomKey[V any](rng *rand.Rand, m map[types.UID]V) types.UID {
	keys := make([]types.UID, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}
