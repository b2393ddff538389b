package trace

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/testtraces"
)

// TestVenusCalibrationTablesMatchTheSnapshot recounts, from the Venus
// two-week snapshot and Helios's cluster_gpu_number.csv, every table the
// synthetic workload embeds: the joint counts by VC, GPUs and runtime
// class, the final states by runtime class, the submissions by hour and
// the official VC sizes on 2020-09-07. The counts are read with
// encoding/csv, not with this package's readers, so that a table and a
// reader cannot go wrong together.
func TestVenusCalibrationTablesMatchTheSnapshot(t *testing.T) {
	dir := filepath.Join(testtraces.Dir(t), "venus")
	tenant := map[string]int{}
	for i, vc := range venusTenants {
		tenant[vc] = i
	}
	// The runtime classes as venusJoint's doc states them, spelled out
	// here rather than read from runtimeKnots, which the table feeds.
	bounds := []int{600, 3600, 6 * 3600, 86400, 6 * 86400}
	class := func(d int) uint8 {
		for c, b := range bounds {
			if d < b {
				return uint8(c)
			}
		}
		return uint8(len(bounds))
	}
	type key struct{ tenant, gpus, class int }
	joint := map[key]int{}
	var states [runtimeClasses]stateMix
	var hourly [24]float64
	jobs := 0
	readCSV(t, filepath.Join(dir, "venus_2week_snapshot.csv"), func(h map[string]int, rec []string) {
		vc, ok := tenant[rec[h["vc"]]]
		if !ok {
			t.Fatalf("VC %q is not in venusTenants", rec[h["vc"]])
		}
		gpus, err1 := strconv.Atoi(rec[h["gpu_num"]])
		dur, err2 := strconv.Atoi(rec[h["duration"]])
		sub, err3 := time.Parse(time.DateTime, rec[h["submit_time"]])
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		c := class(dur)
		joint[key{vc, gpus, int(c)}]++
		s := slices.Index(stateNames[:], rec[h["state"]])
		if s < 0 {
			t.Fatalf("state %q is not in stateNames", rec[h["state"]])
		}
		states[c][s]++
		hourly[sub.Hour()]++
		jobs++
	})
	if jobs != 13236 {
		t.Errorf("%d jobs in the snapshot, want the 13,236 the tables describe", jobs)
	}
	embedded := map[key]int{}
	for _, j := range venusJoint {
		embedded[key{int(j.tenant), int(j.gpus), int(j.class)}] += int(j.count)
	}
	for k, n := range joint {
		if embedded[k] != n {
			t.Errorf("venusJoint (%s, %d GPUs, class %d): %d, the snapshot has %d", venusTenants[k.tenant], k.gpus, k.class, embedded[k], n)
		}
	}
	for k, n := range embedded {
		if joint[k] == 0 {
			t.Errorf("venusJoint (%s, %d GPUs, class %d): %d, the snapshot has none", venusTenants[k.tenant], k.gpus, k.class, n)
		}
	}
	if states != venusStates {
		t.Errorf("venusStates = %v, the snapshot has %v", venusStates, states)
	}
	if hourly != venusHourly {
		t.Errorf("venusHourly = %v, the snapshot has %v", venusHourly, hourly)
	}
	var official [len(venusTenants)]float64
	found := false
	readCSV(t, filepath.Join(dir, "cluster_gpu_number.csv"), func(h map[string]int, rec []string) {
		if rec[h["date"]] != "2020-09-07" {
			return
		}
		found = true
		for i, vc := range venusTenants {
			col, ok := h[vc]
			if !ok {
				t.Fatalf("cluster_gpu_number.csv has no column %s", vc)
			}
			n, err := strconv.Atoi(rec[col])
			if err != nil {
				t.Fatal(err)
			}
			official[i] = float64(n)
		}
	})
	if !found || official != venusOfficialGPUs {
		t.Errorf("venusOfficialGPUs = %v, cluster_gpu_number.csv has %v on 2020-09-07 (found %v)", venusOfficialGPUs, official, found)
	}
}

// readCSV calls row with the header's column indices and every record of
// the CSV file at path.
func readCSV(t *testing.T, path string, row func(h map[string]int, rec []string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]int{}
	for i, name := range head {
		h[name] = i
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		row(h, rec)
	}
}
