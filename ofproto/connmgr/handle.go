package connmgr

import (
	"errors"
	"fmt"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// handleMessage decodes one request and dispatches it (Open vSwitch's
// handle_openflow); a failure goes back as an OpenFlow error echoing the
// request.
func (m *Manager) handleMessage(c *ofconn, b []byte) {
	h, msg, err := ofp.Decode(b)
	if err == nil {
		err = m.dispatch(c, &h, msg, b)
	}
	if err != nil {
		m.sendError(c, b, err)
	}
}

// sendError is ofconn_send_error: the error in the request's version and
// xid, the whole request echoed.
func (m *Manager) sendError(c *ofconn, req []byte, err error) {
	var e ofperr.Error
	if !errors.As(err, &e) {
		m.log.Warn(fmt.Sprintf("%s: %v", c.name, err))
		e = ofperr.OFPBRC_EPERM
	}
	h := parseHeader(req)
	name := "invalid"
	if rh, _, derr := ofp.Decode(req); derr == nil || rh.Raw != 0 {
		name = rh.Raw.String()
	}
	m.log.Info(fmt.Sprintf("%s: sending %s error reply to %s message", c.name, e, name))
	out, encErr := ofp.Encode(h.Version, h.XID, &ofp.Error{Err: e, Data: errorData(req)})
	if encErr != nil {
		out, encErr = ofp.Encode(c.version, h.XID, &ofp.Error{Err: e, Data: errorData(req)})
	}
	if encErr != nil {
		m.log.Error(fmt.Sprintf("%s: cannot encode %s: %v", c.name, e, encErr))
		return
	}
	c.send(out)
}

// reply encodes msg in the connection's version, split into as many
// multipart replies as it needs.
func (m *Manager) reply(c *ofconn, xid uint32, msg ofp.Msg) {
	parts, err := ofp.EncodeReplies(c.version, xid, msg)
	if err != nil {
		m.log.Error(fmt.Sprintf("%s: cannot encode reply: %v", c.name, err))
		return
	}
	for _, p := range parts {
		c.send(p)
	}
}

// rejectSlave is reject_secondary_controller.
func rejectSlave(c *ofconn) error {
	if c.typ == Primary && c.state.role == RoleSlave {
		return ofperr.OFPBRC_IS_SECONDARY
	}
	return nil
}

func (m *Manager) origin(c *ofconn, h *ofp.Header) Origin {
	return Origin{Conn: c.id, XID: h.Xid}
}

// dispatch is handle_single_part_openflow.
func (m *Manager) dispatch(c *ofconn, h *ofp.Header, msg ofp.Msg, b []byte) error {
	switch msg := msg.(type) {
	case *ofp.EchoRequest:
		m.reply(c, h.Xid, &ofp.EchoReply{Data: msg.Data})
		return nil
	case *ofp.EchoReply:
		return nil
	case *ofp.FeaturesRequest:
		f := m.br.Features()
		f.Capabilities = wireCapabilities(f.Capabilities|CapBundles, c.version)
		if c.version > OF10 {
			f.Actions = 0 // reserved after 1.0
		}
		f.Ports = nil
		if c.version <= OF12 {
			f.Ports = m.br.PortDescs()
		}
		m.reply(c, h.Xid, &f)
		return nil
	case *ofp.GetConfigRequest:
		cfg := ofp.SwitchConfig{Flags: m.br.FragHandling(), MissSendLen: uint16(c.state.missSendLen)}
		if c.version < OF13 && c.asyncConfig().Primary[AsyncPacketIn]&(1<<ReasonInvalidTTL) != 0 {
			cfg.Flags |= ofp.ConfigInvalidTTLToController
		}
		m.reply(c, h.Xid, &ofp.GetConfigReply{SwitchConfig: cfg})
		return nil
	case *ofp.SetConfig:
		return m.setConfig(c, msg)
	case *ofp.BarrierRequest:
		m.reply(c, h.Xid, &ofp.BarrierReply{})
		return nil
	case *ofp.RoleRequest:
		return m.roleRequest(c, h, msg)
	case *ofp.PacketOut:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.PacketOut(msg, m.origin(c, h))
	case *ofp.PortMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.PortMod(msg)
	case *ofp.FlowMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		m.fixFlowModTable(c, msg)
		return m.br.FlowMod(msg, m.origin(c, h))
	case *ofp.GroupMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.GroupMod(msg, m.origin(c, h))
	case *ofp.MeterMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.MeterMod(msg)
	case *ofp.Resume:
		return m.br.Resume(msg, m.origin(c, h))

	case *ofp.DescRequest:
		d := m.br.Desc()
		m.reply(c, h.Xid, &d)
		return nil
	case *ofp.FlowStatsRequest:
		flows, err := m.br.FlowStats(msg)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.FlowStatsReply{NX: msg.NX, Flows: flows})
		return nil
	case *ofp.AggregateRequest:
		agg, err := m.br.AggregateStats((*ofp.FlowStatsRequest)(msg))
		if err != nil {
			return err
		}
		agg.NX = msg.NX
		m.reply(c, h.Xid, &agg)
		return nil
	case *ofp.GroupStatsRequest:
		gs, err := m.br.GroupStats(msg.GroupID)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.GroupStatsReply{Stats: gs})
		return nil
	case *ofp.GroupDescRequest:
		m.reply(c, h.Xid, &ofp.GroupDescReply{Groups: m.br.GroupDescs(msg.GroupID)})
		return nil
	case *ofp.GroupFeaturesRequest:
		gf := m.br.GroupFeatures()
		m.reply(c, h.Xid, &gf)
		return nil
	case *ofp.MeterStatsRequest:
		ms, err := m.br.MeterStats(msg.MeterID)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.MeterStatsReply{Stats: ms})
		return nil
	case *ofp.MeterConfigRequest:
		mc, err := m.br.MeterConfigs(msg.MeterID)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.MeterConfigReply{Meters: mc})
		return nil
	case *ofp.MeterFeaturesRequest:
		mfr := m.br.MeterFeatures()
		m.reply(c, h.Xid, &mfr)
		return nil
	case *ofp.TableMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.TableMod(msg)
	case *ofp.PortDescRequest:
		ports := m.br.PortDescs()
		if msg.PortNo != mf.PortNone {
			ports = portsNamed(ports, msg.PortNo)
		}
		m.reply(c, h.Xid, &ofp.PortDescReply{Ports: ports})
		return nil
	case *ofp.PortStatsRequest:
		ps, err := m.br.PortStats(msg.PortNo)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.PortStatsReply{Stats: ps})
		return nil
	case *ofp.QueueStatsRequest:
		qs, err := m.br.QueueStats(msg.PortNo, msg.QueueID)
		if err != nil {
			return err
		}
		m.reply(c, h.Xid, &ofp.QueueStatsReply{Stats: qs})
		return nil
	case *ofp.TableStatsRequest:
		m.reply(c, h.Xid, &ofp.TableStatsReply{Tables: m.br.TableStats()})
		return nil
	case *ofp.TableFeaturesRequest:
		if len(msg.Tables) > 0 {
			s, ok := m.br.(TableFeaturesSetter)
			if !ok {
				return ofperr.OFPTFFC_EPERM
			}
			if err := s.SetTableFeatures(msg.Tables); err != nil {
				return err
			}
		}
		m.reply(c, h.Xid, &ofp.TableFeaturesReply{Tables: m.br.TableFeatures()})
		return nil
	case *ofp.TableDescRequest:
		m.reply(c, h.Xid, &ofp.TableDescReply{Tables: m.br.TableDescs()})
		return nil

	case *ofp.SetAsync:
		ac, err := msg.Apply(c.asyncConfig(), c.version, false)
		if err != nil {
			return err
		}
		c.setAsyncConfig(ac)
		if c.typ == Service && c.state.missSendLen == 0 {
			c.state.missSendLen = defaultMissSendLen
		}
		return nil
	case *ofp.GetAsyncRequest:
		m.reply(c, h.Xid, &ofp.GetAsyncReply{Config: c.asyncConfig()})
		return nil
	case *ofp.SetFlowFormat:
		c.state.flowFormat = msg.Format
		return nil
	case *ofp.FlowModTableID:
		c.state.flowModTableID = msg.Set
		return nil
	case *ofp.SetPacketInFormat:
		c.state.pinFormat = uint8(msg.Format)
		return nil
	case *ofp.SetControllerID:
		c.state.controller = msg.ID
		return nil
	case *ofp.FlowAge:
		return nil // nothing to do, as in Open vSwitch

	case *ofp.TLVTableMod:
		if err := rejectSlave(c); err != nil {
			return err
		}
		return m.br.TLVTableMod(msg)
	case *ofp.TLVTableRequest:
		r := m.br.TLVTable()
		m.reply(c, h.Xid, &r)
		return nil
	case *ofp.CTFlushZone:
		return m.br.CTFlushZone(msg.Zone)
	case *ofp.CTFlush:
		if f, ok := m.br.(CTFlusher); ok {
			return f.CTFlush(msg)
		}
		return ofperr.OFPBRC_BAD_TYPE

	case *ofp.BundleControl:
		return m.bundleControl(c, h, msg, b)
	case *ofp.BundleAdd:
		return m.bundleAddMessage(c, h, msg, b)

	case *ofp.FlowMonitorRequest:
		return m.flowMonitorRequest(c, h, msg)
	case *ofp.FlowMonitorCancel:
		return m.flowMonitorCancel(c, msg.ID)
	}
	if h.Type == statsRequestType(h.Version) {
		return ofperr.OFPBRC_BAD_STAT
	}
	return ofperr.OFPBRC_BAD_TYPE
}

// statsRequestType is OFPT_STATS_REQUEST / OFPT_MULTIPART_REQUEST.
func statsRequestType(v uint8) uint8 {
	switch v {
	case OF10:
		return 16
	case OF11:
		return 18
	}
	return 18
}

// fixFlowModTable: an OpenFlow 1.0 or Nicira flow mod names a table (the
// command's high byte) only when NXT_FLOW_MOD_TABLE_ID enabled it on the
// connection; otherwise the byte is ignored, as Open vSwitch does.
func (m *Manager) fixFlowModTable(c *ofconn, fm *ofp.FlowMod) {
	if (c.version == OF10 || fm.NX) && !c.state.flowModTableID {
		if fm.TableID != ofp.TableAll && fm.TableID != 0 {
			m.log.Warn(fmt.Sprintf("%s: flow_mod has explicit table_id but flow_mod_table_id extension is not enabled", c.name))
		}
		fm.TableID = ofp.TableAll
	}
}

// setConfig is handle_set_config.
func (m *Manager) setConfig(c *ofconn, sc *ofp.SetConfig) error {
	valid := ofp.FragMask
	if c.version < OF13 {
		valid |= ofp.ConfigInvalidTTLToController
	}
	if sc.Flags&^valid != 0 {
		return ofperr.OFPSCFC_BAD_FLAGS
	}
	if c.typ != Primary || c.state.role != RoleSlave {
		if next := sc.Flags & ofp.FragMask; next != m.br.FragHandling() {
			if err := m.br.SetFragHandling(next); err != nil {
				m.log.Warn(fmt.Sprintf("%s: unsupported fragment handling mode %s", m.name, fragName(next)))
			}
		}
	}
	if c.version < OF13 {
		ac := c.asyncConfig()
		if sc.Flags&ofp.ConfigInvalidTTLToController != 0 {
			ac.Primary[AsyncPacketIn] |= 1 << ReasonInvalidTTL
		} else {
			ac.Primary[AsyncPacketIn] &^= 1 << ReasonInvalidTTL
		}
		c.setAsyncConfig(ac)
	}
	c.state.missSendLen = int(sc.MissSendLen)
	return nil
}

func fragName(mode uint16) string {
	switch mode {
	case ofp.FragNormal:
		return "normal"
	case ofp.FragDrop:
		return "drop"
	case ofp.FragReasm:
		return "reassemble"
	case ofp.FragNxMatch:
		return "nx-match"
	}
	return fmt.Sprint(mode)
}

// roleRequest is handle_role_request with Open vSwitch's generation id
// check (a master or slave request older than the last one is stale).
func (m *Manager) roleRequest(c *ofconn, h *ofp.Header, rr *ofp.RoleRequest) error {
	role := Role(rr.Role)
	if role != RoleNoChange {
		haveGen := !rr.NX && role != RoleEqual
		if haveGen {
			if m.roleGenSet && int64(rr.GenerationID-m.roleGenID) < 0 {
				return ofperr.OFPRRFC_STALE
			}
			m.roleGenID, m.roleGenSet = rr.GenerationID, true
		}
		m.setRole(c, role)
	}
	reply := ofp.RoleReply{NX: rr.NX, Role: uint32(c.state.role), GenerationID: ^uint64(0)}
	if m.roleGenSet {
		reply.GenerationID = m.roleGenID
	}
	m.reply(c, h.Xid, &reply)
	return nil
}

// setRole is ofconn_set_role: a new master demotes the old one to slave
// and tells it (ROLE_STATUS, OpenFlow 1.3 and later).
func (m *Manager) setRole(c *ofconn, role Role) {
	if role != c.state.role && role == RoleMaster {
		for _, o := range m.conns {
			if o.state.role == RoleMaster {
				o.state.role = RoleSlave
				m.sendRoleStatus(o, RoleSlave, ofp.RoleReasonPrimaryRequest)
			}
		}
	}
	if c.state.role != role && c.svc.active {
		defer m.notify()
	}
	c.state.role = role
}

func (m *Manager) sendRoleStatus(c *ofconn, role Role, reason uint8) {
	if c.version < OF13 {
		return
	}
	rs := &ofp.RoleStatus{Role: uint32(role), Reason: reason, GenerationID: ^uint64(0)}
	if m.roleGenSet {
		rs.GenerationID = m.roleGenID
	}
	b, err := ofp.Encode(c.version, 0, rs)
	if err != nil {
		m.log.Error(fmt.Sprintf("%s: cannot encode role status: %v", c.name, err))
		return
	}
	c.send(b)
}

// portsNamed is the description of port no, if there is one.
func portsNamed(ports []ofp.Port, no uint32) []ofp.Port {
	for i := range ports {
		if ports[i].PortNo == no {
			return ports[i : i+1]
		}
	}
	return nil
}

// Switch capabilities as Bridge.Features reports them: Open vSwitch's
// version-independent OFPUTIL_C_* bits, which FEATURES_REPLY encodes per
// version (wireCapabilities). The Manager adds CapBundles itself: it
// implements bundles.
const (
	CapFlowStats      uint32 = 1 << 0
	CapTableStats     uint32 = 1 << 1
	CapPortStats      uint32 = 1 << 2
	CapSTP            uint32 = 1 << 3 // OpenFlow 1.0 only
	CapGroupStats     uint32 = 1 << 4 // 1.1+ (sent as bit 3)
	CapIPReasm        uint32 = 1 << 5
	CapQueueStats     uint32 = 1 << 6
	CapARPMatchIP     uint32 = 1 << 7 // 1.0 and 1.1
	CapPortBlocked    uint32 = 1 << 8 // 1.2+
	CapBundles        uint32 = 1 << 9 // 1.4+
	CapFlowMonitoring uint32 = 1 << 10
)

// wireCapabilities is ofputil_encode_switch_features's capabilities: the
// bits the version has (ofputil_capabilities_mask), STP at its 1.0 bit,
// group statistics at bit 3 from 1.1 on.
func wireCapabilities(c uint32, v uint8) uint32 {
	common := CapFlowStats | CapTableStats | CapPortStats | CapIPReasm | CapQueueStats
	var mask uint32
	switch {
	case v <= OF11:
		mask = common | CapARPMatchIP
	case v <= OF13:
		mask = common | CapPortBlocked
	default:
		mask = common | CapPortBlocked | CapBundles | CapFlowMonitoring
	}
	w := c & mask
	switch {
	case v == OF10 && c&CapSTP != 0:
		w |= 1 << 3
	case v >= OF11 && c&CapGroupStats != 0:
		w |= 1 << 3
	}
	return w
}
