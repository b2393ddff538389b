package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestAQuoteCostsOnlyItsLine: whatever is wrong with the quotes of a row,
// the error names that row, and lenient reading skips that row alone.
func TestAQuoteCostsOnlyItsLine(t *testing.T) {
	const hdr = "tenant,job,gpus,submit,duration\n"
	row := func(i int) string { return fmt.Sprintf("a,j%d,1,%d,10\n", i, i) }
	tests := []struct{ name, bad string }{
		{"an opening quote never closed", "a,\"j-bad,1,3,10\n"},
		{"a quote inside an unquoted field", "a,j\"bad,1,3,10\n"},
		{"text after a closing quote", "a,\"j\"bad,1,3,10\n"},
		{"an opening quote in the last field", "a,jbad,1,3,\"10\n"},
		{"a quote closed on the next line", "a,\"jbad\n\",1,3,10\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(hdr + row(1) + row(2) + tt.bad)
			for i := 4; i <= 1000; i++ {
				b.WriteString(row(i))
			}
			in := b.String()
			_, _, err := read(t, in, Options{Name: "q.csv"})
			var re *RowError
			if !errors.Is(err, ErrSyntax) || !errors.As(err, &re) || re.Line != 4 {
				t.Fatalf("strict: %v, want a syntax error on line 4", err)
			}
			jobs, r, err := read(t, in, Options{Lenient: true})
			if err != nil {
				t.Fatal(err)
			}
			sk := r.Skipped()
			rows := nonEmptyLines(in) - 1
			if len(jobs)+sk.Rows != rows || len(jobs) < 998 || sk.ByReason[ErrSyntax.Error()] == 0 {
				t.Fatalf("lenient: %d jobs and %+v skipped of %d rows", len(jobs), sk, rows)
			}
		})
	}
}

// TestQuotaQuotesCostOnlyTheirLine: the quota reader shares the rule.
func TestQuotaQuotesCostOnlyTheirLine(t *testing.T) {
	_, err := ParseQuotas(strings.NewReader("vc,weight\na,1\n\"b,2\nc,3\n"), "q.csv")
	var re *RowError
	if !errors.Is(err, ErrQuota) || !errors.Is(err, ErrSyntax) || !errors.As(err, &re) || re.Line != 3 {
		t.Fatalf("%v, want a quota syntax error on line 3", err)
	}
}

// heapGrowth returns how many bytes f allocates.
func heapGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestInputIsBounded: one line, one value or one compressed stream cannot
// make a reader allocate much more than MaxLineBytes, nor an error message
// longer than an excerpt.
func TestInputIsBounded(t *testing.T) {
	const hdr = "tenant,job,gpus,submit,duration\n"
	huge := strings.Repeat("7", 8*MaxLineBytes)
	wide := strings.Repeat("x", MaxLineBytes/2)
	tests := []struct {
		name    string
		in      func() io.Reader
		opts    Options
		err     error
		line    int
		lenient bool // the error ends lenient reading too
	}{
		{"a line longer than the limit", func() io.Reader { return strings.NewReader(hdr + "a,j,1,0,10\na,k,1,0," + huge + "\n") },
			Options{}, ErrLineTooLong, 3, true},
		{"a header longer than the limit", func() io.Reader { return strings.NewReader(huge + "\n") },
			Options{}, ErrLineTooLong, 1, true},
		{"a file of zero bytes without a line break", func() io.Reader { return io.LimitReader(zeros{}, 64*MaxLineBytes) },
			Options{}, ErrLineTooLong, 1, true},
		{"a long bad value", func() io.Reader { return strings.NewReader(hdr + "a,j,1,0," + wide + "\n") },
			Options{}, ErrNumber, 2, false},
		{"a gzip stream past the limit", func() io.Reader {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			w.Write([]byte(hdr))
			for i := range 200000 {
				fmt.Fprintf(w, "a,j%d,1,0,10\n", i)
			}
			w.Close()
			return &b
		}, Options{MaxDecompressed: 1 << 20}, ErrTooLarge, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lenient := range []bool{false, true} {
				opts := tt.opts
				opts.Lenient = lenient
				in := tt.in()
				var err error
				grew := heapGrowth(func() {
					var r *Reader
					if r, err = NewReader(in, opts); err == nil {
						_, err = ReadAll(r)
					}
				})
				if lenient && !tt.lenient {
					if err != nil {
						t.Fatalf("lenient: %v", err)
					}
					continue
				}
				var re *RowError
				if !errors.Is(err, tt.err) || !errors.As(err, &re) || (tt.line > 0 && re.Line != tt.line) {
					t.Fatalf("lenient %v: %v, want %v on line %d", lenient, err, tt.err, tt.line)
				}
				if n := len(err.Error()); n > 200 {
					t.Errorf("an error message of %d bytes", n)
				}
				// (The rows of the gzip stream are jobs, which take memory.)
				if grew > 4*MaxLineBytes+4<<20 && tt.err != ErrTooLarge {
					t.Errorf("reading allocated %d MiB", grew>>20)
				}
			}
		})
	}
	t.Run("a gzip stream of exactly the limit is read", func(t *testing.T) {
		body := hdr + "a,j,1,0,10\n"
		r, err := NewReader(bytes.NewReader(gz(body)), Options{MaxDecompressed: int64(len(body))})
		if err != nil {
			t.Fatal(err)
		}
		if jobs, err := ReadAll(r); err != nil || len(jobs) != 1 {
			t.Fatalf("%d jobs, %v", len(jobs), err)
		}
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// FuzzSplitLine: on one line, the record splitter reads exactly what
// encoding/csv reads (with TrimLeadingSpace), and refuses what it refuses.
func FuzzSplitLine(f *testing.F) {
	for _, s := range []string{"a,b,c", ` "a""b",c`, `"a`, `a"b`, `"a"b`, "a,\r", "\t,  ,", `"",""`, "é, \u00a0x", "\xff,\"\xfe\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") || strings.TrimSuffix(line, "\r") == "" || strings.HasPrefix(line, "\x1f\x8b") {
			return // not one line of CSV, or the gzip magic number
		}
		cr := csv.NewReader(strings.NewReader(line))
		cr.FieldsPerRecord = -1
		cr.TrimLeadingSpace = true
		want, werr := cr.Read()
		rs, _, err := newRecords(strings.NewReader(line), "fuzz", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, n, gerr := rs.read()
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%q: encoding/csv %q, %v; records %q, %v", line, want, werr, got, gerr)
		}
		if gerr != nil {
			if !errors.Is(gerr, ErrSyntax) || n != 1 {
				t.Fatalf("%q: error %v on line %d", line, gerr, n)
			}
			return
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: encoding/csv %q, records %q", line, want, got)
		}
		if _, _, err := rs.read(); err != io.EOF {
			t.Fatalf("%q: a second record: %v", line, err)
		}
	})
}
