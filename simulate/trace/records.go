package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// MaxLineBytes bounds one line of a trace or quota file (without its line
// ending). A longer line is an ErrLineTooLong error that ends the reading,
// in lenient mode too: such a file is not a trace (a binary file, or
// tables joined without a line break), and a skip would keep scanning it.
const MaxLineBytes = 1 << 20

// DefaultMaxDecompressed is the most a gzip input may decompress to when
// Options.MaxDecompressed is zero: 1 GiB, some 400 times the largest
// published two-week trace. Past it reading ends with ErrTooLarge, so that
// a small compressed file cannot make a reader run for hours.
const DefaultMaxDecompressed = 1 << 30

// maxExcerpt bounds the text of an offending value quoted in an error.
const maxExcerpt = 64

// records splits its input into CSV records of one line each: a quoted
// field may hold commas and doubled quotes ("") but not a line break, so a
// stray quote costs its own line and nothing more. Fields are parsed as
// encoding/csv does with TrimLeadingSpace; empty lines are skipped. Memory
// is bounded by MaxLineBytes.
type records struct {
	name string
	br   *bufio.Reader
	line int    // the last line read, 1-based
	long []byte // a line longer than br's buffer, assembled
	rec  []byte // the unescaped fields of the record, back to back
	ends []int  // the end of each field in rec
	out  []string
	err  error // sticky: a read error or a line too long
}

// newRecords returns the records of in, decompressing gzip input (detected
// by its magic bytes) up to maxGz bytes (DefaultMaxDecompressed when 0, no
// limit when negative). The returned closer, if not nil, is the
// decompressor.
func newRecords(in io.Reader, name string, maxGz int64) (*records, io.Closer, error) {
	br := bufio.NewReaderSize(in, 64<<10)
	var gz *gzip.Reader
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		var err error
		if gz, err = gzip.NewReader(br); err != nil {
			return nil, nil, fmt.Errorf("trace: %s: %w", name, err)
		}
		if maxGz == 0 {
			maxGz = DefaultMaxDecompressed
		}
		var src io.Reader = gz
		if maxGz > 0 {
			src = &capped{r: gz, left: maxGz, max: maxGz}
		}
		br = bufio.NewReaderSize(src, 64<<10)
	}
	rs := &records{name: name, br: br}
	if gz == nil {
		return rs, nil, nil
	}
	return rs, gz, nil
}

// capped reads from r until more than max bytes have come through, then
// fails with ErrTooLarge.
type capped struct {
	r         io.Reader
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a stream of exactly max bytes from a longer one.
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w: more than %d bytes after decompression", ErrTooLarge, c.max)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// read returns the fields of the next non-empty line and its number, or
// io.EOF. A malformed line is a *RowError matching ErrSyntax, and reading
// can go on with the next line; a line too long, a decompressed input too
// large or a read error is final.
func (rs *records) read() ([]string, int, error) {
	if rs.err != nil {
		return nil, rs.line, rs.err
	}
	for {
		line, err := rs.readLine()
		if err != nil {
			rs.err = err
			return nil, rs.line, err
		}
		if len(line) == 0 {
			continue // encoding/csv skips empty lines too
		}
		fields, err := rs.split(line)
		return fields, rs.line, err
	}
}

// readLine returns the next line without its line ending (LF, CRLF, or a
// CR before the end of input).
func (rs *records) readLine() ([]byte, error) {
	rs.long = rs.long[:0]
	for {
		frag, err := rs.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(rs.long)+len(frag) > MaxLineBytes+2 { // +2: the line ending
				rs.line++
				return nil, rs.tooLong()
			}
			rs.long = append(rs.long, frag...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, rs.readErr(err)
		}
		if err == io.EOF && len(frag) == 0 && len(rs.long) == 0 {
			return nil, io.EOF
		}
		rs.line++
		line := frag // mostly the line is in br's buffer
		if len(rs.long) > 0 {
			rs.long = append(rs.long, frag...)
			line = rs.long
		}
		n := len(line)
		if n > 0 && line[n-1] == '\n' {
			n--
		}
		if n > 0 && line[n-1] == '\r' {
			n--
		}
		if n > MaxLineBytes {
			return nil, rs.tooLong()
		}
		return line[:n], nil
	}
}

func (rs *records) tooLong() error {
	return &RowError{File: rs.name, Line: rs.line, Err: fmt.Errorf("%w: longer than %d bytes", ErrLineTooLong, MaxLineBytes)}
}

func (rs *records) readErr(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return &RowError{File: rs.name, Line: rs.line + 1, Err: err}
	}
	return fmt.Errorf("trace: %s: line %d: %w", rs.name, rs.line+1, err)
}

// split parses one line into fields. The fields share one string, so that
// a record costs two allocations whatever its width.
func (rs *records) split(line []byte) ([]string, error) {
	rs.rec, rs.ends = rs.rec[:0], rs.ends[:0]
	col := 0 // 0-based byte offset into line, for errors
	for {
		i := bytes.IndexFunc(line[col:], func(r rune) bool { return !unicode.IsSpace(r) })
		if i < 0 {
			i = len(line) - col
		}
		col += i
		if col == len(line) || line[col] != '"' {
			// An unquoted field runs to the next comma and may not hold a quote.
			end := bytes.IndexByte(line[col:], ',')
			if end < 0 {
				end = len(line) - col
			}
			f := line[col : col+end]
			if q := bytes.IndexByte(f, '"'); q >= 0 {
				return nil, rs.syntax(col+q, `bare " in a field that does not start with one`)
			}
			rs.rec = append(rs.rec, f...)
			rs.ends = append(rs.ends, len(rs.rec))
			col += end
		} else {
			open := col
			col++
			for {
				q := bytes.IndexByte(line[col:], '"')
				if q < 0 {
					return nil, rs.syntax(open, "quoted field not closed on its line")
				}
				rs.rec = append(rs.rec, line[col:col+q]...)
				col += q + 1
				if col < len(line) && line[col] == '"' {
					rs.rec = append(rs.rec, '"')
					col++
					continue
				}
				if col < len(line) && line[col] != ',' {
					return nil, rs.syntax(col, `text after the closing " of a quoted field`)
				}
				break
			}
			rs.ends = append(rs.ends, len(rs.rec))
		}
		if col == len(line) {
			break
		}
		col++ // the comma
	}
	s := string(rs.rec)
	rs.out = rs.out[:0]
	from := 0
	for _, e := range rs.ends {
		rs.out = append(rs.out, s[from:e])
		from = e
	}
	return rs.out, nil
}

func (rs *records) syntax(col int, what string) error {
	return &RowError{File: rs.name, Line: rs.line, Err: fmt.Errorf("%w: column %d: %s", ErrSyntax, col+1, what)}
}

// excerpt returns s, or its first maxExcerpt bytes (cut at a character
// boundary) and "…" with the length, so that an error stays short
// whatever the input.
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return s
	}
	n := maxExcerpt
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}
