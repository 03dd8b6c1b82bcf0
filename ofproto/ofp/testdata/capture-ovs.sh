#!/bin/sh
# Records what Debian's ovs-ofctl and ovs-vswitchd (--enable-dummy, no kernel,
# everything under a temporary directory) exchange, for ovs-switch.txt.
# Usage: sh capture-ovs.sh > /tmp/capture.txt (then convert: see corpus_test.go).
set -e
D=$(mktemp -d)
export OVS_RUNDIR=$D OVS_LOGDIR=$D OVS_DBDIR=$D OVS_SYSCONFDIR=$D
ovsdb-tool create $D/conf.db /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server --detach --no-chdir --pidfile=$D/ovsdb-server.pid --log-file=$D/ovsdb-server.log --remote=punix:$D/db.sock $D/conf.db
ovs-vswitchd --detach --no-chdir --pidfile=$D/ovs-vswitchd.pid --log-file=$D/ovs-vswitchd.log \
    --enable-dummy --disable-system --disable-system-route unix:$D/db.sock
ovs-vsctl --db=unix:$D/db.sock -- add-br br0 -- set bridge br0 datapath_type=dummy \
    other-config:datapath-id=fedcba9876543210 -- add-port br0 p1 -- set interface p1 type=dummy ofport_request=1
sleep 1
cat > $D/proxy.py <<'PY'
import socket, os, sys, threading, struct
listen, target, out = sys.argv[1], sys.argv[2], sys.argv[3]
if os.path.exists(listen): os.unlink(listen)
srv = socket.socket(socket.AF_UNIX); srv.bind(listen); srv.listen(16)
lock = threading.Lock()
f = open(out, 'a')
def readmsg(s):
    h = b''
    while len(h) < 8:
        c = s.recv(8 - len(h))
        if not c: return None
        h += c
    n = struct.unpack('!H', h[2:4])[0]
    b = h
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: return None
        b += c
    return b
def pump(a, b, tag):
    while True:
        m = readmsg(a)
        if m is None:
            try: b.shutdown(socket.SHUT_WR)
            except: pass
            return
        with lock:
            f.write('%s\t%s\n' % (tag, m.hex())); f.flush()
        b.sendall(m)
while True:
    c, _ = srv.accept()
    u = socket.socket(socket.AF_UNIX); u.connect(target)
    threading.Thread(target=pump, args=(c, u, 'C'), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, 'S'), daemon=True).start()
PY
python3 $D/proxy.py $D/proxy.sock $D/br0.mgmt $D/capture.txt & PROXY=$!
sleep 0.5
P=unix:$D/proxy.sock
run() { echo "### $*" >> $D/capture.txt; timeout 10 ovs-ofctl "$@" > /dev/null || true; }
for v in 10 11 12 13 14 15; do run -O OpenFlow$v show $P; run -O OpenFlow$v dump-desc $P; run -O OpenFlow$v get-frags $P; done
for v in 13 14 15; do run -O OpenFlow$v dump-table-features $P; run -O OpenFlow$v meter-features $P; run -O OpenFlow$v dump-group-features $P; run -O OpenFlow$v dump-tables $P; done
run -O OpenFlow10 dump-tables $P; run -O OpenFlow14 dump-table-desc $P
for v in 10 13 15; do run -O OpenFlow$v dump-ports $P; run -O OpenFlow$v dump-ports-desc $P; done
run -O OpenFlow15 add-flow $P "table=0,priority=100,in_port=1,ip,nw_src=10.0.0.0/8,tcp,tp_dst=80,actions=ct(commit,zone=5),resubmit(,1)"
run -O OpenFlow15 add-flow $P "table=1,priority=10,reg0=0x5/0xff,metadata=0x3,actions=set_field:0x7->reg1,controller(userdata=01.02,pause),output:1"
run -O OpenFlow13 add-flow $P "table=2,cookie=0x55,idle_timeout=30,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop"
run -O OpenFlow10 add-flow $P "table=0,priority=5,arp,actions=NORMAL"
run -O OpenFlow15 add-group $P "group_id=1,type=select,selection_method=dp_hash,bucket=weight:10,actions=output:1,bucket=weight:20,actions=output:LOCAL"
run -O OpenFlow13 add-group $P "group_id=2,type=all,bucket=actions=output:1"
run -O OpenFlow15 add-meter $P "meter=1,pktps,burst,stats,bands=type=drop,rate=100,burst_size=10"
run -O OpenFlow13 add-tlv-map $P "{class=0x102,type=0x80,len=4}->tun_metadata0"
for v in 10 11 12 13 14 15; do run -O OpenFlow$v dump-flows $P; run -O OpenFlow$v dump-aggregate $P; done
for v in 11 13 15; do run -O OpenFlow$v dump-groups $P; run -O OpenFlow$v dump-group-stats $P; done
for v in 13 15; do run -O OpenFlow$v dump-meters $P; run -O OpenFlow$v meter-stats $P; done
run -O OpenFlow15 dump-tlv-map $P
run -O OpenFlow13 --bundle add-flow $P "table=3,actions=drop"
run -O OpenFlow14 --bundle add-flow $P "table=4,actions=drop"
run -O OpenFlow15 mod-port $P p1 down; run -O OpenFlow13 mod-port $P p1 up
run -O OpenFlow15 packet-out $P "in_port=LOCAL packet=505400000005505400000006080045000028000000000006f97cc0a80002c0a800010000000000000000000000005000000000000000 actions=output:1"
run -O OpenFlow10 queue-stats $P; run -O OpenFlow13 queue-get-config $P 1
run -O OpenFlow13 del-flows $P "table=2"; run -O OpenFlow15 del-groups $P; run -O OpenFlow15 del-meters $P
run -O OpenFlow11 dump-tables $P; run -O OpenFlow12 dump-tables $P
kill $PROXY
ovs-appctl -t $D/ovs-vswitchd.$(cat $D/ovs-vswitchd.pid).ctl exit --cleanup
ovs-appctl -t $D/ovsdb-server.$(cat $D/ovsdb-server.pid).ctl exit
cat $D/capture.txt
rm -rf $D
