package ofproto

import (
	"encoding/binary"
	"sync"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// Table mod, as Open vSwitch 3.1's table_mod: OpenFlow 1.1 and 1.2 set a
// table's miss behaviour (1.3 and later leave it); 1.4 and later turn
// eviction and vacancy events on or off and set the vacancy thresholds,
// which TABLE_DESC reports. gvs keeps the settings but neither evicts
// (tables have no size limit: vacancy is always 100%) nor sends
// TABLE_STATUS.

// evictionFlags are the only eviction flags Open vSwitch supports and
// reports (OFPTMPEF14_OTHER|IMPORTANCE|LIFETIME).
const evictionFlags = 0x7

// OpenFlow 1.4 table config bits and table mod property types.
const (
	ofptc14Eviction      = 1 << 2
	ofptc14VacancyEvents = 1 << 3
	propEviction         = 2
	propVacancy          = 3
)

// tableConfigs are every table's eviction and vacancy settings. Written by
// table mods, read by TABLE_DESC; mu guards all.
type tableConfigs struct {
	mu     sync.Mutex
	tables [pipeline.NumTables]tableConfig
}

type tableConfig struct {
	eviction, vacancy  bool
	vacancyDown, vacUp uint8
}

// tableMod applies tm (OFPTMFC_BAD_TABLE for a table that does not
// exist, OFPTMFC_EPERM for the hidden internal table). Open vSwitch 3.1
// decodes an eviction property's flags into its eviction setting rather
// than its eviction flags (ofputil_decode_table_mod): flags 1 turn
// eviction on, 2 off, anything else (ovs-ofctl sends the 7 it read back
// from TABLE_DESC) leaves it, and no flags are ever refused
// (OFPTMFC_BAD_CONFIG never comes); gvs does the same so that ovs-ofctl
// mod-table leaves the same tables configured.
func (c *ConnBridge) tableMod(tm *ofp.TableMod) error {
	all := tm.TableID == pipeline.TableAll
	if !all && int(tm.TableID) >= pipeline.NumTables {
		return ofperr.OFPTMFC_BAD_TABLE
	}
	if !all && int(tm.TableID) == pipeline.NumTables-1 {
		return ofperr.OFPTMFC_EPERM
	}
	first, last := int(tm.TableID), int(tm.TableID)
	if all {
		first, last = 0, pipeline.NumTables-2
	}
	if miss, ok := tableMiss(tm); ok {
		for id := first; id <= last; id++ {
			if err := c.b.SetTableMiss(uint8(id), miss); err != nil {
				return ofperr.OFPTMFC_BAD_TABLE
			}
		}
	}
	if tm.Version < ofp.Version14 {
		return nil
	}
	c.tables.mu.Lock()
	defer c.tables.mu.Unlock()
	for id := first; id <= last; id++ {
		t := &c.tables.tables[id]
		switch {
		case !tm.HasEvictionFlags:
			t.eviction = tm.Config&ofptc14Eviction != 0
		case tm.EvictionFlags == 1:
			t.eviction = true
		case tm.EvictionFlags == 2:
			t.eviction = false
		}
		// Open vSwitch takes the thresholds from the message (zero
		// without a vacancy property) whether it turns events on or off.
		t.vacancy = tm.Config&ofptc14VacancyEvents != 0
		t.vacancyDown, t.vacUp = tm.VacancyDown, tm.VacancyUp
	}
	return nil
}

// tableMiss decodes a table mod's miss setting: only OpenFlow 1.1 and 1.2
// carry one (a config of 3 is controller, with Open vSwitch's warning
// left out).
func tableMiss(tm *ofp.TableMod) (xlate.TableMiss, bool) {
	if tm.Version != ofp.Version11 && tm.Version != ofp.Version12 {
		return xlate.MissDefault, false
	}
	switch tm.Config & 3 {
	case 1:
		return xlate.MissContinue, true
	case 2:
		return xlate.MissDrop, true
	default:
		return xlate.MissController, true
	}
}

// tableDesc is one table's TABLE_DESC entry: eviction always reported
// with its fixed flags, vacancy when events are on.
func (c *ConnBridge) tableDesc(id uint8) ofp.TableDesc {
	c.tables.mu.Lock()
	t := c.tables.tables[id]
	c.tables.mu.Unlock()
	td := ofp.TableDesc{TableID: id}
	if t.eviction {
		td.Config |= ofptc14Eviction
	}
	td.Props = append(td.Props, ofp.Prop{Type: propEviction, Body: binary.BigEndian.AppendUint32(nil, evictionFlags)})
	if t.vacancy {
		td.Config |= ofptc14VacancyEvents
		td.Props = append(td.Props, ofp.Prop{Type: propVacancy, Body: []byte{t.vacancyDown, t.vacUp, 100, 0}})
	}
	return td
}
