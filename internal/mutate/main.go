// Command mutate measures how well a package's tests check its results: it
// makes one small change (a mutant) to the package's source at a time, runs
// the package's tests against it and reports the mutants no test caught.
//
// Usage, from the module root:
//
//	nice -n 19 go run ./internal/mutate -pkg ./ledger -n 60 -seed 1
//
// The mutation operators are the classic single-point ones:
//
//   - cmp: a comparison flipped at its boundary (< to <=, >= to >, == to !=, …)
//   - arith: an arithmetic operator swapped (+ and -, * and /, % to *)
//   - logic: && and || swapped
//   - negate: an if or for condition negated
//   - guard: an error guard dropped (the condition of an if whose body
//     returns an error becomes false)
//   - const: a numeric literal set to 0, or to 1 when it is 0
//   - incdec: ++ and -- swapped
//
// Sites are enumerated in file and position order, shuffled by -seed, and
// taken in that order until -n mutants that compile have been run, so a
// sample is reproducible from its seed. A mutant that does not compile is not
// counted. Each mutant is built with go test -c and the -overlay flag (the
// tree is never written to) and its test binary runs in the package
// directory with RAPID_NOFAILFILE=1, so a failing property does not leave a
// rapid fail file behind for the next run to replay. A run that exceeds
// -timeout counts as caught (the tests hung on it).
//
// Only one build and one test binary run at a time: a campaign is slow (a
// few seconds per mutant) and meant to share the machine, hence nice.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	pkg := flag.String("pkg", "", "package directory to mutate, e.g. ./ledger (required)")
	n := flag.Int("n", 40, "number of compiling mutants to run")
	seed := flag.Uint64("seed", 1, "sampling seed")
	timeout := flag.Duration("timeout", 0, "per-mutant test timeout (default: 5× the unmutated run + 20s)")
	run := flag.String("run", "", "passed to the test binary as -test.run")
	list := flag.Bool("list", false, "list the sampled mutants without running them")
	minScore := flag.Float64("min", 0, "exit with status 3 when the score (percent caught) is below this")
	only := flag.String("only", "", "run only the mutants listed in this file, one a line as printed (file:line:col op change)")
	flag.Parse()
	if *pkg == "" || *n <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	var keep map[string]bool
	if *only != "" {
		b, err := os.ReadFile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		keep = map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				keep[line] = true
			}
		}
	}
	score, err := campaign(os.Stdout, *pkg, *n, *seed, *timeout, *run, *list, keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
	if !*list && score < *minScore {
		fmt.Fprintf(os.Stderr, "mutate: score %.1f %% is below -min %.1f %%\n", score, *minScore)
		os.Exit(3)
	}
}

// A mutant is one change at one site of one file.
type mutant struct {
	file  string // absolute path
	pos   token.Position
	op    string // operator class, e.g. "cmp"
	desc  string // e.g. "< → <="
	apply func() // makes the change in the AST
	undo  func() // reverts it
}

func (m mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s %s", filepath.Base(m.file), m.pos.Line, m.pos.Column, m.op, m.desc)
}

// parsed is one source file with its AST, kept so that mutants can be
// printed from it.
type parsed struct {
	path string
	fset *token.FileSet
	file *ast.File
}

// campaign runs the sample and returns its score in percent.
func campaign(w io.Writer, pkg string, n int, seed uint64, timeout time.Duration, run string, list bool, keep map[string]bool) (float64, error) {
	dir, err := filepath.Abs(pkg)
	if err != nil {
		return 0, err
	}
	files, err := parseDir(dir)
	if err != nil {
		return 0, err
	}
	var all []mutant
	byFile := map[string]*parsed{}
	for _, p := range files {
		byFile[p.path] = p
		all = append(all, sites(p.fset, p.file, p.path)...)
	}
	rnd := rand.New(rand.NewPCG(seed, 0x6d757461))
	rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	if keep != nil {
		all = slices.DeleteFunc(all, func(m mutant) bool { return !keep[m.String()] })
	}
	fmt.Fprintf(w, "# %s: %d mutation sites, seed %d, sample %d\n", pkg, len(all), seed, n)
	if list {
		for _, m := range all[:min(n, len(all))] {
			fmt.Fprintln(w, m)
		}
		return 0, nil
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "pkg.test")
	if err := build(dir, bin, ""); err != nil {
		return 0, fmt.Errorf("unmutated package does not build: %w", err)
	}
	start := time.Now()
	if ok, out := test(dir, bin, run, time.Hour); !ok {
		return 0, fmt.Errorf("unmutated tests fail:\n%s", out)
	}
	if timeout == 0 {
		timeout = 5*time.Since(start) + 20*time.Second
	}
	began := time.Now()
	var ran, caught, noCompile int
	var survivors []string
	for _, m := range all {
		if ran == n {
			break
		}
		p := byFile[m.file]
		m.apply()
		var buf bytes.Buffer
		err := printer.Fprint(&buf, p.fset, p.file)
		m.undo()
		if err != nil {
			return 0, fmt.Errorf("%v: printing: %w", m, err)
		}
		src := filepath.Join(tmp, "mutant.go")
		if err := os.WriteFile(src, buf.Bytes(), 0o600); err != nil {
			return 0, err
		}
		overlay := filepath.Join(tmp, "overlay.json")
		o, _ := json.Marshal(map[string]map[string]string{"Replace": {m.file: src}})
		if err := os.WriteFile(overlay, o, 0o600); err != nil {
			return 0, err
		}
		if build(dir, bin, overlay) != nil {
			noCompile++
			continue
		}
		ran++
		ok, _ := test(dir, bin, run, timeout)
		verdict := "caught"
		if ok {
			verdict = "SURVIVED"
			survivors = append(survivors, m.String())
		} else {
			caught++
		}
		fmt.Fprintf(w, "%3d %-8s %v\n", ran, verdict, m)
	}
	score := 0.0
	if ran > 0 {
		score = 100 * float64(caught) / float64(ran)
	}
	fmt.Fprintf(w, "# %s: %d/%d caught (%.1f %%), %d not compiling skipped, seed %d, %v\n",
		pkg, caught, ran, score, noCompile, seed, time.Since(began).Round(time.Second))
	for _, s := range survivors {
		fmt.Fprintln(w, "# survived:", s)
	}
	return score, nil
}

func parseDir(dir string) ([]*parsed, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*parsed
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		out = append(out, &parsed{name, fset, f})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Go source files in %s", dir)
	}
	return out, nil
}

func build(dir, bin, overlay string) error {
	args := []string{"test", "-c", "-p", "1", "-ldflags=-s -w", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// test runs the test binary in the package directory; ok is true when every
// test passed within timeout.
func test(dir, bin, run string, timeout time.Duration) (ok bool, out []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-test.count=1", "-test.failfast"}
	if run != "" {
		args = append(args, "-test.run", run)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RAPID_NOFAILFILE=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && ctx.Err() == nil {
		return false, append(out, err.Error()...)
	}
	return err == nil, out
}

var flips = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.ADD: token.SUB, token.SUB: token.ADD,
	token.MUL: token.QUO, token.QUO: token.MUL,
	token.REM:  token.MUL,
	token.LAND: token.LOR, token.LOR: token.LAND,
}

func class(t token.Token) string {
	switch t {
	case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
		return "cmp"
	case token.LAND, token.LOR:
		return "logic"
	}
	return "arith"
}

// sites returns every mutant of f, in position order.
func sites(fset *token.FileSet, f *ast.File, path string) []mutant {
	var out []mutant
	add := func(n ast.Node, op, desc string, apply, undo func()) {
		out = append(out, mutant{path, fset.Position(n.Pos()), op, desc, apply, undo})
	}
	negate := func(n ast.Node, cond *ast.Expr) {
		orig := *cond
		add(n, "negate", "negate "+short(fset, orig), func() { *cond = &ast.UnaryExpr{Op: token.NOT, X: &ast.ParenExpr{X: orig}} }, func() { *cond = orig })
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			// Constants and types: changing an array length or an iota
			// block mostly fails to compile or renames a value.
			return n.Tok != token.CONST && n.Tok != token.TYPE
		case *ast.BinaryExpr:
			if to, ok := flips[n.Op]; ok {
				from := n.Op
				add(n, class(from), from.String()+" → "+to.String(), func() { n.Op = to }, func() { n.Op = from })
			}
		case *ast.IfStmt:
			if returnsError(n.Body) {
				orig := n.Cond
				add(n, "guard", "drop guard "+short(fset, orig), func() { n.Cond = ast.NewIdent("false") }, func() { n.Cond = orig })
			}
			negate(n, &n.Cond)
		case *ast.ForStmt:
			if n.Cond != nil {
				negate(n, &n.Cond)
			}
		case *ast.IncDecStmt:
			from := n.Tok
			to := token.INC
			if from == token.INC {
				to = token.DEC
			}
			add(n, "incdec", from.String()+" → "+to.String(), func() { n.Tok = to }, func() { n.Tok = from })
		case *ast.BasicLit:
			if n.Kind != token.INT && n.Kind != token.FLOAT {
				return true
			}
			from := n.Value
			to := "0"
			if isZero(from) {
				to = "1"
			}
			add(n, "const", from+" → "+to, func() { n.Value = to }, func() { n.Value = from })
		}
		return true
	})
	slices.SortStableFunc(out, func(a, b mutant) int { return a.pos.Offset - b.pos.Offset })
	return out
}

// returnsError reports whether body holds a return whose last result looks
// like an error: a call (fmt.Errorf, errors.New, a constructor) or a name
// containing "err". Without type information this is a heuristic; a mutant
// it misclassifies is still a valid mutant, only labelled "guard".
func returnsError(body *ast.BlockStmt) bool {
	for _, s := range body.List {
		r, ok := s.(*ast.ReturnStmt)
		if !ok || len(r.Results) == 0 {
			continue
		}
		switch e := r.Results[len(r.Results)-1].(type) {
		case *ast.CallExpr:
			return true
		case *ast.Ident:
			return strings.Contains(strings.ToLower(e.Name), "err")
		case *ast.SelectorExpr:
			return strings.Contains(strings.ToLower(e.Sel.Name), "err")
		}
	}
	return false
}

func isZero(lit string) bool {
	return strings.Trim(strings.ReplaceAll(lit, "_", ""), "0.xXeE+-") == ""
}

func short(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	printer.Fprint(&b, fset, e)
	s := b.String()
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
