package kueue

import (
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/ledger"
)

// wholeGPUs is the reference reading of a quantity for FuzzDemand: its
// exact value as a rational, and whether it is a whole number ≥ 0.
func wholeGPUs(q resource.Quantity) (*big.Int, bool) {
	r, ok := new(big.Rat).SetString(q.AsDec().String())
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return nil, false
	}
	return r.Num(), true
}

// FuzzDemand: Demand of one pod set of count pods, each with two
// containers and an init container, equals the documented sum computed
// without overflow (math/big), or is ErrWorkload exactly when a quantity is
// not a whole number ≥ 0, the count is negative, or a pod's request or the
// total exceeds ledger.MaxGPUs.
func FuzzDemand(f *testing.F) {
	f.Add(int32(2), "1", "2", "0")
	f.Add(int32(1), "9223372036854775807", "9223372036854775807", "3")
	f.Add(int32(1<<30), "2", "0", "1")
	f.Add(int32(0), "4294967296", "1", "0")
	f.Add(int32(-1), "1", "1", "1")
	f.Add(int32(3), "500m", "1", "1")
	f.Add(int32(1), "1k", "1Ki", "2e3")
	f.Fuzz(func(t *testing.T, count int32, a, b, init string) {
		var qs [3]resource.Quantity
		for i, s := range []string{a, b, init} {
			q, err := resource.ParseQuantity(s)
			if err != nil {
				t.Skip()
			}
			qs[i] = q
		}
		ask := func(q resource.Quantity) corev1.Container {
			return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{DefaultGPU: q}}}
		}
		wl := &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: kueuev1beta2.WorkloadSpec{PodSets: []kueuev1beta2.PodSet{{
			Name: "p", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers:     []corev1.Container{ask(qs[0]), ask(qs[1])},
				InitContainers: []corev1.Container{ask(qs[2])},
			}},
		}}}}
		got, err := Demand(wl, DefaultGPU)

		limit := big.NewInt(int64(ledger.MaxGPUs))
		valid := count >= 0
		var v [3]*big.Int
		for i, q := range qs {
			var ok bool
			if v[i], ok = wholeGPUs(q); !ok {
				valid = false
			}
		}
		want := new(big.Int)
		if valid {
			sum := new(big.Int).Add(v[0], v[1])
			pod := sum
			if v[2].Cmp(sum) > 0 {
				pod = v[2]
			}
			if sum.Cmp(limit) > 0 || v[2].Cmp(limit) > 0 {
				valid = false
			}
			want.Mul(big.NewInt(int64(count)), pod)
			if want.Cmp(limit) > 0 {
				valid = false
			}
		}
		switch {
		case !valid:
			if !errors.Is(err, ErrWorkload) {
				t.Fatalf("Demand(count %d, %q %q, init %q) = %d, %v; want ErrWorkload", count, a, b, init, got, err)
			}
		case err != nil:
			t.Fatalf("Demand(count %d, %q %q, init %q): %v; want %s", count, a, b, init, err, want)
		case big.NewInt(int64(got)).Cmp(want) != 0:
			t.Fatalf("Demand(count %d, %q %q, init %q) = %d, want %s", count, a, b, init, got, want)
		}
	})
}

// FuzzShareOf: whatever the annotation holds, the share is positive and
// finite, and a positive finite quantity is read as its value.
func FuzzShareOf(f *testing.F) {
	for _, s := range []string{"", "2", "0.5", "-1", "0", "1e400", "NaN", "1Ki", "abc", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := shareOf(map[string]string{ShareAnnotation: s})
		if !(got > 0) || math.IsInf(got, 0) {
			t.Fatalf("shareOf(%q) = %v, want a positive finite share", s, got)
		}
		if q, err := resource.ParseQuantity(s); err == nil {
			if v := q.AsApproximateFloat64(); v > 0 && !math.IsInf(v, 0) && got != v {
				t.Fatalf("shareOf(%q) = %v, want %v", s, got, v)
			}
		}
	})
}

// FuzzLoadSnapshot: a file that is not a snapshot fails with
// ledger.ErrCorruptSnapshot (or ledger.ErrSnapshotVersion, from the
// ledger's own decoder, which the ledger's fuzz target covers); one that loads yields a recorder whose
// ledger passes its invariant check and knows every job it lists.
func FuzzLoadSnapshot(f *testing.F) {
	l, err := ledger.New(ledger.Config{Capacity: 4, Start: t0})
	if err != nil {
		f.Fatal(err)
	}
	r := NewRecorder(l)
	w := newWorkload("w0", "qa", 1, "2", sec(0))
	if err := r.Observe(observe(w, LocalQueueTenant("ns", "qa"), 2), 1); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "seed.snap")
	if err := r.Snapshot(path); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"x"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "in.snap")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		back, err := LoadSnapshot(p)
		if err != nil {
			if !errors.Is(err, ledger.ErrCorruptSnapshot) && !errors.Is(err, ledger.ErrSnapshotVersion) {
				t.Fatalf("LoadSnapshot: %v, want ErrCorruptSnapshot", err)
			}
			return
		}
		if err := back.Check(); err != nil {
			t.Fatalf("loaded snapshot fails its check: %v", err)
		}
		for _, id := range back.Jobs() {
			if _, ok := back.Job(id); !ok {
				t.Fatalf("job %q listed but unknown", id)
			}
		}
	})
}
