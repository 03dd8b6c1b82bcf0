package db

import (
	"encoding/json"
	"fmt"
)

// Error is an RFC 7047 error object: Name is the error name that clients
// match on ("constraint violation", "syntax error", ...), Details is free
// text for humans. Syntax, when not empty, is the offending JSON as Open
// vSwitch reports it in its "syntax" extension member.
type Error struct {
	Name    string
	Details string
	Syntax  string
}

func (e *Error) Error() string {
	if e.Details == "" {
		return e.Name
	}
	return e.Name + ": " + e.Details
}

// MarshalJSON writes {"error": Name, "details": Details, "syntax": Syntax},
// leaving out empty details and syntax.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Error   string `json:"error"`
		Details string `json:"details,omitempty"`
		Syntax  string `json:"syntax,omitempty"`
	}{e.Name, e.Details, e.Syntax})
}

// errorf builds an *Error with formatted details.
func errorf(name, format string, args ...any) *Error {
	return &Error{Name: name, Details: fmt.Sprintf(format, args...)}
}

// at records the JSON value the error is about, as Open vSwitch's
// ovsdb_syntax_error does.
func (e *Error) at(v any) *Error {
	e.Syntax = ovsJSON(v)
	return e
}
