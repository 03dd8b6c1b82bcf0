"""Drives the Open vSwitch Python IDL against one OVSDB server and prints a
deterministic transcript; the Go test runs it against both servers and
compares transcripts. Usage: idl_check.py REMOTE SCHEMA_FILE"""

import sys
import time

import ovs.db.idl
import ovs.poller

REMOTE, SCHEMA = sys.argv[1], sys.argv[2]
WAIT_SECONDS = 10


def new_idl():
    helper = ovs.db.idl.SchemaHelper(location=SCHEMA)
    helper.register_all()
    return ovs.db.idl.Idl(REMOTE, helper)


def run_until(idl, pred, what):
    """Runs idl until pred() holds; exits with status 2 after WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        idl.run()
        if pred():
            return
        if time.monotonic() > deadline:
            print("TIMEOUT waiting for %s" % what)
            sys.exit(2)
        poller = ovs.poller.Poller()
        idl.wait(poller)
        poller.timer_wait(100)
        poller.block()


def rows(idl, table):
    return list(idl.tables[table].rows.values())


def root(idl):
    return rows(idl, "Open_vSwitch")[0]


def describe(idl, who):
    bridges = sorted(rows(idl, "Bridge"), key=lambda b: b.name)
    print("%s: open_vswitch rows=%d bridges=%s" % (
        who, len(rows(idl, "Open_vSwitch")),
        sorted(b.name for b in root(idl).bridges) if rows(idl, "Open_vSwitch") else None))
    for b in bridges:
        ports = sorted(b.ports, key=lambda p: p.name)
        print("  bridge %s other_config=%s external_ids=%s ports=%s" % (
            b.name, sorted(b.other_config.items()), sorted(b.external_ids.items()),
            [(p.name, sorted((i.name, i.type) for i in p.interfaces)) for p in ports]))


def commit(idl, who, build):
    txn = ovs.db.idl.Transaction(idl)
    txn.add_comment("idl_check: " + who)
    inserted = build(txn)
    status = txn.commit_block()
    print("%s: commit %s%s" % (who, status,
                               " error=" + str(txn.get_error()) if status == txn.ERROR else ""))
    if inserted is not None and status == txn.SUCCESS:
        print("%s: inserted row has a real uuid: %s" % (who, txn.get_insert_uuid(inserted.uuid) is not None))
    return status


def add_bridge(idl, name, other_config=None, verify=True, with_port=True):
    def build(txn):
        br = txn.insert(idl.tables["Bridge"])
        br.name = name
        if with_port:
            iface = txn.insert(idl.tables["Interface"])
            iface.name = name
            iface.type = "internal"
            port = txn.insert(idl.tables["Port"])
            port.name = name
            port.interfaces = [iface]
            br.ports = [port]
        br.other_config = other_config or {}
        ovs_row = root(idl)
        if verify:
            ovs_row.verify("bridges")
        ovs_row.bridges = list(ovs_row.bridges) + [br]
        return br
    return build


def bridge_names(idl):
    return sorted(b.name for b in rows(idl, "Bridge"))


def has_bridge(idl, name):
    return lambda: any(b.name == name for b in rows(idl, "Bridge"))


def main():
    one, two = new_idl(), new_idl()
    run_until(one, one.has_ever_connected, "first IDL initial sync")
    run_until(two, two.has_ever_connected, "second IDL initial sync")
    describe(one, "one after sync")

    def init(txn):
        row = txn.insert(one.tables["Open_vSwitch"])
        row.external_ids = {"system-id": "idl-check"}
    commit(one, "one init", init)
    run_until(two, lambda: len(rows(two, "Open_vSwitch")) == 1, "Open_vSwitch row in second IDL")

    commit(one, "one add br-py", add_bridge(one, "br-py", {"k": "v"}))
    run_until(two, has_bridge(two, "br-py"), "br-py in second IDL")
    describe(two, "two sees")

    # two changes Open_vSwitch.bridges while one has not caught up: one's
    # verify of that column must fail (try again), then succeed on retry.
    commit(two, "two add br-two", add_bridge(two, "br-two"))
    commit(one, "one add br-three (stale)", add_bridge(one, "br-three"))
    run_until(one, has_bridge(one, "br-two"), "br-two in first IDL")
    commit(one, "one add br-three (retry)", add_bridge(one, "br-three"))

    # A hard error: a second bridge named br-two breaks the name index (only
    # Bridge's: the server may check tables in any order).
    run_until(one, has_bridge(one, "br-three"), "br-three in first IDL")
    commit(one, "one add duplicate br-two", add_bridge(one, "br-two", verify=False, with_port=False))

    def update(txn):
        br = next(b for b in rows(one, "Bridge") if b.name == "br-py")
        br.setkey("external_ids", "owner", "idl")
        br.delkey("other_config", "k")
    commit(one, "one update br-py", update)

    def delete(txn):
        ovs_row = root(one)
        ovs_row.bridges = [b for b in ovs_row.bridges if b.name != "br-three"]
    commit(one, "one delete br-three", delete)
    run_until(two, lambda: not has_bridge(two, "br-three")() and any(
        b.external_ids.get("owner") == "idl" for b in rows(two, "Bridge")), "delete and update in second IDL")
    describe(two, "two finally sees")
    print("two: garbage-collected ports gone: %s" % (
        sorted(p.name for p in rows(two, "Port")) == ["br-py", "br-two"]))
    # A third IDL that replicates only some bridges: conditional monitoring
    # set before connecting, then changed (monitor_cond_change).
    three = new_idl()
    three.cond_change("Bridge", [["name", "==", "br-two"]])
    run_until(three, lambda: three.has_ever_connected() and bridge_names(three) == ["br-two"],
              "conditional sync of br-two")
    print("three (name == br-two) sees %s" % bridge_names(three))
    three.cond_change("Bridge", [["name", "!=", "br-two"]])
    run_until(three, lambda: bridge_names(three) == ["br-py"], "condition change to br-py")
    print("three (name != br-two) sees %s" % bridge_names(three))
    three.cond_change("Bridge", [])
    run_until(three, lambda: bridge_names(three) == [], "condition change to nothing")
    print("three (false) sees %s" % bridge_names(three))
    one.close()
    two.close()
    three.close()


if __name__ == "__main__":
    main()
