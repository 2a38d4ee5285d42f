package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// waitQueue waits for the default Queue, which Volcano's pods create.
func (x *t) waitQueue(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		q, err := x.vc.SchedulingV1beta1().Queues().Get(ctx, "default", metav1.GetOptions{})
		return err == nil && q.Status.State == "Open", nil
	})
}

// createCounts are the Job creates of one phase of the install test.
type createCounts struct {
	creates, failed atomic.Int64
	first           atomic.Value // the first failure's error text
}

func (c *createCounts) firstSuffix() string {
	if f := c.first.Load(); f != nil {
		return fmt.Sprintf(", first: %v", f)
	}
	return ""
}

// startCreates runs createLoop in the background until the returned stop,
// which returns once the loop has ended.
func (x *t) startCreates(ctx context.Context, prefix string, phase *atomic.Pointer[createCounts]) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		x.createLoop(ctx, prefix, done, phase)
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// createLoop creates (and deletes) a one-pod Job named <prefix><n> every
// second until stop, counting the creates and those that fail in the phase
// phase holds.
func (x *t) createLoop(ctx context.Context, prefix string, stop chan struct{}, phase *atomic.Pointer[createCounts]) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c := phase.Load()
		j := realNodeJob(fmt.Sprintf("%s%d", prefix, i), "", nil, "true")
		// Pending forever on no node: the create is what is measured.
		j.Spec.Tasks[0].Template.Spec.NodeSelector = map[string]string{"install-test/none": "true"}
		c.creates.Add(1)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := x.vc.BatchV1alpha1().Jobs("default").Create(cctx, j, metav1.CreateOptions{})
		cancel()
		if err != nil {
			c.failed.Add(1)
			c.first.CompareAndSwap(nil, err.Error())
			fmt.Printf("  %s create %s: %v\n", time.Now().Format("15:04:05"), j.Name, err)
			continue
		}
		_ = x.vc.BatchV1alpha1().Jobs("default").Delete(ctx, j.Name, metav1.DeleteOptions{})
	}
}
