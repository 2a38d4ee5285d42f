//go:build measure

package bounds

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestMeasureCreateGoroutines measures what PodOverheadBytes's docstring
// cites: the memory of one goroutine per pod, each creating its pod through a
// client with vc-controller-manager's default rate limit (QPS 50, burst 100)
// against an API server that never answers, as Volcano's syncJob starts them.
// Run it by hand: go test -tags measure -run TestMeasureCreateGoroutines -v ./pkg/jobs/bounds/
func TestMeasureCreateGoroutines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	// Not closed: the client's waiting requests keep it busy past the test.
	c := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: 50, Burst: 100})
	const n = 20000
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("j-t-%d", i), Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Image: "b"}}}}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	for _, p := range pods {
		go func(p *v1.Pod) {
			_, _ = c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		}(p)
	}
	time.Sleep(5 * time.Second)
	runtime.GC()
	runtime.ReadMemStats(&after)
	stack, heap := after.StackInuse-before.StackInuse, after.HeapInuse-before.HeapInuse
	t.Logf("%d goroutines: stack in use +%d bytes (%d a pod), heap in use +%d bytes (%d a pod)", n, stack, stack/n, heap, heap/n)
	cancel()
}
