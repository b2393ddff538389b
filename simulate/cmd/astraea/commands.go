package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command is one subcommand of astraea.
type command struct {
	name    string
	summary string // one line for the usage
	// run runs the command on the arguments after its name. procs, when
	// not nil, is told how many runs the command makes at once, as soon as
	// it knows (see main). -h prints the command's usage on stdout and
	// returns flag.ErrHelp; a mistake on the command line is printed on
	// stderr and returned as errUsage.
	run func(args []string, stdout, stderr io.Writer, procs func(n int)) error
}

// commands are astraea's subcommands, in the order the usage lists them.
// The first runs when the first argument is a flag or there is none.
// A new subcommand is one line here.
func commands() []command {
	return []command{
		{"simulate", "simulate policies on a trace or the embedded default workload (the default command)", runWith},
		{"repro", "the paper's two reference experiments, every policy at several tick phases, the paper's figures beside ours", runRepro},
		{"sweep", "run a grid of simulations, any flag a dimension, in parallel or in shards; sweep merge joins them", sweep},
	}
}

// errUsage marks a command-line mistake, already printed on stderr with a
// hint to the usage.
var errUsage = errors.New("usage")

// dispatch runs the subcommand args name, or the first of cmds.
func dispatch(cmds []command, args []string, stdout, stderr io.Writer, procs func(n int)) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return cmds[0].run(args, stdout, stderr, procs)
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		if len(rest) == 0 {
			writeUsage(stdout, cmds)
			return nil
		}
		// help NAME is NAME -h: each command owns its usage.
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range cmds {
		if c.name == name {
			return c.run(rest, stdout, stderr, procs)
		}
	}
	names := make([]string, 0, len(cmds)+1)
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "astraea: unknown command %q (known: %s)\n", name, strings.Join(append(names, "help"), ", "))
	return errUsage
}

// writeUsage prints the synopsis and the list of commands.
func writeUsage(w io.Writer, cmds []command) {
	fmt.Fprintf(w, "usage: astraea [command] [flags]\n\ncommands:\n")
	width := len("help")
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "help", "this list, or a command's flags: astraea help COMMAND")
}

// parseCommandFlags parses args with fs, which must not have printed
// anything yet. -h or -help prints the usage and fs's flags on stdout and
// returns flag.ErrHelp; a bad flag is printed on stderr with a hint and
// returned as errUsage.
func parseCommandFlags(fs *flag.FlagSet, cmds []command, args []string, stdout, stderr io.Writer) error {
	var msg strings.Builder
	fs.SetOutput(&msg)
	fs.Usage = func() {} // printed below, where it belongs
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeUsage(stdout, cmds)
		fmt.Fprintf(stdout, "\nflags of %s:\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return flag.ErrHelp
	case err != nil:
		fmt.Fprintf(stderr, "astraea %s: %s (astraea help %s lists the flags)\n", fs.Name(), strings.TrimSpace(msg.String()), fs.Name())
		return errUsage
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "astraea %s: unexpected argument %q (astraea help %s lists the flags)\n", fs.Name(), fs.Arg(0), fs.Name())
		return errUsage
	}
	return nil
}
