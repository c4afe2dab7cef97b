package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/yardmaster-io/yardmaster/framework"
	"github.com/yardmaster-io/yardmaster/framework/frameworktest"
	"github.com/yardmaster-io/yardmaster/scheduler/registry"
)

// Once WaitForHandlersSync returns, the scheduler's cache holds every node
// and every assigned pod the informers listed: the first cycle must not
// see a cluster emptier than it is.
func TestWaitForHandlersSyncFillsTheCache(t *testing.T) {
	const nodes, podsPerNode = 500, 4
	var objs []runtime.Object
	for i := range nodes {
		name := fmt.Sprintf("n%04d", i)
		objs = append(objs, frameworktest.MakeNode().Name(name).Capacity("8", "16Gi", 110).Obj())
		for j := range podsPerNode {
			objs = append(objs, frameworktest.MakePod().Name(fmt.Sprintf("%s-p%d", name, j)).Node(name).Req("100m", "").Obj())
		}
	}
	client := fake.NewClientset(objs...)
	factory := NewInformerFactory(client, nil)
	s, err := New(Options{
		Client:          client,
		InformerFactory: factory,
		Registry:        registry.NewInTree(),
		Profiles:        []framework.Profile{registry.DefaultProfile("yardmaster")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel() // first: Shutdown waits for the informers to stop
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	if !s.WaitForHandlersSync(ctx) {
		t.Fatal("handlers did not sync")
	}
	gotNodes, gotPods, _ := s.Cache.Counts()
	if gotNodes != nodes || gotPods != nodes*podsPerNode {
		t.Errorf("cache holds %d nodes and %d pods, want %d and %d", gotNodes, gotPods, nodes, nodes*podsPerNode)
	}
}
