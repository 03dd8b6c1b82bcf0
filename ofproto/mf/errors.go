package mf

// STAND-IN until ofproto/ofperr is on main: OpenFlow errors by Open
// vSwitch's names. Each becomes the ofperr constant of the same name
// (ofperr.OFPBMC_BAD_FIELD...); callers should compare with errors.Is
// against these variables, which will then be ofperr values.
type openflowError string

func (e openflowError) Error() string { return string(e) }

// Errors the match and field codecs return, named as Open vSwitch's enum
// ofperr.
var (
	ErrBadType            error = openflowError("OFPBMC_BAD_TYPE")
	ErrBadLen             error = openflowError("OFPBMC_BAD_LEN")
	ErrBadTag             error = openflowError("OFPBMC_BAD_TAG")
	ErrBadWildcards       error = openflowError("OFPBMC_BAD_WILDCARDS")
	ErrBadField           error = openflowError("OFPBMC_BAD_FIELD")
	ErrBadValue           error = openflowError("OFPBMC_BAD_VALUE")
	ErrBadMask            error = openflowError("OFPBMC_BAD_MASK")
	ErrBadPrereq          error = openflowError("OFPBMC_BAD_PREREQ")
	ErrDupField           error = openflowError("OFPBMC_DUP_FIELD")
	ErrPipelineFieldsOnly error = openflowError("OFPBRC_PIPELINE_FIELDS_ONLY")
	ErrBadSetType         error = openflowError("OFPBAC_BAD_SET_TYPE")
	ErrBadSetLen          error = openflowError("OFPBAC_BAD_SET_LEN")
	ErrBadSetArgument     error = openflowError("OFPBAC_BAD_SET_ARGUMENT")
	ErrBadSetMask         error = openflowError("OFPBAC_BAD_SET_MASK")
	ErrBadDLAddrMask      error = openflowError("OFPBMC_BAD_DL_ADDR_MASK")
	ErrBadNWAddrMask      error = openflowError("OFPBMC_BAD_NW_ADDR_MASK")
	ErrInvalidTLVField    error = openflowError("NXFMFC_INVALID_TLV_FIELD")
	ErrMatchInconsistent  error = openflowError("OFPBAC_MATCH_INCONSISTENT")
	errBadSubfield        error = openflowError("OFPBAC_BAD_SET_ARGUMENT")
	errPrereq             error = openflowError("OFPBAC_MATCH_INCONSISTENT")
	errReadOnly           error = openflowError("OFPBAC_BAD_SET_ARGUMENT")
)
