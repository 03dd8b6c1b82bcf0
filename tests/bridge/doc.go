// Package bridge holds gvs's end-to-end tests of the switch: the real
// Debian ovs-vsctl (never --no-wait) configures gvs-vswitchd, and traffic
// flows between network namespaces joined by veth pairs (198.18.0.0/15,
// names prefixed "gvbe", everything removed afterwards). Each scenario
// runs with the database embedded in gvs-vswitchd, in Debian's
// ovsdb-server and in gvs-ovsdb-server (each run privately in a temporary
// directory). The tests need root (namespaces, veths, tap devices) and
// skip, saying why, without it or without the tools. GVS_E2E_RACE=1 builds
// the daemons with -race; they run detached, so set GORACE=log_path=FILE
// to keep their reports.
package bridge
