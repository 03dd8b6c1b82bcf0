package mf

import "errors"

// Local errors until ofproto/ofperr lands on main; the codecs will return
// ofperr values (OFPBAC_BAD_SET_ARGUMENT, OFPBMC_BAD_PREREQ...) instead.
var (
	errBadSubfield = errors.New("subfield out of range of its field")
	errPrereq      = errors.New("field's prerequisites are not met by the match")
	errReadOnly    = errors.New("field is not writable")
)
