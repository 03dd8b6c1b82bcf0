package daemon

import (
	"fmt"
	"strings"
)

// ArgKind says whether an option takes an argument, the way GNU getopt_long
// does: a required argument may follow as "--opt=ARG" or "--opt ARG"; an
// optional one only as "--opt=ARG" (or "-vARG" for a short option).
type ArgKind int

const (
	NoArg ArgKind = iota
	RequiredArg
	OptionalArg
)

// Option is one command-line option. Set receives the argument, and whether
// one was given (always true for RequiredArg, always false for NoArg).
type Option struct {
	Long  string
	Short byte // 0 for none
	Arg   ArgKind
	Set   func(arg string, given bool) error
}

// ParseArgs parses args (without the program name) the way Open vSwitch's
// daemons do with getopt_long: options and operands may be mixed, "--" ends
// the options, and long options may be abbreviated to any unique prefix.
// It returns the operands.
func ParseArgs(args []string, opts []Option) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return append(operands, args[i+1:]...), nil
		case strings.HasPrefix(arg, "--"):
			name, value, hasValue := strings.Cut(arg[2:], "=")
			opt, err := findLong(opts, name)
			if err != nil {
				return nil, err
			}
			switch opt.Arg {
			case NoArg:
				if hasValue {
					return nil, fmt.Errorf("option '--%s' doesn't allow an argument", opt.Long)
				}
			case RequiredArg:
				if !hasValue {
					if i+1 == len(args) {
						return nil, fmt.Errorf("option '--%s' requires an argument", opt.Long)
					}
					i++
					value, hasValue = args[i], true
				}
			}
			if err := opt.Set(value, hasValue); err != nil {
				return nil, fmt.Errorf("--%s: %w", opt.Long, err)
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			if err := parseShort(args, &i, opts); err != nil {
				return nil, err
			}
		default:
			operands = append(operands, arg)
		}
	}
	return operands, nil
}

// parseShort handles one "-xyz" word: flags may be grouped, and the rest of
// the word is the argument of an option that takes one.
func parseShort(args []string, i *int, opts []Option) error {
	word := args[*i]
	for j := 1; j < len(word); j++ {
		opt := findShort(opts, word[j])
		if opt == nil {
			return fmt.Errorf("invalid option -- '%c'", word[j])
		}
		rest := word[j+1:]
		switch opt.Arg {
		case NoArg:
			if err := opt.Set("", false); err != nil {
				return fmt.Errorf("-%c: %w", opt.Short, err)
			}
			continue
		case OptionalArg:
			return wrapShort(opt, opt.Set(rest, rest != ""))
		case RequiredArg:
			if rest == "" {
				if *i+1 == len(args) {
					return fmt.Errorf("option requires an argument -- '%c'", opt.Short)
				}
				*i++
				rest = args[*i]
			}
			return wrapShort(opt, opt.Set(rest, true))
		}
	}
	return nil
}

func wrapShort(opt *Option, err error) error {
	if err != nil {
		return fmt.Errorf("-%c: %w", opt.Short, err)
	}
	return nil
}

func findLong(opts []Option, name string) (*Option, error) {
	var matches []*Option
	for k := range opts {
		if opts[k].Long == name {
			return &opts[k], nil
		}
		if opts[k].Long != "" && strings.HasPrefix(opts[k].Long, name) {
			matches = append(matches, &opts[k])
		}
	}
	switch {
	case name == "" || len(matches) == 0:
		return nil, fmt.Errorf("unrecognized option '--%s'", name)
	case len(matches) > 1:
		return nil, fmt.Errorf("option '--%s' is ambiguous", name)
	}
	return matches[0], nil
}

func findShort(opts []Option, c byte) *Option {
	for k := range opts {
		if opts[k].Short == c {
			return &opts[k]
		}
	}
	return nil
}
