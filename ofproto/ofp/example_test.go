package ofp_test

import (
	"fmt"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// A connection decodes each message, type-switches on it and answers in
// the request's version with its xid; a request it cannot decode is
// answered with Open vSwitch's error, echoing the request.
func Example() {
	request, _ := ofp.Encode(ofp.Version15, 7, &ofp.MeterFeaturesRequest{})
	var reply []byte
	h, m, err := ofp.Decode(request)
	switch m := m.(type) {
	case *ofp.MeterFeaturesRequest:
		reply, _ = ofp.Encode(h.Version, h.Xid, &ofp.MeterFeaturesReply{MaxMeters: 1000, BandTypes: 1 << ofp.BandDrop, MaxBands: 1})
	case nil:
		reply, _ = ofp.Encode(h.Version, h.Xid, ofp.NewErrorReply(err, request))
	default:
		_ = m
		reply, _ = ofp.Encode(h.Version, h.Xid, ofp.NewErrorReply(ofperr.OFPBRC_BAD_TYPE, request))
	}
	rh, rm, _ := ofp.Decode(reply)
	fmt.Printf("%s xid=%d max_meters=%d\n", rh.Raw, rh.Xid, rm.(*ofp.MeterFeaturesReply).MaxMeters)

	// A request of an unknown type gets OFPBRC_BAD_TYPE.
	_, _, err = ofp.Decode([]byte{0x06, 0x63, 0, 8, 0, 0, 0, 9})
	fmt.Println(err)
	// Output:
	// OFPST13_METER_FEATURES_REPLY xid=7 max_meters=1000
	// OFPBRC_BAD_TYPE
}
