package ledger

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Snapshot encoding, version 4. All integers are little-endian.
//
//	magic   [8]byte  "ASTRLDGR"
//	version uint16   4
//	length  uint64   payload length in bytes
//	payload [length]byte
//	crc     uint32   CRC-32C (Castagnoli) of everything before it
//
// The payload is a sequence of unsigned and signed varints, float64 bit
// patterns (8 bytes) and length-prefixed strings: the configuration, the
// clock, the cluster series (capacity, allocated, over-allocation), the
// tenants in the order first added (each with its parent, weights, Alloc
// series and fair-share segments), the θ-groups (of jobs and of children,
// each with its owner), each node's lists of current groups, and the jobs
// in id order, each with its breakpoints and segments. A series is its
// breakpoint count and, per breakpoint, the time delta, the value and the
// rate. What follows from the jobs and the tree (demands, allocations,
// counts, shares per unit weight) is derived on restore, not stored.
// Encoding is deterministic: equal ledgers give equal bytes. The first
// varint holds the Mode in its low 4 bits and the JobShare above them, so a
// ledger with the zero JobShare encodes as before and a reader that does
// not know a JobShare refuses the snapshot as an unknown mode. A group's θ
// of +Inf (QuotaShare's kid groups, SplitJobShare's job groups) is kept as
// 0. The history policy is its kind and duration, and for [Buckets] (kind
// 3) then the bucket count: the other kinds' bytes are as before it
// existed, and a build without it rejects kind 3 as an unknown policy.
//
// Version 3 had no tree: every tenant was the cluster's child and kept its
// FairShare as a series of its own, which every quota change extended (so
// n tenants joining one by one left n² breakpoints). Version 2 differed
// from 3 only in its third cluster series: idle GPUs, max(0, M −
// allocated), where version 3 keeps max(0, allocated − M), the GPUs
// allocated beyond capacity, from which idle time follows (see
// overFromIdle). Version 1 also kept capacity and allocation in one series
// of breakpoints with two values and two rates, and a tenant's Alloc and
// FairShare likewise. Restore still reads all three: a tenant's old
// FairShare series stays as its history before Now() and its segments
// start there, so old snapshots migrate on their first load and are
// written back as version 4.
//
// A decoder rejects bad magic, length or checksum, and any inconsistency
// found by Check, with ErrCorruptSnapshot; a version other than 1 to 4 with
// ErrSnapshotVersion.
const (
	snapMagic   = "ASTRLDGR"
	snapVersion = 4
	// modeBits is how many low bits of the snapshot's first varint hold
	// the Mode; the JobShare is above them.
	modeBits   = 4
	snapHeader = len(snapMagic) + 2 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type enc struct{ b []byte }

func (e *enc) u(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) f(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *enc) s(v string)  { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) bool(v bool) {
	if v {
		e.u(1)
	} else {
		e.u(0)
	}
}
func (e *enc) series(s *series, d decay) {
	e.u(uint64(s.st.len()))
	prev := int64(0)
	s.st.each(d, func(_ int, p point) {
		e.i(p.t - prev)
		prev = p.t
		e.f(p.v)
		e.f(p.r)
	})
}

// MarshalBinary encodes the whole ledger (configuration, state and retained
// history) in the versioned format documented above. It fails only when
// time.Time cannot encode the start time (a zone offset beyond about ±546
// hours). O(size of the ledger + J log J).
func (l *Ledger) MarshalBinary() ([]byte, error) {
	e := &enc{b: make([]byte, 0, 256)}
	e.u(uint64(l.mode) | uint64(l.jobShare)<<modeBits)
	e.u(uint64(l.hist.kind))
	e.i(int64(l.hist.d))
	if l.hist.kind == histBuckets {
		e.u(uint64(l.hist.n))
	}
	st, err := l.start.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("ledger: snapshot start time: %w", err)
	}
	e.s(string(st))
	e.i(l.now)
	e.i(l.base)
	e.i(int64(l.capacity))
	e.f(l.root.kidW) // not read back: restore sums the weights afresh
	e.i(int64(l.running))
	e.series(&l.capa, l.lam)
	e.series(&l.used, l.lam)
	e.series(&l.over, l.lam)

	// Nodes are numbered 0 for the root and k+1 for l.tenants[k].
	nix := make(map[*tenant]int, len(l.tenants)+1)
	nix[l.root] = 0
	for k, tn := range l.tenants {
		nix[tn] = k + 1
	}
	jobs := l.jobs.all()
	slices.SortFunc(jobs, func(a, b *job) int { return cmp.Compare(a.id, b.id) })
	gix := make(map[*group]int)
	var groups []*group
	type owner struct {
		n   *tenant
		kid bool
	}
	gown := make(map[*group]owner)
	addGroup := func(g *group, n *tenant, kid bool) {
		if _, ok := gix[g]; !ok {
			gix[g] = len(groups)
			groups = append(groups, g)
			gown[g] = owner{n, kid}
		}
	}
	nodes := append([]*tenant{l.root}, l.tenants...)
	for _, n := range nodes {
		for _, g := range n.groups {
			addGroup(g, n, false)
		}
		for _, g := range n.kgroups {
			addGroup(g, n, true)
		}
	}
	for _, tn := range l.tenants {
		for _, s := range tn.segs {
			if s.g != nil {
				addGroup(s.g, tn.parent, true)
			}
		}
	}
	for _, j := range jobs {
		for _, s := range j.segs {
			addGroup(s.g, j.tn, false)
		}
	}
	segs := func(ss []segment) {
		e.u(uint64(len(ss)))
		prev := int64(0)
		for _, s := range ss {
			e.i(s.from - prev)
			prev = s.from
			if s.g == nil {
				e.u(0)
			} else {
				e.u(uint64(gix[s.g]) + 1)
			}
			e.f(s.w)
			e.f(s.base)
			e.f(s.gFrom)
		}
	}
	ref := func(g *group) {
		if g == nil {
			e.u(0)
		} else {
			e.u(uint64(gix[g]) + 1)
		}
	}
	e.u(uint64(len(l.tenants)))
	for _, tn := range l.tenants {
		e.s(string(tn.id))
		e.u(uint64(nix[tn.parent]))
		e.f(tn.weight)
		e.bool(tn.registered)
		e.f(tn.activeW)
		e.series(&tn.s, l.lam)
		e.series(&tn.fs, l.lam)
		segs(tn.segs)
		ref(tn.pg)
	}
	e.u(uint64(len(groups)))
	for _, g := range groups {
		o := gown[g]
		e.u(uint64(nix[o.n]))
		e.bool(o.kid)
		if math.IsInf(g.theta, 1) {
			e.f(0) // θ = +Inf, which the format keeps as 0
		} else {
			e.f(g.theta)
		}
		e.u(uint64(g.n))
		e.series(&g.s, l.lam)
	}
	for _, n := range nodes {
		e.u(uint64(len(n.groups)))
		for _, g := range n.groups {
			e.u(uint64(gix[g]))
		}
		e.u(uint64(len(n.kgroups)))
		for _, g := range n.kgroups {
			e.u(uint64(gix[g]))
		}
	}
	e.u(uint64(len(jobs)))
	for _, j := range jobs {
		e.s(string(j.id))
		e.u(uint64(nix[j.tn] - 1))
		e.i(int64(j.demand))
		e.f(j.weight)
		e.u(uint64(j.state))
		e.u(uint64(j.final))
		e.i(j.submit)
		e.i(j.finish)
		e.f(j.finalFair)
		e.series(&j.alloc, l.lam)
		e.u(uint64(len(j.segs)))
		prev := int64(0)
		for _, s := range j.segs {
			e.i(s.from - prev)
			prev = s.from
			e.u(uint64(gix[s.g]))
			e.f(s.w)
			e.f(s.base)
			e.f(s.gFrom)
		}
		ref(j.grp)
	}

	out := make([]byte, 0, snapHeader+len(e.b)+4)
	out = append(out, snapMagic...)
	out = binary.LittleEndian.AppendUint16(out, snapVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(e.b)))
	out = append(out, e.b...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	return out, nil
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("bad %s", what)
	}
}

func (d *dec) u(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) f(what string) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail(what)
		return 0
	}
	return v
}

func (d *dec) s(what string) string {
	n := d.u(what)
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail(what)
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

// count reads a length whose elements take at least min bytes each.
func (d *dec) count(what string, min int) int {
	n := d.u(what)
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail(what)
		return 0
	}
	return int(n)
}

func (d *dec) index(what string, n int) int {
	v := d.u(what)
	if d.err == nil && v >= uint64(n) {
		d.fail(what)
		return 0
	}
	return int(v)
}

func (d *dec) times(prev *int64, what string) int64 {
	delta := d.i(what)
	if d.err == nil && (delta < 0 && *prev != 0 || delta > math.MaxInt64-*prev) {
		d.fail(what)
	}
	*prev += delta
	return *prev
}

// series reads a series of one rate into s (empty; it may have inline
// room), replaying it with decay λ.
func (d *dec) series(what string, s *series, lam decay) {
	n := d.count(what, 17)
	prev := int64(0)
	for k := range n {
		p := point{t: d.times(&prev, what), v: d.f(what), r: d.f(what)}
		if d.err != nil {
			return
		}
		if k > 0 && p.t <= s.st.head.t {
			d.fail(what + " (breakpoint times out of order)")
			return
		}
		s.st.push(p, lam)
	}
}

// series2 reads a version-1 series of two rates (a, b) into two series.
func (d *dec) series2(what string, a, b *series, lam decay) {
	n := d.count(what, 33)
	prev := int64(0)
	for k := range n {
		t := d.times(&prev, what)
		va, vb, ra, rb := d.f(what), d.f(what), d.f(what), d.f(what)
		if d.err != nil {
			return
		}
		if k > 0 && t <= a.st.head.t {
			d.fail(what + " (breakpoint times out of order)")
			return
		}
		a.st.push(point{t: t, v: va, r: ra}, lam)
		b.st.push(point{t: t, v: vb, r: rb}, lam)
	}
}

// overFromIdle derives the over-allocation series, max(0, allocated − M),
// from the idle series of a version 1 or 2 snapshot, max(0, M − allocated):
// the difference of the two is M − allocated, so over = idle − M +
// allocated. Its value starts from that sum at the latest of the three
// series' first breakpoints (trimming keeps each one's last breakpoint at or
// before the start of history, so none is needed before it), and its rate
// at every breakpoint of the three is max(0, allocated − M). O(n log n) for
// n breakpoints.
func overFromIdle(over, idle, capa, used *series, lam decay) {
	if idle.st.cnt == 0 || capa.st.cnt == 0 || used.st.cnt == 0 {
		return
	}
	var times []int64
	for _, s := range []*series{idle, capa, used} {
		s.st.each(lam, func(_ int, p point) { times = append(times, p.t) })
	}
	slices.Sort(times)
	times = slices.Compact(times)
	t0 := max(idle.st.first().t, capa.st.first().t, used.st.first().t)
	rate := func(s *series, t int64) float64 { p, _ := s.st.find(t, lam); return p.r }
	for _, t := range times {
		if t < t0 {
			continue
		}
		r := max(0, rate(used, t)-rate(capa, t))
		if t == t0 {
			v := max(0, idle.at(t, lam)-capa.at(t, lam)+used.at(t, lam))
			over.st.open(point{t: t, v: v, r: r})
			continue
		}
		over.set(t, r, lam, math.MinInt64)
	}
}

func corrupt(detail string) error {
	return &Error{Op: "Restore", Err: ErrCorruptSnapshot, Detail: detail}
}

// Restore decodes a snapshot written by MarshalBinary into a new ledger that
// behaves exactly as the one encoded: restore-then-continue equals never
// stopping. Damaged, truncated or inconsistent input fails with
// ErrCorruptSnapshot; a newer or unknown version with ErrSnapshotVersion.
// O(size of the snapshot).
func Restore(data []byte) (*Ledger, error) {
	if len(data) < snapHeader+4 || string(data[:len(snapMagic)]) != snapMagic {
		return nil, corrupt("not a ledger snapshot (bad magic or too short)")
	}
	v := binary.LittleEndian.Uint16(data[len(snapMagic):])
	if v < 1 || v > snapVersion {
		return nil, &Error{Op: "Restore", Err: ErrSnapshotVersion, Detail: fmt.Sprintf("version %d, this build reads 1 to %d", v, snapVersion)}
	}
	n := binary.LittleEndian.Uint64(data[len(snapMagic)+2:])
	if n != uint64(len(data)-snapHeader-4) {
		return nil, corrupt(fmt.Sprintf("payload length %d, have %d bytes", n, len(data)-snapHeader-4))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, corrupt("checksum mismatch")
	}
	l, err := decodePayload(body[snapHeader:], v)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	if err := l.Check(); err != nil {
		return nil, corrupt(err.Error())
	}
	return l, nil
}

func decodePayload(b []byte, version uint16) (*Ledger, error) {
	d := &dec{b: b}
	rawMode := d.u("mode")
	mode, share := Mode(rawMode&(1<<modeBits-1)), JobShare(rawMode>>modeBits)
	hist := History{kind: historyKind(d.u("history")), d: time.Duration(d.i("history duration"))}
	if hist.kind == histBuckets {
		hist.n = int(d.u("bucket count")) // a count beyond int64 wraps negative: validate rejects it
	}
	if d.err != nil {
		return nil, d.err
	}
	if mode != DemandAware && mode != QuotaShare || share != CappedJobShare && share != SplitJobShare {
		return nil, fmt.Errorf("unknown mode %d", rawMode)
	}
	if share != CappedJobShare && version < 4 {
		return nil, fmt.Errorf("job share rule %v in a version %d snapshot", share, version)
	}
	if err := hist.validate(); err != nil {
		return nil, err
	}
	l := &Ledger{mode: mode, jobShare: share, hist: hist, lam: decay(hist.lambda()), tenantIx: map[TenantID]*tenant{}}
	if err := l.start.UnmarshalBinary([]byte(d.s("start"))); err != nil && d.err == nil {
		return nil, fmt.Errorf("start time: %w", err)
	}
	l.now, l.base = d.i("now"), d.i("base")
	l.capacity = GPUs(d.i("capacity"))
	sumW := d.f("ΣW")
	l.running = GPUs(d.i("running"))
	if version == 1 {
		d.series2("cluster series", &l.capa, &l.used, l.lam)
	} else {
		d.series("capacity series", &l.capa, l.lam)
		d.series("allocated series", &l.used, l.lam)
	}
	if version < 3 {
		var idle series
		d.series("idle series", &idle, l.lam)
		overFromIdle(&l.over, &idle, &l.capa, &l.used, l.lam)
	} else {
		d.series("over-allocation series", &l.over, l.lam)
	}
	if d.err != nil {
		return nil, d.err
	}
	if l.base < 0 || l.now < l.base {
		return nil, fmt.Errorf("clock: base %d now %d", l.base, l.now)
	}
	l.root = newRoot()
	_ = sumW // derived from the tenants' weights, exactly
	if version < 4 {
		if err := l.decodeFlatTenants(d, version); err != nil {
			return nil, err
		}
	}
	nt := len(l.tenants)
	var groups []*group
	var gown []*tenant
	if version >= 4 {
		var err error
		if groups, gown, err = l.decodeTree(d); err != nil {
			return nil, err
		}
		nt = len(l.tenants)
	} else {
		ng := d.count("group count", 11)
		groups, gown = make([]*group, ng), make([]*tenant, ng)
		for k := range groups {
			ti := d.index("group tenant", nt)
			g := &group{theta: d.f("group θ"), n: int(d.u("group size")), ix: -1}
			d.series("group series", &g.s, l.lam)
			if d.err != nil {
				return nil, d.err
			}
			if !(g.theta > 0) || math.IsInf(g.theta, 1) || g.n < 0 {
				return nil, fmt.Errorf("group %d invalid", k)
			}
			groups[k], gown[k] = g, l.tenants[ti]
		}
		for _, tn := range l.tenants {
			if err := listGroups(d, "tenant group", groups, gown, tn, &tn.groups, tn.groupIx); err != nil {
				return nil, err
			}
		}
	}
	ng := len(groups)
	nj := d.count("job count", 26) // smallest job record: 11 one-byte fields and 2 floats
	for range nj {
		j := newJob(JobID(d.s("job id")))
		ti := d.index("job tenant", nt)
		j.demand = GPUs(d.i("job demand"))
		j.weight = d.f("job weight")
		j.state = jobState(d.u("job state"))
		j.final = FinalState(d.u("job final state"))
		j.submit, j.finish = d.i("job submit"), d.i("job finish")
		j.finalFair = d.f("job final fair")
		d.series("job alloc series", &j.alloc, l.lam)
		ns := d.count("segment count", 26) // smallest segment: 2 one-byte fields and 3 floats
		prev := int64(0)
		for range ns {
			s := segment{from: d.times(&prev, "segment start")}
			gi := d.index("segment group", ng)
			s.w, s.base, s.gFrom = d.f("segment weight"), d.f("segment base"), d.f("segment group value")
			if d.err != nil {
				return nil, d.err
			}
			if gown[gi] != l.tenants[ti] || groups[gi].kid || !storedWeight(s.w) || s.base < 0 || s.gFrom < 0 {
				return nil, fmt.Errorf("job %q: invalid segment", j.id)
			}
			s.g = groups[gi]
			j.segs = append(j.segs, s)
		}
		if gi := d.u("job group"); d.err == nil && gi > 0 {
			if gi > uint64(ng) {
				return nil, fmt.Errorf("job %q: bad group", j.id)
			}
			j.grp = groups[gi-1]
		}
		if d.err != nil {
			return nil, d.err
		}
		j.tn = l.tenants[ti]
		if l.jobs.get(j.id) != nil {
			return nil, fmt.Errorf("job %q twice", j.id)
		}
		if j.state > finished || (j.state == finished) != (j.final != 0) || j.finalFair < 0 ||
			j.submit < 0 || j.submit > l.now || (j.state == finished && (j.finish < j.submit || j.finish > l.now)) ||
			(j.state != finished && j.finish != 0) || (j.state != finished && len(j.segs) == 0) ||
			(len(j.segs) > 0 && (j.segs[0].from < j.submit || j.segs[len(j.segs)-1].from > l.now)) {
			return nil, fmt.Errorf("job %q: inconsistent record", j.id)
		}
		l.jobs.put(j)
		if j.state == finished && l.hist.windowed() {
			l.done = append(l.done, j)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if err := l.derive(version); err != nil {
		return nil, err
	}
	slices.SortFunc(l.done, func(a, b *job) int { return cmp.Or(cmp.Compare(a.finish, b.finish), cmp.Compare(a.id, b.id)) })
	for _, g := range groups {
		if err := validSeries(&g.s, l.now); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// validSeries checks the times of a series that Check may not reach (a
// group no active job uses any more); the decoder already checked their
// order.
func validSeries(s *series, now int64) error {
	if s.st.cnt > 0 && (s.st.first().t < 0 || s.st.head.t > now) {
		return fmt.Errorf("breakpoint times outside [0, now]")
	}
	return nil
}

// WriteFile writes the snapshot to path atomically: it writes a temporary
// file in the same directory, syncs it, renames it over path and syncs the
// directory, so a crash leaves either the old file or the new one, never a
// torn one. The file keeps path's permission bits when path exists (0600
// for a new file). A write killed midway leaves its temporary file
// (".NAME.tmp-*") behind; the next WriteFile of the same path removes it, so
// calls for one path must not run at once (their renames would race
// anyway). Errors are *Error: ErrSnapshotFile with the operating system's
// error as Cause.
func (l *Ledger) WriteFile(path string) error {
	data, err := l.MarshalBinary()
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	pattern := "." + base + ".tmp-*"
	if stale, err := filepath.Glob(filepath.Join(dir, pattern)); err == nil {
		for _, s := range stale {
			_ = os.Remove(s) // best effort: a leftover of a killed write
		}
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fileErr("WriteFile", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fileErr("WriteFile", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fileErr("WriteFile", path, err)
	}
	if err := f.Sync(); err != nil {
		return fileErr("WriteFile", path, err)
	}
	if err := f.Close(); err != nil {
		return fileErr("WriteFile", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fileErr("WriteFile", path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every platform can sync a directory
		_ = d.Close()
	}
	return nil
}

// ReadFile reads and restores a snapshot written by WriteFile.
func ReadFile(path string) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileErr("ReadFile", path, err)
	}
	l, err := Restore(data)
	if e, ok := errors.AsType[*Error](err); ok {
		e.Op, e.Detail = "ReadFile", path+": "+e.Detail
	}
	return l, err
}

// fileErr is the error of a snapshot file that op could not write or read.
func fileErr(op, path string, cause error) error {
	return &Error{Op: op, Err: ErrSnapshotFile, Detail: path, Cause: cause}
}

// newTenant returns a tenant record with no parent yet.
func newTenant(id TenantID, ord int) *tenant {
	return &tenant{id: id, ord: ord, groupIx: map[float64]*group{}, depIx: -1}
}

// index adds a decoded tenant to the ledger.
func (l *Ledger) index(tn *tenant) error {
	if l.tenantIx[tn.id] != nil || !storedWeight(tn.weight) || !(tn.activeW >= 0) {
		return fmt.Errorf("tenant %q: duplicate or invalid", tn.id)
	}
	l.tenants = append(l.tenants, tn)
	l.tenantIx[tn.id] = tn
	return nil
}

// decodeFlatTenants reads the tenants of a version 1–3 snapshot: all
// children of the cluster, each with the FairShare series those versions
// kept, which stays as the history before the tenant's first segment.
// Their demands and allocations are derived from the jobs.
func (l *Ledger) decodeFlatTenants(d *dec, version uint16) error {
	nt := d.count("tenant count", 8)
	for k := range nt {
		tn := newTenant(TenantID(d.s("tenant id")), k)
		tn.weight = d.f("tenant weight")
		tn.registered = d.u("tenant registered") == 1
		d.i("tenant demand")
		d.i("tenant alloc")
		d.u("tenant active")
		tn.activeW = d.f("tenant active weight")
		d.f("tenant fair")
		if version == 1 {
			d.series2("tenant series", &tn.s, &tn.fs, l.lam)
		} else {
			d.series("tenant alloc series", &tn.s, l.lam)
			d.series("tenant fair share series", &tn.fs, l.lam)
		}
		if d.err != nil {
			return d.err
		}
		if err := l.index(tn); err != nil {
			return err
		}
		tn.parent = l.root
		l.root.kids = append(l.root.kids, tn)
	}
	return nil
}

// decodeTree reads the tenants and θ-groups of a version 4 snapshot, and
// returns the groups with the node each belongs to.
func (l *Ledger) decodeTree(d *dec) ([]*group, []*tenant, error) {
	nt := d.count("tenant count", 12)
	parents := make([]int, nt)
	segGroups := make([][]uint64, nt)
	pgs := make([]uint64, nt)
	for k := range nt {
		tn := newTenant(TenantID(d.s("tenant id")), k)
		parents[k] = d.index("tenant parent", nt+1)
		tn.weight = d.f("tenant weight")
		tn.registered = d.u("tenant registered") == 1
		tn.activeW = d.f("tenant active weight")
		d.series("tenant alloc series", &tn.s, l.lam)
		d.series("tenant fair share series", &tn.fs, l.lam)
		ns := d.count("tenant segment count", 26)
		prev := int64(0)
		for range ns {
			s := segment{from: d.times(&prev, "tenant segment start")}
			segGroups[k] = append(segGroups[k], d.u("tenant segment group"))
			s.w, s.base, s.gFrom = d.f("tenant segment weight"), d.f("tenant segment base"), d.f("tenant segment group value")
			if d.err != nil {
				return nil, nil, d.err
			}
			if !(s.w >= 0) || math.IsInf(s.w, 1) || !(s.base >= 0) || !(s.gFrom >= 0) || s.from > l.now {
				return nil, nil, fmt.Errorf("tenant %q: invalid segment", tn.id)
			}
			tn.segs = append(tn.segs, s)
		}
		pgs[k] = d.u("tenant group")
		if d.err != nil {
			return nil, nil, d.err
		}
		if parents[k] == k+1 {
			return nil, nil, fmt.Errorf("tenant %q: its own parent", tn.id)
		}
		if err := l.index(tn); err != nil {
			return nil, nil, err
		}
	}
	nodes := append([]*tenant{l.root}, l.tenants...)
	for k, tn := range l.tenants {
		tn.parent = nodes[parents[k]]
		tn.parent.kids = append(tn.parent.kids, tn)
	}
	ng := d.count("group count", 12)
	groups, gown := make([]*group, ng), make([]*tenant, ng)
	for k := range groups {
		o := d.index("group owner", nt+1)
		g := &group{kid: d.u("group kind") == 1, theta: d.f("group θ"), n: int(d.u("group size")), ix: -1}
		d.series("group series", &g.s, l.lam)
		if d.err != nil {
			return nil, nil, d.err
		}
		if g.theta == 0 && (g.kid || l.jobShare == SplitJobShare) {
			g.theta = math.Inf(1)
		}
		if !(g.theta > 0) || g.n < 0 {
			return nil, nil, fmt.Errorf("group %d invalid", k)
		}
		groups[k], gown[k] = g, nodes[o]
	}
	for _, n := range nodes {
		if err := listGroups(d, "tenant group", groups, gown, n, &n.groups, n.groupIx); err != nil {
			return nil, nil, err
		}
		var ix map[float64]*group // DemandAware's kid groups are each one child's, not indexed
		if l.mode == QuotaShare {
			n.kgroupIx = map[float64]*group{}
			ix = n.kgroupIx
		}
		if err := listGroups(d, "tenant kid group", groups, gown, n, &n.kgroups, ix); err != nil {
			return nil, nil, err
		}
	}
	// A segment may use a group of a former parent (a tenant removed and
	// added again elsewhere); its current group is its parent's.
	kidGroup := func(tn *tenant, gi uint64) (*group, error) {
		if gi == 0 {
			return nil, nil
		}
		if gi > uint64(ng) || !groups[gi-1].kid {
			return nil, fmt.Errorf("tenant %q: bad group", tn.id)
		}
		return groups[gi-1], nil
	}
	for k, tn := range l.tenants {
		for i := range tn.segs {
			g, err := kidGroup(tn, segGroups[k][i])
			if err != nil {
				return nil, nil, err
			}
			tn.segs[i].g = g
		}
		g, err := kidGroup(tn, pgs[k])
		if err != nil {
			return nil, nil, err
		}
		if g != nil && (g.ix < 0 || gown[pgs[k]-1] != tn.parent) {
			return nil, nil, fmt.Errorf("tenant %q: in a group not its parent's", tn.id)
		}
		tn.pg = g
	}
	return groups, gown, nil
}

// listGroups reads a node's list of groups of one kind.
func listGroups(d *dec, what string, groups []*group, gown []*tenant, n *tenant, list *[]*group, ix map[float64]*group) error {
	m := d.count(what+" count", 1)
	for range m {
		gi := d.index(what, len(groups))
		if d.err != nil {
			return d.err
		}
		g := groups[gi]
		if gown[gi] != n || g.kid != (list == &n.kgroups) || g.ix >= 0 || ix != nil && ix[g.theta] != nil {
			return fmt.Errorf("tenant %q: group %d listed twice or elsewhere", n.id, gi)
		}
		g.ix = len(*list)
		*list = append(*list, g)
		if ix != nil {
			ix[g.theta] = g
		}
	}
	return nil
}

// derive rebuilds what a snapshot does not store: subtree demands and
// allocations, children counts, deps and shares per unit weight; a version
// 1–3 ledger's tenants start their first segment at Now().
func (l *Ledger) derive(version uint16) error {
	for _, tn := range l.tenants {
		a := tn
		for steps := 0; a != l.root; steps++ {
			if a == nil || steps > len(l.tenants) {
				return fmt.Errorf("tenant %q: its ancestors form a cycle", tn.id)
			}
			a = a.parent
		}
		if tn.registered {
			p := tn.parent
			p.nKids++
			p.kidSum, p.kidW = p.kidSumWith(tn.weight, 0)
		}
	}
	for _, j := range l.jobs.all() {
		if j.state == finished {
			continue
		}
		j.tn.own++
		for a := j.tn; a != l.root; a = a.parent {
			a.demand += j.demand
			a.nActive++
			if j.state == running {
				a.alloc += j.demand
			}
		}
	}
	for _, tn := range l.tenants {
		if tn.pg != nil {
			tn.pg.w += tn.weight
		}
	}
	nodes := append([]*tenant{l.root}, l.tenants...)
	for _, n := range nodes {
		n.unit = l.unitOf(n)
	}
	if version < 4 {
		for _, tn := range l.tenants {
			l.rejoin(tn, l.now)
		}
		for _, tn := range l.tenants {
			if tn.own > 0 {
				l.refreshJobs(tn, l.now)
			}
		}
	}
	for _, tn := range l.tenants {
		l.setDep(tn)
	}
	return nil
}
