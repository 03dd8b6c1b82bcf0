"""Drives the Open vSwitch Python IDL through a reconnect and prints a
deterministic transcript: the last transaction id the IDL keeps (all zeros
or not), and which rows the server sends again after the reconnect (the
full state when the server keeps no history, as Open vSwitch for a
standalone database; only the changes if it resumed). The Go test runs it
against both servers and compares. Usage: idl_reconnect.py REMOTE SCHEMA"""

import sys
import time
import uuid

import os

import ovs.db.idl
import ovs.poller
import ovs.stream

REMOTE, SCHEMA = sys.argv[1], sys.argv[2]
if REMOTE.startswith("ssl:"):
    # One self-signed certificate is key pair and CA for both ends.
    ovs.stream.Stream.ssl_set_private_key_file(os.environ["IDL_SSL_KEY"])
    ovs.stream.Stream.ssl_set_certificate_file(os.environ["IDL_SSL_CERT"])
    ovs.stream.Stream.ssl_set_ca_cert_file(os.environ["IDL_SSL_CERT"])
WAIT_SECONDS = 10
ZERO = str(uuid.UUID(int=0))


class RecordingIdl(ovs.db.idl.Idl):
    """Records the Bridge rows the server (re)sends as created."""

    def __init__(self, *args):
        super().__init__(*args)
        self.created = []

    def notify(self, event, row, updates=None):
        if event == ovs.db.idl.ROW_CREATE and row._table.name == "Bridge":
            self.created.append(row.name)


def new_idl():
    helper = ovs.db.idl.SchemaHelper(location=SCHEMA)
    helper.register_all()
    return RecordingIdl(REMOTE, helper)


def run_until(idl, pred, what):
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


def bridges(idl):
    return sorted(b.name for b in idl.tables["Bridge"].rows.values())


def commit(idl, who, build):
    txn = ovs.db.idl.Transaction(idl)
    build(txn)
    print("%s: commit %s" % (who, txn.commit_block()))


def add_bridge(idl, name):
    def build(txn):
        br = txn.insert(idl.tables["Bridge"])
        br.name = name
        root = next(iter(idl.tables["Open_vSwitch"].rows.values()))
        root.bridges = list(root.bridges) + [br]
    return build


def main():
    one = new_idl()
    run_until(one, one.has_ever_connected, "initial sync")
    def init(txn):
        txn.insert(one.tables["Open_vSwitch"]).external_ids = {"test": "idl_reconnect"}
    commit(one, "one init", init)
    run_until(one, lambda: len(one.tables["Open_vSwitch"].rows) == 1, "Open_vSwitch row")
    commit(one, "one add br-a", add_bridge(one, "br-a"))
    run_until(one, lambda: "br-a" in bridges(one), "br-a")
    print("one: last_id all zeros: %s" % (one.last_id == ZERO))

    two = new_idl()
    run_until(two, two.has_ever_connected, "second IDL sync")
    one.created = []
    seqno = one.change_seqno
    one.force_reconnect()
    commit(two, "two add br-b (while one reconnects)", add_bridge(two, "br-b"))
    run_until(one, lambda: "br-b" in bridges(one) and one.change_seqno != seqno, "br-b after reconnect")
    print("one after reconnect: bridges=%s" % bridges(one))
    print("one after reconnect: rows sent as new=%s" % sorted(one.created))
    print("one after reconnect: last_id all zeros: %s" % (one.last_id == ZERO))
    one.close()
    two.close()


if __name__ == "__main__":
    main()
