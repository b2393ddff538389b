package slurm

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// lines iterates over the lines of r with their 1-based numbers, without the
// line ending (LF or CRLF). A line longer than MaxLineBytes ends the
// iteration with an ErrLineTooLong *ParseError, a read error with that error.
type lines struct {
	sc   *bufio.Scanner
	src  string
	n    int
	text string
}

func newLines(r io.Reader, src string) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLineBytes)
	return &lines{sc: sc, src: src}
}

func (l *lines) next() bool {
	if !l.sc.Scan() {
		return false
	}
	l.n++
	l.text = strings.TrimSuffix(l.sc.Text(), "\r")
	return true
}

func (l *lines) err() error {
	err := l.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return perr(l.src, l.n+1, "", "", ErrLineTooLong, "longer than %d bytes", MaxLineBytes)
	}
	return err
}

// headerIndex maps the column names (lower case) of a pipe-separated header
// to their index. It returns ok=false when the line is not a header (its
// first field is not a known column name).
func headerIndex(fields []string, known map[string]bool) (map[string]int, bool) {
	if len(fields) == 0 || !known[strings.ToLower(strings.TrimSpace(fields[0]))] {
		return nil, false
	}
	idx := make(map[string]int, len(fields))
	for i, f := range fields {
		k := strings.ToLower(strings.TrimSpace(f))
		if _, dup := idx[k]; !dup {
			idx[k] = i
		}
	}
	return idx, true
}

// validName reports whether s is a plain Slurm name (account, job id, node):
// non-empty and free of spaces, quotes, shell metacharacters and control
// characters, so that it can be printed in a command line as it is.
func validName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_-.+@:[],%=/", r):
		default:
			return false
		}
	}
	return true
}
