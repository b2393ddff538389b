package placement

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Worked by hand: four 8-GPU nodes with 3, 5, 8 and 0 GPUs free. Under
// Strict a gang of 4 fits once on the 5 and twice on the 8 (3 gangs, where
// 16 free GPUs would say 4); letting go of the job that holds 5 of the
// last node makes it 5 free: 4 gangs. A spreading mode counts GPUs.
func TestRoomCountsGangsPerNode(t *testing.T) {
	for _, tc := range []struct {
		mode             Mode
		four, fourFreed  int
		nine, nineFreed  int
		three, threeFree int
	}{
		{Strict, 3, 4, 1, 2, 1 + 1 + 2, 1 + 1 + 2 + 1},
		{FewestNodes, 4, 5, 1, 2, 5, 7},
		{FirstFit, 4, 5, 1, 2, 5, 7},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			c := mustCluster(t, uniform(4, 8), WithMode(tc.mode))
			for _, a := range []struct {
				id   string
				node string
				gpus []int
			}{
				{"x", "n00", []int{0, 1, 2, 3, 4}},
				{"y", "n01", []int{0, 1, 2}},
				{"z", "n03", []int{0, 1, 2, 3, 4}},
				{"w", "n03", []int{5, 6, 7}},
			} {
				if err := c.Allocate(a.id, Placement{Slots: []Slot{{Node: a.node, GPUs: a.gpus}}}); err != nil {
					t.Fatal(err)
				}
			}
			var r Room
			if err := c.RoomWithout(&r, nil); err != nil {
				t.Fatal(err)
			}
			if want := map[Mode]int{Strict: 1, FewestNodes: 2, FirstFit: 2}[tc.mode]; r.Gangs(8) != want {
				t.Fatalf("gangs of 8: %d, want %d", r.Gangs(8), want)
			}
			if r.Free() != 16 || r.Gangs(4) != tc.four || r.Gangs(9) != tc.nine || r.Gangs(3) != tc.three {
				t.Fatalf("free %d, gangs of 4: %d, of 9: %d, of 3: %d; want 16, %d, %d, %d", r.Free(), r.Gangs(4), r.Gangs(9), r.Gangs(3), tc.four, tc.nine, tc.three)
			}
			if err := c.RoomWithout(&r, []string{"z"}); err != nil {
				t.Fatal(err)
			}
			if r.Free() != 21 || r.Gangs(4) != tc.fourFreed || r.Gangs(9) != tc.nineFreed || r.Gangs(3) != tc.threeFree {
				t.Fatalf("z let go: free %d, gangs of 4: %d, of 9: %d, of 3: %d; want 21, %d, %d, %d", r.Free(), r.Gangs(4), r.Gangs(9), r.Gangs(3), tc.fourFreed, tc.nineFreed, tc.threeFree)
			}
			// A whole node: Strict still finds one node with 8 free,
			// where 21 free GPUs would hold two gangs.
			if want := map[Mode]int{Strict: 1, FewestNodes: 2, FirstFit: 2}[tc.mode]; r.Gangs(8) != want {
				t.Fatalf("z let go, gangs of 8: %d, want %d", r.Gangs(8), want)
			}
			if r.Gangs(0) != 0 || r.Gangs(-1) != 0 {
				t.Fatal("a demand below 1 fits no gang")
			}
			if _, ok := c.Allocation("z"); !ok {
				t.Fatal("RoomWithout released z")
			}
		})
	}
}

// A draining node takes nothing, even once its jobs let go; unknown and
// repeated ids are refused, leaving the Room as it was.
func TestRoomWithoutRefusesAndSkipsDraining(t *testing.T) {
	c := mustCluster(t, uniform(2, 4))
	for i, n := range []string{"n00", "n01"} {
		if err := c.Allocate(fmt.Sprint("j", i), Placement{Slots: []Slot{{Node: n, GPUs: []int{0, 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DrainNode("n01"); err != nil {
		t.Fatal(err)
	}
	var r Room
	if err := c.RoomWithout(&r, []string{"j0", "j1"}); err != nil {
		t.Fatal(err)
	}
	if r.Free() != 4 || r.Gangs(4) != 1 || r.Gangs(2) != 2 {
		t.Fatalf("free %d, gangs of 4: %d, of 2: %d; want 4, 1, 2 (n01 drains)", r.Free(), r.Gangs(4), r.Gangs(2))
	}
	for _, ids := range [][]string{{"nope"}, {"j0", "j0"}, slices.Repeat([]string{"j0"}, 20)} {
		if err := c.RoomWithout(&r, ids); !errors.Is(err, ErrUnknownAllocation) {
			t.Fatalf("RoomWithout(%v) = %v, want ErrUnknownAllocation", ids[:min(len(ids), 2)], err)
		}
		if r.Free() != 4 || r.Gangs(2) != 2 {
			t.Fatalf("a refused call changed the room: free %d", r.Free())
		}
	}
}

// TestPropertyRoomBoundsWhatFits: on a random cluster (some nodes in
// racks) with random allocations, a Room with some of them let go counts
// at least as many gangs of a demand as placing them one after another on
// a copy with those released fits, exactly as many under Strict for a
// gang no larger than a node, and none exactly when none fits.
func TestPropertyRoomBoundsWhatFits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]Mode{Strict, FewestNodes, FirstFit}).Draw(t, "mode")
		var nodes []Node
		for i := range rapid.IntRange(1, 6).Draw(t, "nodes") {
			n := Node{ID: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")}
			if rapid.Bool().Draw(t, "racked") {
				n.Topology = []string{fmt.Sprint("rack", rapid.IntRange(0, 1).Draw(t, "rack"))}
			}
			nodes = append(nodes, n)
		}
		c, err := NewCluster(nodes, WithMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range rapid.IntRange(0, 12).Draw(t, "jobs") {
			id := fmt.Sprint("j", i)
			if _, err := c.Assign(id, rapid.IntRange(1, 9).Draw(t, "demand")); err == nil {
				ids = append(ids, id)
			}
		}
		var let []string
		for _, id := range ids {
			if rapid.Bool().Draw(t, "letGo") {
				let = append(let, id)
			}
		}
		var r Room
		if err := c.RoomWithout(&r, let); err != nil {
			t.Fatal(err)
		}
		cp := c.Clone()
		for _, id := range let {
			if _, err := cp.Release(id); err != nil {
				t.Fatal(err)
			}
		}
		if r.Free() != cp.Free() {
			t.Fatalf("room free %d, cluster with them released %d", r.Free(), cp.Free())
		}
		d := rapid.IntRange(1, 10).Draw(t, "gang")
		fits := 0
		for ; ; fits++ {
			if _, err := cp.Assign(fmt.Sprint("g", fits), d); err != nil {
				break
			}
		}
		got := r.Gangs(d)
		exact := mode == Strict && d <= c.largestNode()
		if got < fits || exact && got != fits || (got > 0) != (fits > 0) {
			t.Fatalf("%v, gangs of %d: room says %d, %d fit one after another", mode, d, got, fits)
		}
	})
}
